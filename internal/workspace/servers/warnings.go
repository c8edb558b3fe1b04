package servers

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// A Warning is something a person should look at before approving.
// Severity "danger" marks what can do serious harm on its own.
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // "danger" or "caution"
	Message  string `json:"message"`
}

// A Preview is what a person approves: the exact configuration, its
// fingerprint and the warnings about it.
type Preview struct {
	Config      Config    `json:"config"`
	Fingerprint string    `json:"fingerprint"`
	Warnings    []Warning `json:"warnings"`
}

var (
	fetchPipeShell = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(curl|wget|fetch|iwr|invoke-webrequest)\b[^|]*\|\s*(sudo\s+)?(ba|z|k|da|fi)?sh\b`)
	})
	rmRecursive = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(^|\s)rm\s+(-[a-z]*r[a-z]*f|-[a-z]*f[a-z]*r|--recursive|-r\b)`)
	})
	privileged = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s;&|(])(sudo|doas|pkexec)(\s|$)`) })
)

// shells run their arguments as code.
var shells = []string{"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "cmd", "cmd.exe"}

// runners download and run a package named in their arguments.
var runners = []string{"npx", "uvx", "pipx", "bunx", "pnpx", "dlx"}

// warnings lists what deserves a second look in c. It never refuses
// anything: validation does that.
func (p Policy) warnings(c Config) []Warning {
	ws := []Warning{}
	add := func(code, severity, msg string) { ws = append(ws, Warning{code, severity, msg}) }
	program := path.Base(c.Command)
	line := strings.Join(append([]string{c.Command}, c.Args...), " ")
	if program == "sudo" || program == "doas" || program == "su" || program == "pkexec" || privileged().MatchString(line) {
		add("sudo", "danger", "the command asks for root privileges (sudo, doas or su)")
	}
	if rmRecursive().MatchString(line) || (program == "rm" && slices.ContainsFunc(c.Args, func(a string) bool {
		return strings.HasPrefix(a, "-") && strings.Contains(a, "r")
	})) {
		add("rm-recursive", "danger", "the command deletes files recursively (rm -r)")
	}
	if fetchPipeShell().MatchString(line) {
		add("pipe-to-shell", "danger", "the command downloads a script and pipes it to a shell")
	}
	if slices.Contains(shells, program) {
		add("shell", "caution", "the command is a shell: its arguments are code, read them all")
	}
	if slices.Contains(runners, program) {
		add("package-runner", "caution", program+" downloads and runs a package at each start, whatever it is then")
	}
	if strings.Contains(line, "http://") {
		add("plain-http", "caution", "the command line names a plain http:// URL: what it fetches can be changed in transit")
	}
	if c.Kind != KindStdio {
		if u, err := url.Parse(c.URL); err == nil {
			if u.Scheme == "http" {
				add("plain-http", "danger", "the server's URL is plain http")
			}
			if why, private := privateHost(u.Hostname()); private {
				add("private-host", "caution", "the server is on this machine or a private network ("+why+"), allowed by ZERO_ALLOWED_LOCAL_ORIGINS")
			}
		}
	}
	if slices.ContainsFunc(append([]string{c.Command, c.Program, c.Cwd, c.URL}, c.Args...), hiddentext.Unprintable) {
		add("hidden-characters", "danger", "the configuration holds control or invisible characters (shown escaped, such as \\u202e): what you read may not be what runs")
	}
	if len(c.Env) > 0 && c.Kind == KindStdio {
		add("secrets", "caution", "the server receives the values of the declared environment variables")
	}
	return ws
}

// warnings lists what deserves a second look in c as it would run: the
// policy's warnings, and what the program c resolved to says.
func (m *Manager) warnings(c Config) []Warning {
	ws := m.o.Policy.warnings(c)
	if c.Kind != KindStdio || c.Command == "" {
		return ws
	}
	add := func(code, severity, msg string) { ws = append(ws, Warning{code, severity, msg}) }
	split, isLine, splitErr := SplitCommand(c)
	// The slashes of a command line that resolves to nothing are its
	// arguments', not a relative path's.
	if strings.Contains(c.Command, "/") && !path.IsAbs(c.Command) && !((isLine || splitErr != nil) && c.Program == "") {
		add("relative-command", "caution", "the command is a path relative to the working directory: whatever file is there when the server starts is what runs")
	}
	if why := m.NotRunnable(c); why != "" {
		add("not-runnable", "danger", "nothing would run: "+why+"; it cannot be approved until the command resolves to a program")
		switch {
		case isLine:
			add("command-line", "caution", fmt.Sprintf("the command is a whole command line, and no shell reads it: the program looked for is named %q, spaces and all. "+
				"Split into a program and its arguments, as a shell splits words (nothing expanded), it is %s", c.Command, describeSplit(split)))
		case splitErr != nil:
			add("command-line", "caution", "the command cannot be read as a command line either: "+splitErr.Error()+
				". Type the program alone in the command field, and each argument on its own line")
		}
		return ws
	}
	if m.inWorkspace(c.Program) {
		add("program-in-workspace", "danger", "the program "+c.Program+" is inside the thread workspace, where servers and threads write files: any of them could replace it")
	}
	return ws
}

// inWorkspace reports whether the canonical path p lies in the thread
// workspace.
func (m *Manager) inWorkspace(p string) bool {
	if m.o.Workspace == nil {
		return false
	}
	for _, r := range m.o.Workspace.Roots() {
		if fsroot.Within(r.Canonical, p) {
			return true
		}
	}
	return false
}

// maxSplitShown bounds the arguments a command-line warning lists.
const maxSplitShown = 20

// describeSplit names a split configuration's program and arguments, for
// a warning.
func describeSplit(c Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the program %q", c.Command)
	for i, a := range c.Args {
		if i == maxSplitShown {
			fmt.Fprintf(&b, " and %d more", len(c.Args)-maxSplitShown)
			break
		}
		if i == 0 {
			b.WriteString(" with the arguments ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", shortName(a))
	}
	return b.String()
}
