package textdiff

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const header = "Index: f\n" +
	"===================================================================\n" +
	"--- f\toriginal\n" +
	"+++ f\tmodified\n"

// TestJSDiffCases compares Unified with patches made by jsdiff 8.0.4
// (testdata/gen_cases.mjs). Every case matches, "disjoint large" too, which
// is beyond the search budget: no case was found where Unified picks another
// minimal diff.
func TestJSDiffCases(t *testing.T) {
	data, err := os.ReadFile("testdata/jsdiff_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, OldName, NewName, OldHeader, NewHeader, Old, New, Patch string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 300 {
		t.Fatalf("only %d cases in testdata/jsdiff_cases.json", len(cases))
	}
	for _, c := range cases {
		got := Unified(c.OldName, c.NewName, c.Old, c.New, c.OldHeader, c.NewHeader)
		if d := cmp.Diff(c.Patch, got); d != "" {
			t.Errorf("%s: Unified differs from jsdiff (-jsdiff +got):\n%s", c.Name, d)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"identical", "a\nb\n", "a\nb\n", header},
		{"both empty", "", "", header},
		{"empty old", "", "x\ny\n", header + "@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"empty new", "x\n", "", header + "@@ -1,1 +0,0 @@\n-x\n"},
		{"no newline", "a", "b", header + "@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
		{"newline added", "a\nb", "a\nb\n", header + "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, Unified("f", "f", tt.old, tt.new, "original", "modified")); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
	got := Unified("a/f", "b/f", "x\n", "x\n", "", "")
	if want := "===================================================================\n--- a/f\t\n+++ b/f\t\n"; got != want {
		t.Errorf("different names: got %q, want %q", got, want)
	}
}

// applyPatch applies a patch made by Unified to old. It checks the headers,
// the hunk ranges and every context and deleted line.
func applyPatch(old, patch string) (string, error) {
	src := strings.SplitAfter(old, "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	pl := strings.Split(patch, "\n")
	if len(pl) < 5 || pl[len(pl)-1] != "" {
		return "", fmt.Errorf("patch too short or not ending in a newline")
	}
	pl = pl[:len(pl)-1]
	if !strings.HasPrefix(pl[0], "Index: ") || !strings.HasPrefix(pl[1], "====") ||
		!strings.HasPrefix(pl[2], "--- ") || !strings.HasPrefix(pl[3], "+++ ") {
		return "", fmt.Errorf("bad headers: %q", pl[:4])
	}
	var out []string
	pos := 0
	for i := 4; i < len(pl); {
		var oStart, ol, ns, nl int
		if _, err := fmt.Sscanf(pl[i], "@@ -%d,%d +%d,%d @@", &oStart, &ol, &ns, &nl); err != nil {
			return "", fmt.Errorf("line %d: bad hunk header %q", i, pl[i])
		}
		if pl[i] != fmt.Sprintf("@@ -%d,%d +%d,%d @@", oStart, ol, ns, nl) {
			return "", fmt.Errorf("line %d: bad hunk header %q", i, pl[i])
		}
		i++
		start, newStart := oStart-1, ns-1
		if ol == 0 {
			start = oStart
		}
		if nl == 0 {
			newStart = ns
		}
		if start < pos || start > len(src) {
			return "", fmt.Errorf("hunk at old line %d out of order or range", oStart)
		}
		out = append(out, src[pos:start]...)
		pos = start
		if len(out) != newStart {
			return "", fmt.Errorf("hunk at new line %d, want %d", ns, len(out)+1)
		}
		for ol > 0 || nl > 0 {
			if i >= len(pl) || pl[i] == "" {
				return "", fmt.Errorf("line %d: hunk ends early", i)
			}
			op, text := pl[i][0], pl[i][1:]+"\n"
			i++
			if i < len(pl) && pl[i] == `\ No newline at end of file` {
				text = text[:len(text)-1]
				i++
			}
			switch op {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d: %q does not match old text", i, text)
				}
				pos++
				ol--
				if op == ' ' {
					out = append(out, text)
					nl--
				}
			case '+':
				out = append(out, text)
				nl--
			default:
				return "", fmt.Errorf("line %d: bad hunk line %q", i, pl[i-1])
			}
			if ol < 0 || nl < 0 {
				return "", fmt.Errorf("line %d: hunk longer than its header says", i)
			}
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func countChanges(patch string) int {
	n := 0
	for _, l := range strings.Split(patch, "\n")[4:] {
		if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
			n++
		}
	}
	return n
}

// minChanges is the number of deleted plus inserted lines of a minimal
// line diff, from the longest common subsequence.
func minChanges(old, new string) int {
	a, b := splitLines(old), splitLines(new)
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return len(a) + len(b) - 2*prev[len(b)]
}

// check asserts that the patch from old to new applies, is minimal when
// minimal is set, and has no hunk for equal texts.
func check(t *testing.T, old, new string, minimal bool) {
	t.Helper()
	patch := Unified("f", "f", old, new, "original", "modified")
	if old == new {
		if patch != header {
			t.Fatalf("equal texts %q: got %q, want headers only", old, patch)
		}
		return
	}
	got, err := applyPatch(old, patch)
	if err != nil {
		t.Fatalf("Unified(%q, %q) = %q: does not apply: %v", old, new, patch, err)
	}
	if got != new {
		t.Fatalf("Unified(%q, %q) = %q: applies to %q", old, new, patch, got)
	}
	if minimal {
		if n, want := countChanges(patch), minChanges(old, new); n != want {
			t.Fatalf("Unified(%q, %q) = %q: %d changed lines, minimal is %d", old, new, patch, n, want)
		}
	}
}

func randomText(r *rand.Rand, alphabet []string, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteString(alphabet[r.IntN(len(alphabet))])
		sb.WriteByte('\n')
	}
	s := sb.String()
	if r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabets := [][]string{{"a"}, {"a", "b"}, {"a", "b", "", "c d", "é\r"}, {"x", "y", "z", "1", "2", "3", "4", "5"}}
	for range 3000 {
		alpha := alphabets[r.IntN(len(alphabets))]
		old := randomText(r, alpha, r.IntN(30))
		new := randomText(r, alpha, r.IntN(30))
		if r.IntN(2) == 0 { // a few edits of old
			lines := strings.SplitAfter(old, "\n")
			for range 1 + r.IntN(3) {
				i := r.IntN(len(lines))
				lines[i] = alpha[r.IntN(len(alpha))] + "\n"
			}
			new = strings.Join(lines, "")
		}
		check(t, old, new, true)
		check(t, old, old, true)
	}
}

func FuzzUnified(f *testing.F) {
	f.Fuzz(func(t *testing.T, old, new string) {
		small := strings.Count(old, "\n") < 300 && strings.Count(new, "\n") < 300
		check(t, old, new, small)
		check(t, new, new, small)
	})
}

// lineFile returns n numbered lines.
func lineFile(n int, format string) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, format, i)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// edit3 changes a 10,000-line file in three places.
func edit3(old string) string {
	new := strings.Replace(old, "\tline 2000;\n", "\tline 2000 changed;\n", 1)
	new = strings.Replace(new, "\tline 5000;\n", "", 1)
	return strings.Replace(new, "\tline 8000;\n", "\tline 8000;\n\tinserted;\n", 1)
}

func TestLargeFewEdits(t *testing.T) {
	old := lineFile(10000, "\tline %d;")
	new := edit3(old)
	check(t, old, new, false)
	patch := Unified("f", "f", old, new, "original", "modified")
	if n := strings.Count(patch, "\n@@ "); n != 3 {
		t.Errorf("got %d hunks, want 3", n)
	}
	if n := countChanges(patch); n != 4 {
		t.Errorf("got %d changed lines, want 4", n)
	}
}

// TestPathological checks that texts with nothing in common, or made of few
// distinct lines, are diffed in bounded time and memory, into a correct
// patch that may not be minimal.
func TestPathological(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	edited := strings.Replace(lineFile(5000, "a %d"), "a 100\n", "b 100\n", 1)
	tests := []struct {
		name, old, new string
		hunks          []string // the hunk headers, if checked
	}{
		{"disjoint", lineFile(50000, "old line %d"), lineFile(50000, "new line %d"),
			[]string{"@@ -1,50000 +1,50000 @@"}},
		{"two letters", randomText(r, []string{"a", "b"}, 50000), randomText(r, []string{"a", "b"}, 50000), nil},
		// The common prefix and suffix stay outside the one hunk.
		{"disjoint middle",
			lineFile(2000, "same %d") + lineFile(40000, "old %d") + lineFile(2000, "end %d"),
			lineFile(2000, "same %d") + lineFile(40000, "new %d") + lineFile(2000, "end %d"),
			[]string{"@@ -1997,40008 +1997,40008 @@"}},
		// The search gets past the first edit before it gives up. jsdiff
		// makes the same patch, in 3 seconds.
		{"edit then disjoint",
			lineFile(5000, "a %d") + lineFile(3000, "old %d") + lineFile(1000, "t %d"),
			edited + lineFile(3000, "new %d") + lineFile(1000, "t %d"),
			[]string{"@@ -97,9 +97,9 @@", "@@ -4997,3008 +4997,3008 @@"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			patch := Unified("f", "f", tt.old, tt.new, "original", "modified")
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%v, %d MiB allocated, %d bytes of patch", elapsed, alloc>>20, len(patch))
			// Generous bounds: without a cap the search takes minutes and
			// gigabytes.
			if elapsed > 3*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if alloc > 200<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			got, err := applyPatch(tt.old, patch)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.new {
				t.Fatal("patch does not turn old into new")
			}
			if tt.hunks != nil {
				var hunks []string
				for _, l := range strings.Split(patch, "\n") {
					if strings.HasPrefix(l, "@@ ") {
						hunks = append(hunks, l)
					}
				}
				if d := cmp.Diff(tt.hunks, hunks); d != "" {
					t.Errorf("hunks differ (-want +got):\n%s", d)
				}
			}
		})
	}
}

func BenchmarkUnified10kLines3Edits(b *testing.B) {
	old := lineFile(10000, "\tline %d;")
	new := edit3(old)
	b.SetBytes(int64(len(old) + len(new)))
	b.ReportAllocs()
	for b.Loop() {
		Unified("f", "f", old, new, "original", "modified")
	}
}

func BenchmarkUnifiedDisjoint50kLines(b *testing.B) {
	old, new := lineFile(50000, "old line %d"), lineFile(50000, "new line %d")
	b.ReportAllocs()
	for b.Loop() {
		Unified("f", "f", old, new, "original", "modified")
	}
}
