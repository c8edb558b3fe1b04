package plugin

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/netguard"
)

// Limits' defaults (what a zero field means) and bounds.
const (
	DefaultTimeoutMS = 30_000
	DefaultMemoryMiB = 256
	DefaultProcesses = 32

	MinTimeoutMS = 100
	MaxTimeoutMS = 600_000 // ten minutes
	MinMemoryMiB = 64      // node alone needs about 40 MiB
	MaxMemoryMiB = 4096
	MinProcesses = 16 // node alone runs about a dozen threads
	MaxProcesses = 1024
)

// MaxPath is the longest path a capability may name, in bytes.
const MaxPath = 1024

// maxSecretName is the longest name a secret may have, in bytes.
const maxSecretName = 128

// ErrCapabilities reports capabilities that Zero refuses.
var ErrCapabilities = errors.New("invalid capabilities")

// Check reports whether c is valid, with an error wrapping [ErrCapabilities]
// that lists every problem. Parse checks every manifest's capabilities
// this way; code that builds a sandbox from capabilities it did not parse
// checks them again.
//
//   - fs.read and fs.write name paths relative to the thread workspace:
//     clean (as path.Clean writes them), not absolute, no "..", not empty
//     ("." is the whole workspace), not starting with "~", at most [MaxPath]
//     bytes, without ',' or '*' (which Node's permission flags read as a
//     separator and a wildcard), '\', control or invisible characters, or
//     spaces other than a plain one inside a name. A path is listed once,
//     in one of the two lists (fs.write allows reading).
//   - network.hosts are "host:port": a port from 1 to 65535, and a host in
//     the canonical form netguard gives it (lower-case ASCII, Punycode for
//     other scripts, an IPv4 address as a dotted quad, an IPv6 address in
//     brackets), a domain made of letters, digits and '-' between dots,
//     with no final dot. Nothing is looked up. A host is listed once.
//   - secrets are environment variable names of at most 128 bytes that
//     envscrub accepts for a secret (not one it refuses, nor one that
//     steers which code runs), neither NODE_* (they configure the node that
//     runs the host) nor ZERO_* (Zero's own). A name is listed once.
//   - limits are 0 (Zero's default) or within the bounds above.
func (c Capabilities) Check() error {
	if problems := c.problems(); len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCapabilities, strings.Join(problems, "; "))
	}
	return nil
}

// problems lists what Check refuses in c.
func (c Capabilities) problems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	paths := map[string]string{} // path to the list that names it
	for _, list := range []struct {
		name  string
		paths []string
	}{{"fs.read", c.FSRead}, {"fs.write", c.FSWrite}} {
		for _, p := range list.paths {
			if why := pathProblem(p); why != "" {
				bad("%s %s %s", list.name, quote(p), why)
				continue
			}
			switch other, dup := paths[p]; {
			case dup && other == list.name:
				bad("%s lists %s twice", list.name, quote(p))
			case dup:
				bad("%s is in both fs.read and fs.write: fs.write already allows reading, so list it there only", quote(p))
			}
			paths[p] = list.name
		}
	}
	hosts := map[string]bool{}
	for _, h := range c.NetworkHosts {
		if why := hostProblem(h); why != "" {
			bad("network.hosts %s %s", quote(h), why)
		} else if hosts[h] {
			bad("network.hosts lists %s twice", quote(h))
		}
		hosts[h] = true
	}
	secrets := map[string]bool{}
	for _, s := range c.Secrets {
		if why := secretProblem(s); why != "" {
			bad("secrets: %s", why)
		} else if secrets[s] {
			bad("secrets lists %s twice", quote(s))
		}
		secrets[s] = true
	}
	if l := c.Limits; l != nil {
		for _, b := range limitBounds(*l) {
			if b.value != 0 && (b.value < b.min || b.value > b.max) {
				bad("limits.%s is %d: want 0 (Zero's default, %d) or from %d to %d", b.key, b.value, b.def, b.min, b.max)
			}
		}
	}
	return out
}

// A bound is one limit's value, default and range.
type bound struct {
	key                  string
	value, def, min, max int
}

func limitBounds(l Limits) []bound {
	return []bound{
		{"timeout_ms", l.TimeoutMS, DefaultTimeoutMS, MinTimeoutMS, MaxTimeoutMS},
		{"memory_mib", l.MemoryMiB, DefaultMemoryMiB, MinMemoryMiB, MaxMemoryMiB},
		{"processes", l.Processes, DefaultProcesses, MinProcesses, MaxProcesses},
	}
}

// pathProblem returns why p cannot be a capability's path, or "".
func pathProblem(p string) string {
	switch {
	case p == "":
		return `is empty: write "." for the whole thread workspace`
	case len(p) > MaxPath:
		return fmt.Sprintf("is over %d bytes", MaxPath)
	case !utf8.ValidString(p):
		return "is not valid UTF-8"
	case strings.HasPrefix(p, "/"):
		return "is absolute: paths are relative to the thread workspace"
	case strings.HasPrefix(p, "~"):
		return "starts with ~, which is not your home folder here: paths are relative to the thread workspace"
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "leaves the thread workspace (..)"
	}
	for _, r := range p {
		switch {
		case r == ',':
			return "holds a comma, which Node's permission flags read as a separator between paths"
		case r == '*':
			return "holds *, which Node's permission flags read as a wildcard"
		case r == '\\':
			return `holds \: separate folders with /`
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return fmt.Sprintf("holds the control or invisible character U+%04X", r)
		case unicode.IsSpace(r) && r != ' ':
			return fmt.Sprintf("holds the space character U+%04X: only a plain space is allowed", r)
		}
	}
	if clean := path.Clean(p); clean != p {
		return "is not clean: write " + quote(clean)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if strings.TrimSpace(seg) != seg {
			return "has a name that starts or ends with a space (" + quote(seg) + ")"
		}
	}
	return ""
}

// hostProblem returns why hp cannot be a network.hosts entry, or "".
func hostProblem(hp string) string {
	if strings.Contains(hp, "://") {
		return "is a URL: write only host:port, for example api.example.com:443"
	}
	i := strings.LastIndexByte(hp, ':')
	if i < 0 {
		return "has no port: write host:port, for example api.example.com:443"
	}
	host, port := hp[:i], hp[i+1:]
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return "has the port " + quote(port) + ": want a number from 1 to 65535, without leading zeros"
	}
	if host == "" {
		return "has no host"
	}
	if !strings.HasPrefix(host, "[") && strings.Contains(host, ":") {
		return "is an IPv6 address without brackets: write " + quote("["+host+"]:"+port)
	}
	h, err := netguard.ParseHost(host)
	if err != nil {
		return "is not a valid host: " + strings.TrimPrefix(err.Error(), netguard.ErrHost.Error()+": ")
	}
	if h.String() != host {
		return "is not in canonical form: write " + quote(h.String()+":"+port)
	}
	if _, ok := h.Addr(); ok {
		return ""
	}
	if strings.HasSuffix(host, ".") {
		return "ends in a dot: write " + quote(strings.TrimSuffix(host, ".")+":"+port)
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return "is not a host name: a host name is labels of letters, digits and '-' between dots, without wildcards"
		}
	}
	return ""
}

// secretProblem returns why name cannot name a secret, or "".
func secretProblem(name string) string {
	if len(name) > maxSecretName {
		return quote(name) + fmt.Sprintf(" is over %d bytes", maxSecretName)
	}
	if err := envscrub.Check(name, ""); err != nil {
		return err.Error()
	}
	if why := envscrub.Steers(name); why != "" {
		return quote(name) + " " + why + ", and a secret's value is never shown to whoever approves the plugin"
	}
	upper := strings.ToUpper(name)
	if strings.HasPrefix(upper, "NODE_") {
		return quote(name) + ": NODE_* variables configure the node that runs the plugin's host"
	}
	if strings.HasPrefix(upper, "ZERO_") {
		return quote(name) + ": ZERO_* names are Zero's own"
	}
	return ""
}

// Beyond lists what c allows that outer does not, in the manifest's terms
// (`fs.read "notes"`, `network.hosts "a.example:443"`, `process`,
// `secrets "API_KEY"`, `limits.timeout_ms 60000`), or nothing when c lies
// within outer. A path lies within a path that is it or one of its
// folders ("." holds every path), and fs.write lies beyond fs.read; hosts
// and secrets lie within outer's only when outer lists them; limits are
// compared as they apply, zero fields taking the defaults. An update whose
// capabilities reach beyond the approved ones widens them.
func (c Capabilities) Beyond(outer Capabilities) []string {
	var out []string
	readable := slices.Concat(outer.FSRead, outer.FSWrite)
	for _, p := range c.FSRead {
		if !slices.ContainsFunc(readable, func(q string) bool { return holds(q, p) }) {
			out = append(out, "fs.read "+quote(p))
		}
	}
	for _, p := range c.FSWrite {
		if !slices.ContainsFunc(outer.FSWrite, func(q string) bool { return holds(q, p) }) {
			out = append(out, "fs.write "+quote(p))
		}
	}
	for _, h := range c.NetworkHosts {
		if !slices.Contains(outer.NetworkHosts, h) {
			out = append(out, "network.hosts "+quote(h))
		}
	}
	if c.Process && !outer.Process {
		out = append(out, "process")
	}
	for _, s := range c.Secrets {
		if !slices.Contains(outer.Secrets, s) {
			out = append(out, "secrets "+quote(s))
		}
	}
	inner, limits := limitBounds(c.EffectiveLimits()), limitBounds(outer.EffectiveLimits())
	for i, b := range inner {
		if b.value > limits[i].value {
			out = append(out, fmt.Sprintf("limits.%s %d", b.key, b.value))
		}
	}
	return out
}

// holds reports whether the clean relative path outer is inner or one of
// its folders, comparing whole names.
func holds(outer, inner string) bool {
	if outer == "." {
		return true
	}
	o, i := strings.Split(outer, "/"), strings.Split(inner, "/")
	return len(o) <= len(i) && slices.Equal(o, i[:len(o)])
}

// EffectiveLimits returns c's limits with Zero's defaults in place of zero
// fields.
func (c Capabilities) EffectiveLimits() Limits {
	var l Limits
	if c.Limits != nil {
		l = *c.Limits
	}
	return l.effective()
}

func (l Limits) effective() Limits {
	if l.TimeoutMS == 0 {
		l.TimeoutMS = DefaultTimeoutMS
	}
	if l.MemoryMiB == 0 {
		l.MemoryMiB = DefaultMemoryMiB
	}
	if l.Processes == 0 {
		l.Processes = DefaultProcesses
	}
	return l
}

// Timeout is the time one call may take, Zero's default for zero.
func (l Limits) Timeout() time.Duration {
	return time.Duration(l.effective().TimeoutMS) * time.Millisecond
}

// Words says, in plain words for the page where an owner approves a
// plugin, what c lets it do, one line each: "reads files under notes/",
// "reads and writes files under out/", "connects to api.example.com:443",
// "starts other programs", "receives the secret API_KEY". Capabilities
// that allow nothing say so in one line. Limits are not in it: see
// [Limits.Words].
func (c Capabilities) Words() []string {
	var out []string
	for _, p := range c.FSRead {
		out = append(out, "reads "+under(p))
	}
	for _, p := range c.FSWrite {
		out = append(out, "reads and writes "+under(p))
	}
	for _, h := range c.NetworkHosts {
		out = append(out, "connects to "+h)
	}
	if c.Process {
		out = append(out, "starts other programs")
	}
	for _, s := range c.Secrets {
		out = append(out, "receives the secret "+s)
	}
	if len(out) == 0 {
		out = append(out, "reads no files of the thread workspace, connects nowhere, starts no other programs and receives no secrets")
	}
	return out
}

// under words the files a path holds.
func under(p string) string {
	if p == "." {
		return "every file in the thread workspace"
	}
	return "files under " + p + "/"
}

// Words says the limits as they apply, zero fields taking Zero's
// defaults: "stops a call after 30 s", "at most 256 MiB of memory", "at
// most 32 processes and threads".
func (l Limits) Words() []string {
	l = l.effective()
	return []string{
		"stops a call after " + strconv.FormatFloat(float64(l.TimeoutMS)/1000, 'f', -1, 64) + " s",
		fmt.Sprintf("at most %d MiB of memory", l.MemoryMiB),
		fmt.Sprintf("at most %d processes and threads", l.Processes),
	}
}
