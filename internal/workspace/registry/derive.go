package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// Error codes of a derivation Zero refuses.
const (
	CodeBadChoice        = "bad_choice"             // no such package or remote, or both or neither named
	CodeUnsupported      = "unsupported_package"    // a package Zero cannot run as the entry asks
	CodeUnpinnedImage    = "unpinned_image"         // an oci image without a digest
	CodeInsecureRemote   = "insecure_remote"        // a remote over plain http
	CodeMissingInput     = "missing_required_input" // required inputs without a value
	CodeUndeclaredInput  = "undeclared_input"       // a value for an input the entry does not declare, or fixes
	CodeInvalidInput     = "invalid_input"          // a value its input refuses, or given as the wrong kind
	CodeSecretInArgument = "secret_in_argument"     // a secret would land on the command line or in the URL
	CodeMCPBUnsupported  = "mcpb_unsupported"       // a bundle that needs what Zero does not do (a uv install, user_config)
	CodeMCPBDownload     = "mcpb_download"          // the bundle could not be fetched
	CodeMCPBMismatch     = "mcpb_sha256_mismatch"   // the bundle's bytes are not the ones fileSha256 names
)

// A DeriveError is a derivation Zero refuses: Code says which refusal,
// Names the inputs concerned (missing_required_input and the like), and
// the message says why in words.
type DeriveError struct {
	Code  string
	Names []string
	Msg   string
}

func (e *DeriveError) Error() string { return e.Msg }

func refuse(code string, names []string, format string, args ...any) *DeriveError {
	return &DeriveError{Code: code, Names: names, Msg: fmt.Sprintf(format, args...)}
}

// A Choice is what a person picks of an entry: one package or one remote
// (by index), and the values of the inputs it declares, keyed as
// [Declared] lists them. Non-secret values and secret values come apart:
// a secret input's value in Inputs, or another's in Secrets, is refused.
type Choice struct {
	Name    string // the server's name in Zero; "" takes it from the entry's name
	Package *int
	Remote  *int
	// Digest pins an oci package whose entry names its image by tag only:
	// "sha256:" and 64 lower-case hex digits, which the owner adds.
	Digest  string
	Inputs  map[string]string
	Secrets map[string]string
}

// DeriveOptions are what a derivation needs of the workspace.
type DeriveOptions struct {
	// RegistryURL is the base URL of the registry the entry came from.
	RegistryURL string
	// Policy validates the derived configuration as a typed one is.
	Policy servers.Policy
	// Runtimes maps "npx", "uvx", "dnx", "docker", and "node" and
	// "python3" (for mcpb bundles), to the program that runs a package of
	// that kind; a missing one is the bare name. Tests point them at
	// test-built programs.
	Runtimes map[string]string
	// HTTP fetches an mcpb bundle: the workspace's netguard client.
	HTTP *http.Client
	// Home is $ZERO_HOME: a verified bundle is kept, and unpacked, under
	// Home/registry/mcpb.
	Home string
	// NoDownload derives without fetching a bundle (to show what Zero
	// would run): one not fetched yet gives a Draft with BundlePending.
	NoDownload bool
}

// MaxBundle bounds the bytes of an mcpb bundle.
const MaxBundle = 200 << 20

// A Draft is a server configuration Zero derived from a registry entry, to
// be saved as an ordinary disabled draft: reviewed, approved and tested as
// every other.
type Draft struct {
	// Config carries the registry reference (Config.Registry), so its
	// fingerprint covers the entry's exact bytes.
	Config  servers.Config
	Secrets servers.Secrets
	// PostInstallInstructions are the entry's and the package's, as text to
	// show; Zero never runs them.
	PostInstallInstructions []string
	// Bundle is the folder the verified mcpb bundle is unpacked in, which
	// the configuration runs from, or "".
	Bundle string
	// BundlePending: the bundle is not fetched yet (NoDownload), so the
	// command, which its manifest decides, is not known; Config has none.
	BundlePending bool
	// Inputs are the inputs the choice declares.
	Inputs []Declared
}

// A Declared input is one value a choice asks for, under the key a
// [Choice] gives it by:
//
//	env:NAME            an environment variable
//	header:NAME         a header
//	arg:FLAG            a named package argument (arg:--port)
//	arg:HINT            a positional one, by its valueHint (arg:#N, its
//	                    index, when it has none)
//	runtime-arg:...     the same for a runtime argument
//	KEY{VAR}            a variable of the input KEY (env:DB_URL{password})
//	url{VAR}            a variable of a remote's URL
type Declared struct {
	Key         string
	Description string
	Required    bool
	Secret      bool
	Fixed       bool // its value is the entry's; a person gives none
	Default     string
	Choices     []string
	Format      string
}

// Derive turns one entry into a draft: Zero derives the command,
// arguments, URL and headers itself, from the entry alone, never from a
// configuration a browser sends. A package runs pinned exactly:
//
//	npm    npx -y NAME@VERSION [package args]
//	pypi   uvx NAME==VERSION [package args]
//	nuget  dnx NAME@VERSION --yes [-- package args]
//	oci    docker run --rm -i [-e NAME]... IMAGE@sha256:DIGEST [package args]
//	mcpb   node|python3|BUNDLE/FILE [manifest args] [package args]
//
// npm, pypi and nuget packages only from their public registry (npx, uvx
// and dnx would fetch another package from there); an oci image only by
// digest (tag-only: unpinned_image, unless the choice adds the digest),
// without runtime arguments (they could mount host paths or grant
// privileges) and with no environment beyond its declared variables. An
// mcpb bundle is fetched through o.HTTP, checked against fileSha256, kept
// and unpacked under $ZERO_HOME/registry/mcpb, and run as its
// manifest.json says, within what [bundleConfig] allows. A package speaks
// stdio; one that serves HTTP itself is refused. A remote is a streamable-http (kind http) or sse
// server at an https URL.
//
// Declared environment variables and headers become the configuration's
// names; every value of one (secret or not: a configuration holds names
// only) goes in the draft's Secrets. Arguments' values and {variables} are
// substituted as text, from declared inputs only, never through a shell; a
// secret never goes on the command line or in the URL. Required inputs
// without a value are refused together (missing_required_input). The
// result passes o.Policy.Validate, as a typed configuration must.
func Derive(ctx context.Context, l Listed, c Choice, o DeriveOptions) (Draft, error) {
	if l.Status == statusDeleted {
		return Draft{}, fmt.Errorf("%s %s: %w", l.Entry.Name, l.Entry.Version, ErrDeleted)
	}
	d := &deriver{choice: c}
	draft, err := d.derive(ctx, l, o)
	if err != nil {
		return Draft{}, err
	}
	return draft, nil
}

// DeclaredInputs lists the inputs a choice of e asks for, as a form shows them
// (the choice's values are not looked at).
func DeclaredInputs(e *Entry, c Choice) ([]Declared, error) {
	d := &deriver{choice: Choice{Package: c.Package, Remote: c.Remote}, listing: true}
	if _, _, err := d.pick(e); err != nil {
		return nil, err
	}
	_, _, err := d.build(e, DeriveOptions{NoDownload: true})
	if err != nil {
		var de *DeriveError
		if !errors.As(err, &de) || (de.Code != CodeMissingInput && de.Code != CodeUnpinnedImage) {
			return nil, err
		}
	}
	return d.declared, nil
}

// deriver walks one choice of an entry, resolving inputs and noting what
// is missing or wrong.
type deriver struct {
	choice   Choice
	listing  bool // only listing the inputs
	declared []Declared
	used     map[string]bool // keys of values a derivation takes
	missing  []string
	problems []*DeriveError
}

func (d *deriver) derive(ctx context.Context, l Listed, o DeriveOptions) (Draft, error) {
	e := l.Entry
	cfg, sec, err := d.build(e, o)
	if err != nil {
		return Draft{}, err
	}
	draft := Draft{Inputs: d.declared}
	if e.PostInstallInstructions != "" {
		draft.PostInstallInstructions = append(draft.PostInstallInstructions, e.PostInstallInstructions)
	}
	if p, _, _ := d.pick(e); p != nil {
		if p.PostInstallInstructions != "" {
			draft.PostInstallInstructions = append(draft.PostInstallInstructions, p.PostInstallInstructions)
		}
		if p.RegistryType == "mcpb" {
			draft.Bundle = bundleDir(o.Home, p.FileSHA256)
			switch file := bundlePath(o.Home, p.FileSHA256); {
			case !o.NoDownload:
				if err := fetchBundle(ctx, o, p, file); err != nil {
					return Draft{}, err
				}
				if err := unpackBundle(file, draft.Bundle, defaultBundleLimits); err != nil {
					return Draft{}, err
				}
			case !isDir(draft.Bundle): // a preview, before any draft fetched it
				draft.BundlePending = true
				return draft, nil
			}
			if err := bundleConfig(&cfg, &sec, draft.Bundle, o); err != nil {
				return Draft{}, err
			}
		}
	}
	cfg.Name = d.choice.Name
	if cfg.Name == "" {
		cfg.Name = serverName(e.Name)
	}
	cfg.Registry = &servers.RegistryRef{URL: o.RegistryURL, Name: e.Name, Version: e.Version, EntrySHA256: l.SHA256}
	if err := o.Policy.Validate(&cfg, sec); err != nil {
		return Draft{}, fmt.Errorf("derived configuration: %w", err)
	}
	draft.Config, draft.Secrets = cfg, sec
	return draft, nil
}

// pick returns the chosen package or remote.
func (d *deriver) pick(e *Entry) (*Package, *Remote, error) {
	c := d.choice
	switch {
	case (c.Package == nil) == (c.Remote == nil):
		return nil, nil, refuse(CodeBadChoice, nil, "choose one package or one remote of %s", e.Name)
	case c.Package != nil && (*c.Package < 0 || *c.Package >= len(e.Packages)):
		return nil, nil, refuse(CodeBadChoice, nil, "%s has no package %d", e.Name, *c.Package)
	case c.Remote != nil && (*c.Remote < 0 || *c.Remote >= len(e.Remotes)):
		return nil, nil, refuse(CodeBadChoice, nil, "%s has no remote %d", e.Name, *c.Remote)
	case c.Package != nil:
		return &e.Packages[*c.Package], nil, nil
	}
	return nil, &e.Remotes[*c.Remote], nil
}

// build derives the configuration (without its name and reference) and
// the values that go with it, and checks the inputs given.
func (d *deriver) build(e *Entry, o DeriveOptions) (servers.Config, servers.Secrets, error) {
	d.used = map[string]bool{}
	p, r, err := d.pick(e)
	if err != nil {
		return servers.Config{}, servers.Secrets{}, err
	}
	var cfg servers.Config
	var sec servers.Secrets
	if p != nil {
		cfg, sec, err = d.pkg(p, o)
	} else {
		cfg, sec, err = d.remote(r)
	}
	if err != nil {
		return servers.Config{}, servers.Secrets{}, err
	}
	if len(d.problems) > 0 {
		return servers.Config{}, servers.Secrets{}, d.problems[0]
	}
	if len(d.missing) > 0 {
		return servers.Config{}, servers.Secrets{}, refuse(CodeMissingInput, d.missing, "required inputs have no value: %s", strings.Join(d.missing, ", "))
	}
	if !d.listing {
		var extra []string
		for _, m := range []map[string]string{d.choice.Inputs, d.choice.Secrets} {
			for k := range m {
				if !d.used[k] {
					extra = append(extra, k)
				}
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return servers.Config{}, servers.Secrets{}, refuse(CodeUndeclaredInput, extra, "values are given for inputs the entry does not ask for: %s", strings.Join(extra, ", "))
		}
	}
	return cfg, sec, nil
}

// publicRegistries are the base URLs npx, uvx and dnx fetch from.
var publicRegistries = map[string][]string{
	"npm":   {"https://registry.npmjs.org"},
	"pypi":  {"https://pypi.org", "https://pypi.org/simple"},
	"nuget": {"https://api.nuget.org/v3/index.json", "https://api.nuget.org"},
}

var digestRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

func (d *deriver) pkg(p *Package, o DeriveOptions) (servers.Config, servers.Secrets, error) {
	cfg := servers.Config{Kind: servers.KindStdio}
	var sec servers.Secrets
	if p.Transport.Type != "stdio" {
		return cfg, sec, refuse(CodeUnsupported, nil, "package %s serves %s itself; Zero runs packages that speak stdio", p.Identifier, p.Transport.Type)
	}
	if bases, ok := publicRegistries[p.RegistryType]; ok && p.RegistryBaseURL != "" && !slices.Contains(bases, strings.TrimSuffix(p.RegistryBaseURL, "/")) {
		return cfg, sec, refuse(CodeUnsupported, nil, "package %s comes from %s; Zero runs %s packages from %s only", p.Identifier, p.RegistryBaseURL, p.RegistryType, bases[0])
	}
	if strings.HasPrefix(p.Identifier, "-") {
		return cfg, sec, refuse(CodeUnsupported, nil, "package identifier %q starts with a dash", p.Identifier)
	}
	if len(p.RuntimeArguments) > 0 {
		// A runtime's own options decide what it fetches and runs (npx -c
		// and --package, uvx --from and --with, docker --mount and
		// --privileged): the entry's author never sets them.
		return cfg, sec, refuse(CodeUnsupported, nil, "package %s declares options for its runtime (%s), which could change what is fetched or run; "+
			"Zero runs a package with the options it derives only", p.Identifier, p.RuntimeArguments[0].Name)
	}
	runtime := func(name string) string {
		if prog := o.Runtimes[name]; prog != "" {
			return prog
		}
		return name
	}
	for _, in := range p.EnvironmentVariables {
		cfg.Env = append(cfg.Env, in.Name)
		if v, ok := d.value("env:"+in.Name, in); ok {
			sec.Env = setValue(sec.Env, in.Name, v)
		}
	}
	pkgArgs := d.args("arg:", p.PackageArguments)
	switch p.RegistryType {
	case "npm":
		cfg.Command = runtime("npx")
		cfg.Args = concat([]string{"-y", p.Identifier + "@" + p.Version}, pkgArgs)
	case "pypi":
		cfg.Command = runtime("uvx")
		cfg.Args = concat([]string{p.Identifier + "==" + p.Version}, pkgArgs)
	case "nuget":
		cfg.Command = runtime("dnx")
		cfg.Args = []string{p.Identifier + "@" + p.Version, "--yes"}
		if len(pkgArgs) > 0 {
			cfg.Args = concat(cfg.Args, []string{"--"}, pkgArgs)
		}
	case "oci":
		image := p.Identifier
		if !strings.Contains(image, "@sha256:") {
			if d.choice.Digest == "" {
				return cfg, sec, refuse(CodeUnpinnedImage, nil, "image %s is named by tag only, which can change under the same name: add its digest (sha256:...) to run it", image)
			}
			if !digestRE().MatchString(d.choice.Digest) {
				return cfg, sec, refuse(CodeInvalidInput, []string{"digest"}, "digest %q: want sha256: and 64 lower-case hex digits", d.choice.Digest)
			}
			image += "@" + d.choice.Digest
		}
		cfg.Command = runtime("docker")
		cfg.Args = []string{"run", "--rm", "-i"}
		for _, name := range cfg.Env {
			cfg.Args = append(cfg.Args, "-e", name)
		}
		cfg.Args = concat(cfg.Args, []string{image}, pkgArgs)
	case "mcpb":
		cfg.Args = pkgArgs // after the command and arguments its manifest gives: see bundleConfig
	default:
		return cfg, sec, refuse(CodeUnsupported, nil, "package type %q is not one Zero runs", p.RegistryType)
	}
	return cfg, sec, nil
}

func (d *deriver) remote(r *Remote) (servers.Config, servers.Secrets, error) {
	var cfg servers.Config
	var sec servers.Secrets
	switch r.Type {
	case "streamable-http":
		cfg.Kind = servers.KindHTTP
	case "sse":
		cfg.Kind = servers.KindSSE
	default:
		return cfg, sec, refuse(CodeUnsupported, nil, "remote type %q is not streamable-http or sse", r.Type)
	}
	raw, ok := d.substitute("url", r.URL, r.Variables, "a URL")
	if !ok {
		return cfg, sec, nil // a variable is missing: build reports it
	}
	if u, err := url.Parse(raw); err == nil && strings.EqualFold(u.Scheme, "http") {
		return cfg, sec, refuse(CodeInsecureRemote, nil, "remote %s is plain http: Zero connects to remotes over https only", raw)
	}
	if _, err := (netguard.Options{Schemes: netguard.HTTPSOnly}).CheckURL(raw); err != nil {
		return cfg, sec, refuse(CodeInvalidInput, nil, "remote url: %v", err)
	}
	cfg.URL = raw
	for _, in := range r.Headers {
		name := http.CanonicalHeaderKey(in.Name)
		cfg.Headers = append(cfg.Headers, name)
		if v, ok := d.value("header:"+in.Name, in); ok {
			sec.Headers = setValue(sec.Headers, name, v)
		}
	}
	return cfg, sec, nil
}

// args derives a list of arguments: a positional one is its value, a named
// one its flag and value (a boolean one its flag alone, when true); one
// without a value is left out, or missing when required.
func (d *deriver) args(prefix string, list []Argument) []string {
	var out []string
	for i, a := range list {
		key := prefix + a.Name
		if a.Type == "positional" {
			key = prefix + a.ValueHint
			if a.ValueHint == "" {
				key = prefix + "#" + strconv.Itoa(i)
			}
		}
		v, ok := d.resolve(key, a.Input, "a command line")
		switch {
		case !ok:
		case a.Type == "positional":
			out = append(out, v)
		case a.Format == "boolean":
			if v == "true" {
				out = append(out, a.Name)
			}
		default:
			out = append(out, a.Name, v)
		}
	}
	return out
}

// value resolves the value of an environment variable or header.
func (d *deriver) value(key string, in Input) (string, bool) {
	return d.resolve(key, in, "")
}

// resolve returns the value of the input at key: the entry's fixed value
// with its variables substituted, else the value given, else its default.
// A secret is refused when visible names where the value would show ("a
// command line", "a URL").
func (d *deriver) resolve(key string, in Input, visible string) (string, bool) {
	if !slices.ContainsFunc(d.declared, func(x Declared) bool { return x.Key == key }) {
		d.declared = append(d.declared, Declared{
			Key: key, Description: in.Description, Required: in.IsRequired, Secret: in.IsSecret,
			Fixed: in.Value != "", Default: in.Default, Choices: in.Choices, Format: in.Format,
		})
	}
	if in.IsSecret && visible != "" {
		d.problems = append(d.problems, refuse(CodeSecretInArgument, []string{key}, "%s is secret, and Zero never puts a secret in %s", key, visible))
		return "", false
	}
	if in.Value != "" {
		if d.given(key, in.IsSecret) {
			d.problems = append(d.problems, refuse(CodeUndeclaredInput, []string{key}, "%s is fixed by the entry: it takes no value", key))
		}
		return d.substitute(key, in.Value, in.Variables, visible)
	}
	v, given := d.take(key, in.IsSecret)
	switch {
	case given:
		if msg := valueProblem(in, v); msg != "" {
			d.problems = append(d.problems, refuse(CodeInvalidInput, []string{key}, "%s: %s", key, msg))
			return "", false
		}
		return v, true
	case in.Default != "":
		return in.Default, true
	case in.IsRequired && !slices.Contains(d.missing, key):
		d.missing = append(d.missing, key)
	}
	return "", false
}

var varRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([^{}]*)\}`) })

// substitute replaces each {NAME} in s that vars declares by that
// variable's value, as text; a {NAME} vars does not declare stays as it
// is. A variable without a value leaves s without one.
func (d *deriver) substitute(owner, s string, vars map[string]Input, visible string) (string, bool) {
	ok := true
	out := varRE().ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[1 : len(ref)-1]
		in, declared := vars[name]
		if !declared {
			return ref
		}
		v, has := d.resolve(owner+ref, in, visible)
		ok = ok && has
		return v
	})
	return out, ok
}

// given reports whether a value is given for key, and marks it taken.
func (d *deriver) given(key string, secret bool) bool {
	_, ok := d.take(key, secret)
	return ok
}

// take returns the value given for key, from Secrets for a secret input
// and Inputs for another; a value given on the wrong side is refused.
func (d *deriver) take(key string, secret bool) (string, bool) {
	right, wrong := d.choice.Inputs, d.choice.Secrets
	if secret {
		right, wrong = wrong, right
	}
	if _, ok := wrong[key]; ok {
		d.used[key] = true
		what := map[bool]string{true: "secret: give it with the secrets", false: "not secret: give it with the inputs"}[secret]
		d.problems = append(d.problems, refuse(CodeInvalidInput, []string{key}, "%s is %s", key, what))
		return "", false
	}
	v, ok := right[key]
	if ok {
		d.used[key] = true
	}
	return v, ok
}

// valueProblem says why v is not a value of in, or "".
func valueProblem(in Input, v string) string {
	switch {
	case len(in.Choices) > 0 && !slices.Contains(in.Choices, v):
		return fmt.Sprintf("want one of %s", strings.Join(in.Choices, ", "))
	case in.Format == "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "want a number"
		}
	case in.Format == "boolean" && v != "true" && v != "false":
		return "want true or false"
	case strings.ContainsAny(v, "\x00\r\n"):
		return "holds a NUL or a line break"
	}
	return ""
}

func setValue(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var nameBadRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// serverName makes a server's name in Zero from an entry's reverse-DNS
// name: its part after the slash, as a name Zero takes.
func serverName(entry string) string {
	_, n, _ := strings.Cut(entry, "/")
	n = strings.TrimLeft(nameBadRE().ReplaceAllString(n, "-"), "._-")
	if len(n) > 64 {
		n = n[:64]
	}
	if n == "" {
		return "server"
	}
	return n
}

// bundlePath is where a bundle whose SHA-256 is sum is kept.
func bundlePath(home, sum string) string {
	return filepath.Join(home, "registry", "mcpb", sum+".mcpb")
}

// fetchBundle makes sure the file at path holds the bundle p names:
// fetched through o.HTTP, at most MaxBundle bytes, kept only when its
// SHA-256 is p.FileSHA256. A file already there is checked again.
func fetchBundle(ctx context.Context, o DeriveOptions, p *Package, path string) error {
	if o.Home == "" || o.HTTP == nil {
		return errors.New("mcpb: no home or client to fetch a bundle with")
	}
	if sum, err := fileSHA256(path); err == nil && sum == p.FileSHA256 {
		return nil
	}
	if _, err := (netguard.Options{Schemes: netguard.HTTPSOnly}).CheckURL(p.Identifier); err != nil {
		return refuse(CodeMCPBDownload, nil, "bundle %s: %v", p.Identifier, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Identifier, nil)
	if err != nil {
		return refuse(CodeMCPBDownload, nil, "bundle %s: %v", p.Identifier, err)
	}
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return refuse(CodeMCPBDownload, nil, "bundle %s: %v", p.Identifier, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refuse(CodeMCPBDownload, nil, "bundle %s: the server answered %s", p.Identifier, resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fetch-*")
	if err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, MaxBundle+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return refuse(CodeMCPBDownload, nil, "bundle %s: %v", p.Identifier, err)
	case n > MaxBundle:
		return refuse(CodeMCPBDownload, nil, "bundle %s is over %d MiB", p.Identifier, MaxBundle>>20)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != p.FileSHA256 {
		return refuse(CodeMCPBMismatch, nil, "bundle %s has SHA-256 %s, not the %s its entry declares: not kept", p.Identifier, sum, p.FileSHA256)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	return nil
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
