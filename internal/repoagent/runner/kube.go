package runner

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/zero-dev/zero/internal/repoagent/policy"
)

// A KubeCheck is one check to run as a Kubernetes Job: the design of
// docs/scale-out.md. Zero generates the manifest; it runs no cluster.
type KubeCheck struct {
	Name    string        // the Job's name: a DNS-1123 label
	Image   string        // the image the operator names
	Argv    []string      // the check
	Limits  policy.Limits // its limits (pids are the kubelet's podPidsLimit, not the Job's)
	Timeout time.Duration // the check's timeout: the Job's active deadline
	WorkMiB int           // the size of the work folder (an emptyDir)
}

var (
	labelRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`) })
	imageRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$`) })
)

// KubeManifest returns c as two Kubernetes objects in one YAML stream: a
// Job whose pod has no service-account token, no service links, a
// non-root user, no capabilities, a read-only root filesystem, the
// check's resource limits and an emptyDir work folder; and a NetworkPolicy
// that denies the pod every connection in and out.
func KubeManifest(c KubeCheck) ([]byte, error) {
	switch {
	case !labelRE().MatchString(c.Name):
		return nil, fmt.Errorf("kube: job name %q: want a DNS-1123 label", c.Name)
	case !imageRE().MatchString(c.Image):
		return nil, fmt.Errorf("kube: image %q: want a registry reference, without spaces", c.Image)
	case len(c.Argv) == 0:
		return nil, fmt.Errorf("kube: an empty check")
	case c.Timeout <= 0 || c.Limits.MemoryMiB <= 0 || c.Limits.CPUPercent <= 0 || c.WorkMiB <= 0:
		return nil, fmt.Errorf("kube: a check needs a timeout, memory and CPU limits and a work folder size")
	}
	resources := map[string]string{"memory": strconv.Itoa(c.Limits.MemoryMiB) + "Mi", "cpu": strconv.Itoa(c.Limits.CPUPercent*10) + "m"}
	labels := map[string]string{"app.kubernetes.io/managed-by": "zero-agent", "zero.dev/check": c.Name}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": c.Name, "labels": labels},
		"spec": map[string]any{
			"backoffLimit":            0,
			"activeDeadlineSeconds":   int(c.Timeout / time.Second),
			"ttlSecondsAfterFinished": 600,
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"restartPolicy":                "Never",
					"automountServiceAccountToken": false,
					"enableServiceLinks":           false,
					"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 65534, "runAsGroup": 65534,
						"seccompProfile": map[string]any{"type": "RuntimeDefault"}},
					"containers": []any{map[string]any{
						"name":       "check",
						"image":      c.Image,
						"command":    c.Argv,
						"workingDir": "/work",
						"resources":  map[string]any{"limits": resources, "requests": resources},
						"securityContext": map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
							"capabilities": map[string]any{"drop": []string{"ALL"}}},
						"volumeMounts": []any{
							map[string]any{"name": "work", "mountPath": "/work"},
							map[string]any{"name": "tmp", "mountPath": "/tmp"},
						},
					}},
					"volumes": []any{
						map[string]any{"name": "work", "emptyDir": map[string]any{"sizeLimit": strconv.Itoa(c.WorkMiB) + "Mi"}},
						map[string]any{"name": "tmp", "emptyDir": map[string]any{"sizeLimit": "256Mi"}},
					},
				},
			},
		},
	}
	deny := map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "NetworkPolicy",
		"metadata":   map[string]any{"name": c.Name + "-deny-all", "labels": labels},
		"spec": map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]string{"zero.dev/check": c.Name}},
			"policyTypes": []string{"Ingress", "Egress"},
		},
	}
	var out bytes.Buffer
	for i, doc := range []any{job, deny} {
		if i > 0 {
			out.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&out)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
		enc.Close()
	}
	return []byte(strings.TrimSpace(out.String()) + "\n"), nil
}
