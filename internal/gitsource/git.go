// Package gitsource is Zero's one way to run git and to read a remote
// repository: [Run] runs git through the execution boundary with no system
// or global configuration, no hooks, no prompts and no credential helper
// (Agent Zero's runner uses it too); a [Source] resolves a repository and a
// ref to a full commit SHA, fetches exactly that commit, shallow and
// blobless, and reads the files of one folder, each checked by Zero
// against its git object id, from the commit's own id down.
package gitsource

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/spawn"
)

// DefaultTimeout bounds one git command run by [Run].
const DefaultTimeout = 2 * time.Minute

// Run runs git in dir (inside roots) through spawn, with stdin, the
// variables of extra added to the hardened environment, and args after
// the hardening options: no system or global configuration, no hooks, no
// prompts or askpass, no credential helper, no fsmonitor, no ext::
// transport. A non-zero exit is an error that ends with git's stderr.
func Run(ctx context.Context, roots *fsroot.Set, dir string, stdin []byte, extra map[string]string, args ...string) ([]byte, error) {
	out, _, err := run(ctx, roots, dir, stdin, extra, DefaultTimeout, 0, args...)
	return out, err
}

// run is Run with a timeout and a stdout limit (0: spawn's default), and
// git's stderr too.
func run(ctx context.Context, roots *fsroot.Set, dir string, stdin []byte, extra map[string]string, timeout time.Duration, limit int, args ...string) ([]byte, string, error) {
	env := map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0",
		"GIT_ASKPASS": "/bin/false", "SSH_ASKPASS": "/bin/false", "GIT_OPTIONAL_LOCKS": "0",
		"GIT_NO_LAZY_FETCH": "1", "GIT_LFS_SKIP_SMUDGE": "1",
	}
	for k, v := range extra {
		env[k] = v
	}
	argv := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "credential.helper=", "-c", "core.fsmonitor=false",
		"-c", "protocol.ext.allow=never", "-c", "submodule.recurse=false"}, args...)
	res, err := spawn.Run(ctx, spawn.Cmd{
		Program: "git", Args: argv, Dir: dir, Roots: roots, Stdin: stdin,
		Env: envscrub.Spec{Set: env}, Timeout: timeout, OutputLimit: limit,
	})
	if err != nil {
		return nil, "", err
	}
	stderr, cmd := tail(res.Stderr, 500), command(args)
	if res.TimedOut {
		return res.Stdout, stderr, fmt.Errorf("git %s: %w after %s", cmd, ErrTimeout, timeout)
	}
	if res.StdoutTruncated {
		return res.Stdout, stderr, fmt.Errorf("git %s: %w: its output went past %d bytes", cmd, ErrLimit, limit)
	}
	if res.ExitCode != 0 {
		return res.Stdout, stderr, &exitError{cmd: cmd, code: res.ExitCode, stderr: stderr}
	}
	return res.Stdout, stderr, nil
}

// An exitError is git's exit with a status other than 0.
type exitError struct {
	cmd    string // the git command, such as fetch
	code   int    // -1: killed by a signal
	stderr string // its end
}

func (e *exitError) Error() string {
	return fmt.Sprintf("git %s: exit %d: %s", e.cmd, e.code, e.stderr)
}

// command is the git command args run, past the -c options before it.
func command(args []string) string {
	for len(args) > 2 && args[0] == "-c" {
		args = args[2:]
	}
	return args[0]
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// AuthEnv gives git token for remote, an https URL, as an HTTP header
// through its environment, never on the command line, scoped to remote's
// origin: git sends it to no other. Nothing for an empty token or a
// remote that is not https.
func AuthEnv(remote, token string) map[string]string {
	u, err := url.Parse(remote)
	if token == "" || err != nil || u.Scheme != "https" || u.Host == "" {
		return nil
	}
	header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	return map[string]string{"GIT_CONFIG_COUNT": "1",
		"GIT_CONFIG_KEY_0": "http." + u.Scheme + "://" + u.Host + "/.extraHeader", "GIT_CONFIG_VALUE_0": header}
}

// hasControl reports whether s holds a control character or a space.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}
