package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
)

func helpCommand(root *Command) *Command {
	return &Command{
		Name:      "help",
		UsageLine: "help [command [subcommand]]",
		Short:     "print help about zero or one of its commands",
		Long: `Help prints a command's usage, what it does, its subcommands and every flag
it takes, with the flag's default. 'zero help servers add' and
'zero servers add --help' print the same.
`,
		Run: func(_ context.Context, stdio Stdio, args []string) error {
			if len(args) == 0 {
				fmt.Fprint(stdio.Out, mainUsage(root))
				return nil
			}
			c := root
			for _, name := range args {
				sub := c.lookup(name)
				if sub == nil {
					if c == root {
						return usagef("unknown command %q", name)
					}
					return usagef("unknown %s %q for 'zero %s': want one of %s", c.childKind(), name, c.path(), c.names())
				}
				c = sub
			}
			fmt.Fprint(stdio.Out, c.help())
			return nil
		},
	}
}

// helpWidth is the widest line help prints, in columns (a tab is 8).
const helpWidth = 80

func mainUsage(root *Command) string {
	var b strings.Builder
	b.WriteString("Zero: MCP servers, a workspace and repository automation, built for safety.\n\nUsage:\n\n\tzero <command> [arguments]\n\nCommands:\n\n")
	writeCommands(&b, root.Subcommands)
	b.WriteString("\nRun 'zero help <command>' for more about a command.\n")
	return b.String()
}

// writeCommands lists commands by name with their summaries, each wrapped
// to fit helpWidth under its first line.
func writeCommands(b *strings.Builder, cs []*Command) {
	const name = 10
	for _, c := range cs {
		for i, line := range wrap(c.Short, helpWidth-8-name-1) {
			n := c.Name
			if i > 0 {
				n = ""
			}
			fmt.Fprintf(b, "\t%-*s %s\n", name, n, line)
		}
	}
}

// usage is the command's usage lines: its UsageLine, or for a group
// without one, each subcommand's, so that a group's usage never names
// fewer flags than its subcommands take. Each is wrapped to fit helpWidth.
func (c *Command) usage() string {
	lines := []string{c.UsageLine}
	if c.UsageLine == "" {
		lines = nil
		for _, s := range c.Subcommands {
			lines = append(lines, s.UsageLine)
		}
	}
	var b strings.Builder
	for i, l := range lines {
		prefix := "usage: "
		if i > 0 {
			prefix = "       "
		}
		for j, w := range wrap("zero "+l, helpWidth-len(prefix)-4) {
			if j > 0 {
				w = "    " + w
			}
			b.WriteString(prefix + w + "\n")
			prefix = "       "
		}
	}
	return b.String()
}

// help is the command's help: usage, summary, the long text, the
// subcommands and every flag of its FlagSet, with its default.
func (c *Command) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n", c.usage(), strings.Join(wrap(c.Short, helpWidth), "\n"))
	if c.Long != "" {
		b.WriteString("\n" + strings.TrimRight(c.Long, "\n") + "\n")
	}
	if len(c.Subcommands) > 0 {
		kind := c.childKind()
		fmt.Fprintf(&b, "\n%ss:\n\n", strings.ToUpper(kind[:1])+kind[1:])
		writeCommands(&b, c.Subcommands)
		fmt.Fprintf(&b, "\nRun 'zero help %s <%s>' for its flags.\n", c.path(), kind)
	}
	if c.Flag != nil {
		writeFlags(&b, c.Flag)
	}
	return b.String()
}

// writeFlags lists fs's flags: each with its value's name (the usage's
// backquoted word), its meaning and, unless it is the zero value, its
// default; wrapped to fit 80 columns.
func writeFlags(b *strings.Builder, fs *flag.FlagSet) {
	type row struct{ name, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if arg != "" {
			name += " " + arg
		}
		if !isZeroDefault(f.DefValue) {
			def := f.DefValue
			if strings.Contains(def, " ") {
				def = strconv.Quote(def)
			}
			usage += " (default " + def + ")"
		}
		rows = append(rows, row{name, usage})
		width = max(width, len(name))
	})
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nFlags:\n\n")
	width = min(width, 24) // a longer name gets a line of its own
	for _, r := range rows {
		lines := wrap(r.usage, helpWidth-8-width-2)
		if len(r.name) > width {
			fmt.Fprintf(b, "\t%s\n", r.name)
		} else {
			fmt.Fprintf(b, "\t%-*s  %s\n", width, r.name, lines[0])
			lines = lines[1:]
		}
		for _, line := range lines {
			fmt.Fprintf(b, "\t%-*s  %s\n", width, "", line)
		}
	}
}

func isZeroDefault(v string) bool {
	switch v {
	case "", "false", "0", "0s":
		return true
	}
	return false
}

// wrap breaks s into lines of at most width bytes, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
