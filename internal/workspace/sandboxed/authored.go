package sandboxed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/plugin/host"
	"github.com/zero-dev/zero/internal/sandbox"
	"github.com/zero-dev/zero/internal/workspace/endpoint"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// PluginsDir is the folder of the workspace where the model writes its
// plugins, one folder each: plugins/NAME/plugin.json and its entry.
const PluginsDir = "plugins"

// MaxEntry bounds a model-authored plugin's entry file.
const MaxEntry = 1 << 20

// MaxPluginText bounds the text of a model-authored plugin's result.
const MaxPluginText = 256 << 10

// An Authored plugin is one the model wrote, as read now.
type Authored struct {
	Name     string // its folder's name, which is its manifest's name
	Manifest *plugin.Manifest
	// Hash is the SHA-256 of its plugin.json and entry file as read
	// (FilesHash): what an approval of its tools holds for.
	Hash string
}

// A Refusal is a plugin folder that is not offered, and why.
type Refusal struct {
	Plugin string // the folder's name
	Reason string
}

// Authored reads the plugins under plugins/ in the workspace, through an
// os.Root of it (no link leads out), in name order: those whose manifest
// Parse accepts, with their hash, and the others with the reason.
func (b *Toolbox) Authored() ([]Authored, []Refusal) {
	root, err := os.OpenRoot(b.o.Workspace)
	if err != nil {
		return nil, []Refusal{{Plugin: "", Reason: fmt.Sprintf("the workspace: %v", err)}}
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), PluginsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Refusal{{Plugin: "", Reason: fmt.Sprintf("%s: %v", PluginsDir, err)}}
	}
	var ok []Authored
	var refused []Refusal
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		a, err := readAuthored(root, e.Name())
		if err != nil {
			refused = append(refused, Refusal{Plugin: e.Name(), Reason: err.Error()})
			continue
		}
		ok = append(ok, a)
	}
	return ok, refused
}

// readAuthored reads plugins/name: its manifest, parsed, and its entry,
// both regular files within their bounds.
func readAuthored(root *os.Root, name string) (Authored, error) {
	m, manifest, entry, err := pluginFiles(root, name)
	if err != nil {
		return Authored{}, err
	}
	return Authored{Name: name, Manifest: m, Hash: FilesHash(manifest, m.Zero.Entry, entry)}, nil
}

// pluginFiles reads and checks plugins/name's manifest and entry.
func pluginFiles(root *os.Root, name string) (m *plugin.Manifest, manifest, entry []byte, err error) {
	if p := plugin.NameProblem(name); p != "" {
		return nil, nil, nil, fmt.Errorf("the folder's name: %s", p)
	}
	dir := path.Join(PluginsDir, name)
	manifest, err = readRegular(root, path.Join(dir, plugin.ManifestFile), plugin.MaxManifest)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err = plugin.Parse(manifest)
	switch {
	case err != nil:
		return nil, nil, nil, err
	case m.Zero == nil:
		return nil, nil, nil, fmt.Errorf("%s has no extensions[%q] part: no tools", plugin.ManifestFile, plugin.ExtensionKey)
	case m.Name != name:
		return nil, nil, nil, fmt.Errorf("the manifest's name %q is not its folder's, %q", m.Name, name)
	}
	entry, err = readRegular(root, path.Join(dir, m.Zero.Entry), MaxEntry)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, manifest, entry, nil
}

// readRegular reads the regular file name (not a link), of at most max
// bytes.
func readRegular(root *os.Root, name string, max int64) ([]byte, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, over %d", name, fi.Size(), max)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", name, max)
	}
	return b, nil
}

// FilesHash is a model-authored plugin's hash: "sha256:" and the hex
// SHA-256 of its plugin.json and its entry file (named entry), each
// length-prefixed, under a version line.
func FilesHash(manifest []byte, entryName string, entry []byte) string {
	h := sha256.New()
	h.Write([]byte("zero-model-authored-plugin-v1\n"))
	for _, part := range [][]byte{manifest, []byte(entryName), entry} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":"))
		h.Write(part)
		h.Write([]byte("\n"))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// tools are a's tools as a sandboxed thread is offered them.
func (a Authored) tools(backend string) []threads.Tool {
	var out []threads.Tool
	for i := range a.Manifest.Zero.Tools {
		t := &a.Manifest.Zero.Tools[i]
		schema, err := t.InputSchema()
		if err != nil {
			continue // Parse checked the parameters: not reached
		}
		name := a.Name + endpoint.Separator + t.Name
		out = append(out, threads.Tool{
			Name: name, Server: a.Name, Description: t.Description, InputSchema: schema, Hints: threads.HintsOf(nil),
			Ref: threads.ToolRef{Sandbox: true, Tool: name, Hash: a.Hash, Fingerprint: backend},
		})
	}
	return out
}

// callAuthored runs one call of a model-authored plugin's tool in a fresh
// guest: node runs Zero's host.js on the plugin's folder in a scratch copy
// of the workspace, with no secrets and no network, whatever the manifest
// asks, and is sent initialize then tools/call on stdin.
func (b *Toolbox) callAuthored(ctx context.Context, t threads.Tool, name, tool string, args json.RawMessage, c *Call) (threads.Result, error) {
	root, err := os.OpenRoot(b.o.Workspace)
	if err != nil {
		return threads.Result{}, fmt.Errorf("the workspace: %w", err)
	}
	a, err := readAuthored(root, name)
	root.Close()
	if err != nil {
		return threads.Result{}, fmt.Errorf("%w: plugin %s: %v", errRefused, name, err)
	}
	i := slices.IndexFunc(a.Manifest.Zero.Tools, func(x plugin.Tool) bool { return x.Name == tool })
	backend := string(b.o.Runner.Backend())
	if i < 0 || !t.Ref.Sandbox || t.Ref.Hash != a.Hash || t.Ref.Fingerprint != backend {
		return threads.Result{}, fmt.Errorf("%w: %s is not offered with that hash and backend (the plugin's files changed, or the backend)", errRefused, t.Name)
	}
	if err := checkArguments(&a.Manifest.Zero.Tools[i], args); err != nil {
		c.Outcome = threads.OutcomeError
		return threads.Result{Text: err.Error(), IsError: true}, nil
	}
	g, done, err := b.pluginGuest(name, a.Manifest.Zero.Entry, tool, args)
	if err != nil {
		return threads.Result{}, err
	}
	defer done()
	r, err := b.o.Runner.Run(ctx, g)
	if err != nil {
		return threads.Result{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	res := pluginResult(r)
	c.Outcome = outcome(r)
	if c.Outcome == threads.OutcomeOK && res.IsError {
		c.Outcome = threads.OutcomeError
	}
	return res, nil
}

// checkArguments checks args against the tool's input schema, as a host
// thread's plugin call is: the plugin's code gets only what fits.
func checkArguments(t *plugin.Tool, args json.RawMessage) error {
	schema, err := t.InputSchema()
	if err != nil {
		return err
	}
	if err := plugin.CheckArguments(schema, args); err != nil {
		return fmt.Errorf("tool %s: %w", t.Name, err)
	}
	return nil
}

// hostConfig is host.js's configuration in a guest: no secrets, no socket.
var hostConfig = `{"secrets":[],"socket":"","workspace":"` + sandbox.WorkDir + `"}`

// pluginGuest is the guest of one call: host.js is written to a fresh
// folder of its own (done removes it) and shown read-only, with node.
func (b *Toolbox) pluginGuest(name, entry, tool string, args json.RawMessage) (sandbox.Guest, func(), error) {
	node, err := canonical(b.o.Node)
	if err != nil {
		return sandbox.Guest{}, nil, fmt.Errorf("node: %w", err)
	}
	dir, err := os.MkdirTemp("", "zero-plugin-host-")
	if err != nil {
		return sandbox.Guest{}, nil, fmt.Errorf("plugin host: %w", err)
	}
	done := func() { os.RemoveAll(dir) }
	hostFile, err := host.Install(dir)
	if err == nil {
		// Readable by the guest's user, whoever owns it.
		err = os.Chmod(hostFile, 0o444)
	}
	if err == nil {
		hostFile, err = canonical(hostFile)
	}
	if err != nil {
		done()
		return sandbox.Guest{}, nil, fmt.Errorf("plugin host: %w", err)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	params, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		done()
		return sandbox.Guest{}, nil, err
	}
	stdin := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"zero","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + string(params) + "}\n"
	return sandbox.Guest{
		Argv:      []string{node, hostFile, path.Join(sandbox.WorkDir, PluginsDir, name), entry, hostConfig},
		Workspace: b.o.Workspace,
		Copy:      true, // always: a call's writes end with its guest
		ReadOnly:  []string{hostFile, node},
		Stdin:     []byte(stdin),
		Limits:    b.o.Limits,
	}, done, nil
}

// pluginResult reads the answer to tools/call (id 2) from the host's
// stdout: its text contents, joined; a guest that ended without one is an
// error that says how it ended.
func pluginResult(r sandbox.Result) threads.Result {
	lines := bufio.NewScanner(bytes.NewReader(r.Stdout))
	lines.Buffer(nil, sandbox.MaxOutput)
	for lines.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(lines.Bytes(), &msg) != nil || string(msg.ID) != "2" {
			continue
		}
		if msg.Error != nil {
			return threads.Result{Text: "the plugin host refused the call: " + cut(msg.Error.Message, 4096), IsError: true}
		}
		if msg.Result == nil {
			break
		}
		var texts []string
		for _, c := range msg.Result.Content {
			if c.Type == "text" {
				texts = append(texts, c.Text)
			} else {
				texts = append(texts, "["+c.Type+" content left out]")
			}
		}
		return threads.Result{Text: cut(strings.Join(texts, "\n"), MaxPluginText), IsError: msg.Result.IsError}
	}
	how := fmt.Sprintf("exited with %d", r.ExitCode)
	switch {
	case r.TimedOut:
		how = "was stopped at its time limit"
	case r.MemoryKilled:
		how = "was stopped at its memory limit"
	}
	return threads.Result{Text: fmt.Sprintf("the plugin gave no answer: its guest %s; stderr: %s", how, cut(string(r.Stderr), 4096)), IsError: true}
}
