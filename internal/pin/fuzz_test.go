package pin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// configFrom builds a config from fuzz input: fields are separated by \x01,
// list items by \x00, so the fuzzer moves bytes between fields and items. A
// ninth field, when there is one, is the registry reference, its four
// fields separated by \x00.
func configFrom(s string) ServerConfig {
	f := strings.SplitN(s, "\x01", 9)
	var reg *Registry
	if len(f) == 9 {
		r := strings.SplitN(f[8], "\x00", 4)
		for len(r) < 4 {
			r = append(r, "")
		}
		reg = &Registry{URL: r[0], Name: r[1], Version: r[2], EntrySHA256: r[3]}
	}
	for len(f) < 8 {
		f = append(f, "")
	}
	list := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "\x00")
	}
	return ServerConfig{
		Kind: f[0], Command: f[1], Args: list(f[2]), Cwd: f[3],
		EnvNames: list(f[4]), URL: f[5], HeaderNames: list(f[6]), Program: f[7], Registry: reg,
	}
}

// FuzzCanonical checks that Canonical is deterministic, never panics, decodes
// back to the config it encoded (so it is injective), and that two configs
// encode alike exactly when they are the same after normalizing.
func FuzzCanonical(f *testing.F) {
	f.Add("stdio\x01npx\x01a b\x01\x01\x01\x01", "stdio\x01npx\x01a\x00b\x01\x01\x01\x01")
	f.Add("stdio\x01\x01\x00\x01\x01\x01\x01", "stdio\x01\x01\x01\x01\x01\x01")
	f.Add("http\x01\x01\x01\x01\x01https://x\x01x-a\x00X-B", "http\x01\x01\x01\x01\x01https://x\x01x-b\x00x-a")
	f.Add("\x01x\ncwd 0:\x01\x01\x01\x01\x01", "\x01x\x01\x01\x01\x01\x01")
	f.Add("\x01\x011:a\x01\x01B\x00A\x01\x01", "\x01\x01a\x01\x01A\x00B\x01\x01")
	f.Add("stdio\x01npx\x01\x01\x01\x01\x01\x01\x01", "stdio\x01npx\x01\x01\x01\x01\x01\x01\x01\x00\x00\x00")
	f.Add("stdio\x01npx\x01\x01\x01\x01\x01\x01\x01u\x00n\x001\x00ab", "stdio\x01npx\x01\x01\x01\x01\x01\x01\x01u\x00n\x001a\x00b")
	f.Fuzz(func(t *testing.T, a, b string) {
		ca, cb := configFrom(a), configFrom(b)
		ea, eb := Canonical(ca), Canonical(cb)
		if string(ea) != string(Canonical(ca)) {
			t.Fatal("Canonical is not deterministic")
		}
		got, err := parseCanonical(ea)
		if err != nil {
			t.Fatalf("%q: %v", ea, err)
		}
		if diff := cmp.Diff(normalize(ca), got, cmpConfig); diff != "" {
			t.Fatalf("decoded config differs (-want +got):\n%s", diff)
		}
		same := cmp.Equal(normalize(ca), normalize(cb), cmpConfig)
		if (string(ea) == string(eb)) != same {
			t.Fatalf("configs equal after normalizing: %v; encodings equal: %v\n%q\n%q", same, !same, ea, eb)
		}
		if (Fingerprint(ca) == Fingerprint(cb)) != same {
			t.Fatalf("fingerprints disagree with encodings")
		}
	})
}

// FuzzToolHash checks that ToolHash never panics, is deterministic, and
// agrees with itself on a schema's canonical form; that a valid schema in
// canonical form is a fixed point; and that name and description never
// run into each other, nor do title and description.
func FuzzToolHash(f *testing.F) {
	f.Add("read_file", "Read", "Read.", []byte(readFileSchema), []byte(readFileAnn))
	f.Add("", "", "", []byte(`{"a":1,"a":2}`), []byte(nil))
	f.Add("x", "t", "y", []byte(`[1.0, "\u00e9", {"b":null,"a":[true,false]}]`), []byte(`null`))
	f.Add("x", "", "y", []byte("\"\\ud800\x7f\""), []byte(` {} `))
	f.Fuzz(func(t *testing.T, name, title, desc string, schema, ann []byte) {
		tl := Tool{Name: name, Title: title, Description: desc, InputSchema: schema, OutputSchema: ann, Annotations: ann}
		h1, err1 := ToolHash(tl)
		h2, err2 := ToolHash(tl)
		if h1 != h2 || (err1 == nil) != (err2 == nil) {
			t.Fatal("ToolHash is not deterministic")
		}
		if err1 != nil {
			return
		}
		cs, err := canonicalJSON(schema)
		if err != nil {
			t.Fatal(err)
		}
		ca, err := canonicalJSON(ann)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(cs) || !json.Valid(ca) {
			t.Fatalf("canonical forms are not valid JSON: %q %q", cs, ca)
		}
		again, err := canonicalJSON(cs)
		if err != nil || string(again) != string(cs) {
			t.Fatalf("canonical form %q is not a fixed point: %q %v", cs, again, err)
		}
		if h3, err := ToolHash(Tool{Name: name, Title: title, Description: desc, InputSchema: cs, OutputSchema: ca, Annotations: ca}); err != nil || h3 != h1 {
			t.Fatalf("canonical form hashes differently: %v", err)
		}
		if len(desc) > 0 {
			moved := tl
			moved.Title, moved.Description = title+desc[:1], desc[1:]
			if h4, err := ToolHash(moved); err != nil || h4 == h1 {
				t.Fatalf("moving a byte from description to title keeps the hash: %v", err)
			}
		}
	})
}
