package skill

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want *Skill
	}{
		{"minimal", "---\nname: pdf\ndescription: Work with PDF files.\n---\n# PDF\n\nSteps.\n",
			&Skill{Name: "pdf", Description: "Work with PDF files.", Body: "# PDF\n\nSteps.\n", BodyLine: 5}},
		{"every field", `---
name: data-report
description: >
  Build a report
  from CSV data.
license: Apache-2.0
compatibility: Needs python3 and network access.
metadata:
  author: example-org
  version: "1.0"
  reviewed: true
  revision: 3
allowed-tools: Bash(git:*) Read
---
Body`, &Skill{
			Name: "data-report", Description: "Build a report from CSV data.\n", License: "Apache-2.0",
			Compatibility: "Needs python3 and network access.",
			Metadata:      map[string]string{"author": "example-org", "version": "1.0", "reviewed": "true", "revision": "3"},
			AllowedTools:  "Bash(git:*) Read", Body: "Body", BodyLine: 15,
		}},
		{"CRLF line ends", "---\r\nname: a\r\ndescription: b\r\n---\r\nline\r\n",
			&Skill{Name: "a", Description: "b", Body: "line\r\n", BodyLine: 5}},
		{"byte order mark and trailing blanks on delimiters", "\uFEFF--- \nname: a\ndescription: b\n---\t\n",
			&Skill{Name: "a", Description: "b", Body: "", BodyLine: 5}},
		{"no body", "---\nname: a\ndescription: b\n---",
			&Skill{Name: "a", Description: "b", Body: "", BodyLine: 5}},
		{"body holding another ---", "---\nname: a\ndescription: b\n---\ntext\n---\nmore\n",
			&Skill{Name: "a", Description: "b", Body: "text\n---\nmore\n", BodyLine: 5}},
		{"null optional fields", "---\nname: a\ndescription: b\nlicense:\nmetadata: ~\n---\n",
			&Skill{Name: "a", Description: "b", Body: "", BodyLine: 7}},
		{"comments", "---\n# a comment\nname: a # trailing\ndescription: b\n---\n",
			&Skill{Name: "a", Description: "b", Body: "", BodyLine: 6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	const ok = "name: a\ndescription: b\n"
	cases := []struct {
		name string
		in   string
		want string // the error contains it
	}{
		{"empty file", "", "must start with YAML frontmatter"},
		{"no frontmatter", "# Title\n", "must start with YAML frontmatter"},
		{"frontmatter not first", "\n---\n" + ok + "---\n", "must start with YAML frontmatter"},
		{"only an opening line", "---", "not closed"},
		{"unclosed", "---\n" + ok, "not closed"},
		{"empty frontmatter", "---\n---\n", "frontmatter is empty"},
		{"only a comment", "---\n# nothing\n---\n", "frontmatter is empty"},
		{"a list", "---\n- name\n- description\n---\n", "must be a YAML mapping"},
		{"a scalar", "---\njust text\n---\n", "must be a YAML mapping"},
		{"unknown field", "---\n" + ok + "version: 2\n---\n", `frontmatter line 4: unknown field "version"`},
		{"field name case matters", "---\nName: a\ndescription: b\n---\n", `unknown field "Name"`},
		{"duplicate field", "---\n" + ok + "name: c\n---\n", `frontmatter: line 4: mapping key "name" already defined at line 2`},
		{"name as a list", "---\nname: [a]\ndescription: b\n---\n", "name (line 2): must be text"},
		{"description as a mapping", "---\nname: a\ndescription: {x: y}\n---\n", "description (line 3): must be text"},
		{"metadata as text", "---\n" + ok + "metadata: author\n---\n", "metadata (line 4): must be a mapping"},
		{"nested metadata", "---\n" + ok + "metadata:\n  author:\n    name: x\n---\n", "metadata (line 5): must map names to text values"},
		{"binary tag", "---\nname: !!binary YQ==\ndescription: b\n---\n", "name (line 2): the YAML tag !!binary is not allowed"},
		{"custom tag", "---\n" + ok + "license: !env LICENSE\n---\n", "license (line 4): the YAML tag !env is not allowed"},
		{"timestamp", "---\n" + ok + "metadata:\n  date: 2024-01-01\n---\n", `metadata "date" (line 5): the YAML tag !!timestamp`},
		{"anchor", "---\nname: &n a\ndescription: b\n---\n", "frontmatter line 2: YAML anchors and aliases are not allowed"},
		{"alias", "---\nname: a\ndescription: b\nmetadata:\n  x: &x y\n  z: *x\n---\n", "YAML anchors and aliases are not allowed"},
		{"top-level merge key", "---\n<<: {name: a}\ndescription: b\n---\n", `frontmatter line 2: unknown field "<<"`},
		{"merge key", "---\nname: a\ndescription: b\nmetadata:\n  <<: {x: y}\n---\n", "metadata (line 5): must map names to text values"},
		{"billion laughs", "---\n" + laughs + "name: a\ndescription: b\n---\n", "YAML anchors and aliases are not allowed"},
		{"two documents", "---\n" + ok + "--- # two\nname: c\n---\n", "more than one YAML document"},
		{"syntax error", "---\nname: a: b\ndescription: c\n---\n", "frontmatter: invalid YAML near line 2: mapping values are not allowed"},
		{"tab indentation", "---\nmetadata:\n\tx: y\n---\n", "frontmatter: invalid YAML near line 3: found character that cannot start any token"},
		{"unclosed flow sequence", "---\nname: a\ndescription: [b\n---\n", "frontmatter: invalid YAML near line 2: did not find expected ',' or ']'"},
		{"invalid UTF-8", "---\nname: \xff\ndescription: b\n---\n", "not valid UTF-8"},
		{"file too large", "---\n" + ok + "---\n" + strings.Repeat("x", MaxFileSize), "more than 1048576"},
		{"frontmatter too large", "---\n" + ok + "metadata:\n" + strings.Repeat("  k: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\n", 2000) + "---\n", "frontmatter is more than 65536 bytes"},
		{"unclosed and long", "---\n" + strings.Repeat("# padding line padding line padding line\n", 3000), "frontmatter is more than 65536 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", s)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

// laughs is the start of a billion laughs: ten levels, each ten times the
// one before.
var laughs = func() string {
	var b strings.Builder
	b.WriteString("l0: &l0 \"lol\"\n")
	for i := 1; i < 10; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}()

func TestParseTooLargeIsErrTooLarge(t *testing.T) {
	_, err := Parse(make([]byte, MaxFileSize+1))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse(%d bytes) = %v, want ErrTooLarge", MaxFileSize+1, err)
	}
	fm := "---\n" + strings.Repeat("#\n", MaxFrontmatterSize/2+1) + "---\n"
	if _, err := Parse([]byte(fm)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse(long frontmatter) = %v, want ErrTooLarge", err)
	}
	fm = "---\nname: a\ndescription: b\n" + strings.Repeat("#\n", (MaxFrontmatterSize-30)/2) + "---\n"
	if _, err := Parse([]byte(fm)); err != nil {
		t.Errorf("Parse(frontmatter just under the limit) = %v", err)
	}
}

func TestValidate(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct {
		name   string
		skill  Skill
		folder string
		want   []string // each a line of the error; none for valid
	}{
		{"valid", Skill{Name: "pdf-tools2", Description: "Does things."}, "pdf-tools2", nil},
		{"longest name and description", Skill{Name: long(64), Description: long(1024), Compatibility: long(500)}, long(64), nil},
		{"description counts characters, not bytes", Skill{Name: "a", Description: strings.Repeat("é", 1024)}, "a", nil},
		{"missing both", Skill{}, "x", []string{"name: required", "description: required"}},
		{"blank description", Skill{Name: "a", Description: " \n\t"}, "a", []string{"description: required"}},
		{"name too long", Skill{Name: long(65), Description: "d"}, long(65), []string{"name: 65 characters, more than 64"}},
		{"upper case", Skill{Name: "PDF", Description: "d"}, "PDF", []string{`name: "PDF" may hold only lower-case letters a-z, digits and hyphens`}},
		{"underscore", Skill{Name: "a_b", Description: "d"}, "a_b", []string{`name: "a_b" may hold only`}},
		{"dot", Skill{Name: "a.b", Description: "d"}, "a.b", []string{`name: "a.b" may hold only`}},
		{"non-ASCII", Skill{Name: "café", Description: "d"}, "café", []string{`name: "café" may hold only`}},
		{"leading hyphen", Skill{Name: "-a", Description: "d"}, "-a", []string{`name: "-a" must not start or end with a hyphen`}},
		{"trailing hyphen", Skill{Name: "a-", Description: "d"}, "a-", []string{`name: "a-" must not start or end with a hyphen`}},
		{"double hyphen", Skill{Name: "a--b", Description: "d"}, "a--b", []string{`name: "a--b" must not hold two hyphens in a row`}},
		{"folder mismatch", Skill{Name: "pdf", Description: "d"}, "docx", []string{`name: "pdf" does not match the folder name "docx"`}},
		{"description too long", Skill{Name: "a", Description: long(1025)}, "a", []string{"description: 1025 characters, more than 1024"}},
		{"compatibility too long", Skill{Name: "a", Description: "d", Compatibility: long(501)}, "a", []string{"compatibility: 501 characters, more than 500"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.skill.Validate(tc.folder)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Validate = %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want it to start %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// FuzzParse checks that Parse never panics, stays within its limits, and
// that what it accepts is consistent: the body is the tail of the input, and
// parsing the same input again gives the same skill. The seed corpus is in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\n---\nbody\n"))
	f.Add([]byte("---\r\nname: a\r\ndescription: b\r\nmetadata:\r\n  k: v\r\n---\r\n"))
	f.Add([]byte("---\n" + laughs + "---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if s != nil {
				t.Fatal("Parse returned a skill and an error")
			}
			return
		}
		if len(data) > MaxFileSize {
			t.Fatalf("Parse accepted %d bytes", len(data))
		}
		if !strings.HasSuffix(string(data), s.Body) {
			t.Fatalf("body %q is not the end of the input", s.Body)
		}
		if s.BodyLine < 3 || s.BodyLine > strings.Count(string(data), "\n")+2 {
			t.Fatalf("body line %d out of range", s.BodyLine)
		}
		again, err := Parse(data)
		if err != nil || !cmp.Equal(s, again) {
			t.Fatalf("second parse differs: %v\n%s", err, cmp.Diff(s, again))
		}
		s.Validate("a") // must not panic
	})
}

// FuzzParseFrontmatter fuzzes the YAML alone, inside valid delimiters, so
// that the fuzzer spends its time on the decoder and the tree checks.
func FuzzParseFrontmatter(f *testing.F) {
	f.Add("name: a\ndescription: b")
	f.Add("metadata: {a: b, c: 1}")
	f.Add("name: &a x\nlicense: *a")
	f.Add("name: !!binary YQ==")
	f.Add("- a\n- b")
	f.Fuzz(func(t *testing.T, fm string) {
		s, err := Parse([]byte("---\n" + fm + "\n---\nbody"))
		if err != nil {
			return
		}
		if s.Body != "body" && !strings.Contains(fm, "---") {
			t.Fatalf("body = %q", s.Body)
		}
		if strings.Contains(fm, "&") && strings.Contains(fm, "*") && len(s.Metadata) > 1000 {
			t.Fatalf("aliases expanded into %d metadata entries", len(s.Metadata))
		}
	})
}

func ExampleParse() {
	s, err := Parse([]byte("---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\n# PDF forms\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s\n", s.Name, s.Description)
	fmt.Println(s.Validate("pdf-forms"))
	fmt.Println(s.Validate("pdf"))
	// Output:
	// pdf-forms: Fill in PDF forms.
	// <nil>
	// name: "pdf-forms" does not match the folder name "pdf"
}
