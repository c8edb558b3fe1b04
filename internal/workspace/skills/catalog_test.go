package skills

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalog(t *testing.T) {
	entries, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 4 {
		t.Errorf("%d catalog entries, want at least 4", len(entries))
	}
	for _, e := range entries {
		if err := checkEntry(e); err != nil {
			t.Error(err)
		}
		got, ok := Lookup(e.ID)
		if !ok || got != e {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v, true", e.ID, got, ok, e)
		}
	}
	if _, ok := Lookup("no-such-skill"); ok {
		t.Error("Lookup of an unknown id succeeded")
	}
	entries[0].Commit = "changed"
	if again, _ := Catalog(); again[0].Commit == "changed" {
		t.Error("Catalog returned its own slice")
	}
}

func validEntry() Entry {
	return Entry{
		ID: "pdf-tools", Name: "pdf-tools", Description: "Work with PDF files.",
		Repo: "example/skills", Folder: "skills/pdf-tools",
		Commit: "9d2f1ae187231d8199c64b5b762e1bdf2244733d", Licence: "MIT",
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseCatalog(t *testing.T) {
	good := validEntry()
	other := validEntry()
	other.ID = "other"
	got, err := parseCatalog(marshal(t, []Entry{good, other}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Entry{good, other}, got); diff != "" {
		t.Errorf("parseCatalog (-want +got):\n%s", diff)
	}
	for _, folder := range []string{".claude/skills/x", "a_b/c-d/e.f", "x"} {
		e := validEntry()
		e.Folder = folder
		if _, err := parseCatalog(marshal(t, []Entry{e})); err != nil {
			t.Errorf("folder %q: %v", folder, err)
		}
	}
}

func TestParseCatalogRefuses(t *testing.T) {
	with := func(edit func(*Entry)) []byte {
		e := validEntry()
		edit(&e)
		return marshal(t, []Entry{e})
	}
	tests := []struct {
		name string
		data []byte
		want string // in the error
	}{
		{"duplicate id", marshal(t, []Entry{validEntry(), validEntry()}), `entry 1: duplicate id "pdf-tools"`},
		{"short commit", with(func(e *Entry) { e.Commit = "9d2f1ae" }), "bad commit"},
		{"upper-case commit", with(func(e *Entry) { e.Commit = strings.ToUpper(e.Commit) }), "bad commit"},
		{"41-digit commit", with(func(e *Entry) { e.Commit += "0" }), "bad commit"},
		{"../ folder", with(func(e *Entry) { e.Folder = "../skills/pdf" }), "bad folder"},
		{"inner .. folder", with(func(e *Entry) { e.Folder = "skills/../../etc" }), "bad folder"},
		{"absolute folder", with(func(e *Entry) { e.Folder = "/skills/pdf" }), "bad folder"},
		{"unclean folder", with(func(e *Entry) { e.Folder = "skills//pdf" }), "bad folder"},
		{"trailing slash", with(func(e *Entry) { e.Folder = "skills/pdf/" }), "bad folder"},
		{"dot folder", with(func(e *Entry) { e.Folder = "." }), "bad folder"},
		{"empty folder", with(func(e *Entry) { e.Folder = "" }), "bad folder"},
		{"backslash folder", with(func(e *Entry) { e.Folder = `skills\..\pdf` }), "bad folder"},
		{"upper-case id", with(func(e *Entry) { e.ID = "PDF" }), "bad id"},
		{"id with a slash", with(func(e *Entry) { e.ID = "a/b" }), "bad id"},
		{"leading hyphen", with(func(e *Entry) { e.ID = "-pdf" }), "bad id"},
		{"empty id", with(func(e *Entry) { e.ID = "" }), "bad id"},
		{"repo without owner", with(func(e *Entry) { e.Repo = "skills" }), "bad repo"},
		{"repo with three parts", with(func(e *Entry) { e.Repo = "a/b/c" }), "bad repo"},
		{"repo name ..", with(func(e *Entry) { e.Repo = "a/.." }), "bad repo"},
		{"repo URL", with(func(e *Entry) { e.Repo = "https://github.com/a/b" }), "bad repo"},
		{"empty name", with(func(e *Entry) { e.Name = "" }), "bad name"},
		{"control character in name", with(func(e *Entry) { e.Name = "a\x1b[2Jb" }), "bad name"},
		{"empty description", with(func(e *Entry) { e.Description = " " }), "bad description"},
		{"empty licence", with(func(e *Entry) { e.Licence = "" }), "bad licence"},
		{"unknown field", []byte(`[{"id":"x","verified":true}]`), "unknown field"},
		{"trailing data", append(marshal(t, []Entry{validEntry()}), "[]"...), "data after the list"},
		{"not a list", []byte(`{"entries":[]}`), "parse catalog"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCatalog(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseCatalog = %v, %v; want an error holding %q", got, err, tc.want)
			}
		})
	}
}

func FuzzParseCatalog(f *testing.F) {
	f.Add(catalogJSON)
	f.Add([]byte(`[{"id":"a","folder":"../x"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseCatalog(data)
		if err != nil {
			return
		}
		seen := make(map[string]bool)
		for _, e := range entries {
			if err := checkEntry(e); err != nil || seen[e.ID] {
				t.Errorf("accepted %+v: %v", e, err)
			}
			seen[e.ID] = true
			if strings.Contains("/"+e.Folder+"/", "/../") {
				t.Errorf("accepted folder %q", e.Folder)
			}
		}
	})
}
