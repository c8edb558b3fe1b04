package risk

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	sha0 = "0000000000000000000000000000000000000000"
	shaA = "1111111111111111111111111111111111111111"
	shaB = "2222222222222222222222222222222222222222"
)

// rec writes a record as git does: NUL after every field.
func rec(fields ...string) []byte { return []byte(strings.Join(fields, "\x00") + "\x00") }

// TestParseRecord reads records as git writes them, paths with spaces,
// tabs, quotes, newlines and non-ASCII bytes included (-z does not quote
// them), and refuses anything out of shape.
func TestParseRecord(t *testing.T) {
	good := rec(
		":100644 100755 "+shaA+" "+shaB+" M", "docs/a b.md",
		":100644 100644 "+shaA+" "+shaB+" R087", "old\tname", "new\nname",
		":000000 120000 "+sha0+" "+shaB+" A", "link",
		":100644 000000 "+shaA+" "+sha0+" D", "\"quoted\"",
		":120000 100644 "+shaA+" "+shaB+" T", "ſ.md",
		"1\t1\tdocs/a b.md",
		"2\t0\t", "old\tname", "new\nname",
		"1\t0\tlink",
		"-\t-\t\"quoted\"",
		"3\t1\tſ.md",
	)
	want := []Change{
		{Status: 'M', OldMode: "100644", NewMode: "100755", OldPath: "docs/a b.md", NewPath: "docs/a b.md", Added: 1, Removed: 1},
		{Status: 'R', Score: 87, OldMode: "100644", NewMode: "100644", OldPath: "old\tname", NewPath: "new\nname", Added: 2},
		{Status: 'A', OldMode: "000000", NewMode: "120000", NewPath: "link", Added: 1},
		{Status: 'D', OldMode: "100644", NewMode: "000000", OldPath: "\"quoted\"", Added: -1, Removed: -1},
		{Status: 'T', OldMode: "120000", NewMode: "100644", OldPath: "ſ.md", NewPath: "ſ.md", Added: 3, Removed: 1},
	}
	got, err := ParseRecord(good)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got, err := ParseRecord(nil); err != nil || got != nil {
		t.Errorf("an empty record: %v, %v", got, err)
	}

	raw := ":100644 100644 " + shaA + " " + shaB + " M"
	bad := map[string][]byte{
		"no final NUL":            []byte(raw + "\x00a\x00" + "1\t1\ta"),
		"no numstat":              rec(raw, "a"),
		"numstat for another":     rec(raw, "a", "1\t1\tb"),
		"numstat left over":       rec(raw, "a", "1\t1\ta", "1\t1\ta"),
		"text before":             rec("hello", raw, "a", "1\t1\ta"),
		"short object id":         rec(":100644 100644 1111 2222 M", "a", "1\t1\ta"),
		"upper-case object id":    rec(":100644 100644 "+strings.ToUpper("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")+" "+shaB+" M", "a", "1\t1\ta"),
		"mode not octal":          rec(":100649 100644 "+shaA+" "+shaB+" M", "a", "1\t1\ta"),
		"four fields":             rec(":100644 100644 "+shaA+" M", "a", "1\t1\ta"),
		"no path":                 rec(raw, "", "1\t1\t"),
		"rename without a path":   rec(":100644 100644 "+shaA+" "+shaB+" R100", "a"),
		"rename without score":    rec(":100644 100644 "+shaA+" "+shaB+" R", "a", "b", "1\t1\t", "a", "b"),
		"score over 100":          rec(":100644 100644 "+shaA+" "+shaB+" R101", "a", "b", "1\t1\t", "a", "b"),
		"score on a modify":       rec(":100644 100644 "+shaA+" "+shaB+" M050", "a", "1\t1\ta"),
		"added with an old mode":  rec(":100644 100644 "+sha0+" "+shaB+" A", "a", "1\t0\ta"),
		"deleted with a new mode": rec(":100644 100644 "+shaA+" "+sha0+" D", "a", "0\t1\ta"),
		"lower-case status":       rec(":100644 100644 "+shaA+" "+shaB+" m", "a", "1\t1\ta"),
		"binary on one side":      rec(raw, "a", "-\t1\ta"),
		"negative count":          rec(raw, "a", "-1\t1\ta"),
		"huge count":              rec(raw, "a", "99999999999999\t1\ta"),
		"renamed numstat names":   rec(":100644 100644 "+shaA+" "+shaB+" R100", "a", "b", "0\t0\t", "a", "c"),
	}
	for name, b := range bad {
		if got, err := ParseRecord(b); err == nil {
			t.Errorf("%s: parsed as %+v", name, got)
		}
	}
}

// FuzzParseRecord checks that ParseRecord never panics, that what it
// accepts holds together (paths by status, modes by status, counts), and
// that a record written back from its result parses to the same changes.
func FuzzParseRecord(f *testing.F) {
	f.Add(rec(":100644 100755 "+shaA+" "+shaB+" M", "a", "1\t1\ta"))
	f.Add(rec(":100644 100644 "+shaA+" "+shaB+" R087", "a", "b", "2\t0\t", "a", "b"))
	f.Add(rec(":000000 100644 "+sha0+" "+shaB+" A", "n", ":100644 000000 "+shaA+" "+sha0+" D", "o", "1\t0\tn", "-\t-\to"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		changes, err := ParseRecord(raw)
		if err != nil {
			return
		}
		var fields []string
		var stats []string
		for _, c := range changes {
			switch {
			case c.Status == 'A' && (c.OldPath != "" || c.NewPath == ""),
				c.Status == 'D' && (c.NewPath != "" || c.OldPath == ""),
				c.Status != 'A' && c.Status != 'D' && (c.OldPath == "" || c.NewPath == ""),
				(c.Added < 0) != (c.Removed < 0):
				t.Fatalf("an inconsistent change %+v", c)
			}
			head := ":" + c.OldMode + " " + c.NewMode + " " + shaA + " " + shaB + " " + string(c.Status)
			if c.Status == 'R' || c.Status == 'C' {
				head += strings.Repeat("0", 3-len(itoa(c.Score))) + itoa(c.Score)
				fields = append(fields, head, c.OldPath, c.NewPath)
				stats = append(stats, numstat(c.Added)+"\t"+numstat(c.Removed)+"\t", c.OldPath, c.NewPath)
				continue
			}
			fields = append(fields, head, c.path())
			stats = append(stats, numstat(c.Added)+"\t"+numstat(c.Removed)+"\t"+c.path())
		}
		if len(changes) == 0 {
			return
		}
		again, err := ParseRecord(rec(append(fields, stats...)...))
		if err != nil {
			t.Fatalf("the record written back does not parse: %v", err)
		}
		if d := cmp.Diff(changes, again); d != "" {
			t.Fatalf("written back (-first +again):\n%s", d)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

func numstat(n int) string {
	if n < 0 {
		return "-"
	}
	return itoa(n)
}
