package run

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/repoagent/policy"
)

// Bounds of what a report shows of untrusted text.
const (
	maxLine      = 500 // bytes of one line
	maxDiffLines = 400 // lines of the proposed diff
)

// Write prints the report for a person. Every line that holds text from
// outside Zero (the model's words and diff, a check's output) is passed
// through oneLine and indented, so it cannot forge a line of the report.
func (r Report) Write(w io.Writer) {
	fmt.Fprintf(w, "Agent Zero task %s on %s\n", r.TaskID, oneLine(r.Repo))
	fmt.Fprintf(w, "mode: %s (work: %s)\n", r.Mode, r.Work)
	if len(r.ModeCap) > 0 {
		fmt.Fprintf(w, "  capped at %s by:\n", r.Mode)
		for _, c := range r.ModeCap {
			fmt.Fprintf(w, "  - %s\n", c)
		}
	}
	switch {
	case r.NoPolicy:
		fmt.Fprintf(w, "policy: none: the default branch has no %s (commit %s), so the defaults apply (mode: observe, autofix off)\n", PolicyFile, r.PolicySHA)
	case r.PolicySHA != "":
		fmt.Fprintf(w, "policy: %s at %s\n", PolicyFile, r.PolicySHA)
	}
	if r.PolicyError != "" {
		fmt.Fprintf(w, "policy error: %s\n", oneLine(r.PolicyError))
	}
	if r.HeadSHA != "" {
		fmt.Fprintf(w, "reviewed: %s\n", r.HeadSHA)
	}
	if r.Review.Summary != "" {
		fmt.Fprintf(w, "\nsummary (from the model, unverified):\n  | %s\n", oneLine(r.Review.Summary))
	}
	if len(r.Review.Findings) > 0 {
		fmt.Fprintf(w, "\nfindings (from the model, unverified):\n")
		for _, f := range r.Review.Findings {
			fmt.Fprintf(w, "  - [%s] %s:%d %s\n", oneLine(f.Severity), oneLine(f.Path), f.Line, oneLine(f.Message))
		}
	}
	if r.Review.Diff != "" {
		WriteDiff(w, r.Review.Diff)
		risk := "not computed"
		if r.Risk.Class != "" {
			risk = string(r.Risk.Class) + " (computed by Zero from the change git applied)"
		}
		fmt.Fprintf(w, "risk: %s; model confidence %.2f\n", risk, r.Review.Confidence)
	}
	if r.Checks.Ran || r.Checks.TimedOut {
		fmt.Fprintf(w, "checks: %s (isolation: %s)\n", checksWord(r.Checks), r.Checks.Isolation)
	}
	if v := r.Verification; v != nil {
		fmt.Fprintf(w, "checks on the reviewed head's tests: %s (isolation: %s)\n", checksWord(*v), v.Isolation)
	}
	if r.Approved {
		fmt.Fprintf(w, "approved: by a person, for the high-impact hold (step 4) only\n")
	}
	fmt.Fprintf(w, "\noutcome: %s\n", r.Outcome)
	for _, line := range r.Reason {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// WriteDiff prints a diff the model proposed, marked as unverified model
// output, each line sanitized and behind a "| " margin, at most
// maxDiffLines of them.
func WriteDiff(w io.Writer, diff string) {
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	fmt.Fprintf(w, "\nproposed change (from the model, unverified: %d lines):\n", len(lines))
	for i, l := range lines {
		if i == maxDiffLines {
			fmt.Fprintf(w, "  | [%d more lines not shown]\n", len(lines)-i)
			break
		}
		fmt.Fprintf(w, "  | %s\n", oneLine(strings.ReplaceAll(l, "\t", "    ")))
	}
}

// oneLine keeps untrusted text on one line, so it cannot forge report
// lines: every C0 and C1 control (NEL, CR, VT, FF, ESC and the rest), DEL,
// and the Unicode line and paragraph separators become a space; invalid
// UTF-8 becomes U+FFFD; the text is cut at maxLine bytes.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) > maxLine {
		cut := maxLine
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// modeCap says what capped the effective mode below autonomous, and how
// to raise each.
func (t *task) modeCap() []string {
	m, o := t.rep.Mode, t.o.Operator
	if m == policy.Autonomous {
		return nil
	}
	var out []string
	if o.Ceiling == m {
		out = append(out, fmt.Sprintf("the operator's ceiling, %s: raise ceiling in the operator's configuration (operator.yml)", m))
	}
	switch {
	case t.policyErr:
		out = append(out, PolicyFile+" has an error, so it counts as observe: fix it on the default branch")
	case t.rep.NoPolicy:
		out = append(out, fmt.Sprintf("no %s on the default branch, so the repository's mode is observe: add one there, with mode: fix", PolicyFile))
	case t.policy.Mode == m:
		out = append(out, fmt.Sprintf("%s on the default branch, mode: %s: raise it there", PolicyFile, m))
	}
	if t.requested == m {
		switch by := t.requestedBy; {
		case by == "--mode":
			out = append(out, fmt.Sprintf("--mode %s (observe is the default): pass --mode %s", m, m+1))
		case strings.HasPrefix(by, "eventModes."):
			out = append(out, fmt.Sprintf("the operator's %s, %s: raise it in the operator's configuration", by, m))
		default:
			out = append(out, fmt.Sprintf("%s, at %s: an approval never raises the mode", by, m))
		}
	}
	return out
}
