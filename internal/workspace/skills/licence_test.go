package skills

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/licensecheck"
)

func licenceText(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "licences", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestApacheTextIsAnthropics ties the Apache-2.0 test file to the catalog:
// it is the LICENSE.txt blob of the pinned anthropics/skills folders.
func TestApacheTextIsAnthropics(t *testing.T) {
	data := licenceText(t, "apache-2.0.txt")
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	if got, want := fmt.Sprintf("%x", h.Sum(nil)), "4f881c52d1f72f4cfb720e339e2d35c3058d01a9"; got != want {
		t.Errorf("git object id %s, want %s", got, want)
	}
}

func TestClassify(t *testing.T) {
	mit := licenceText(t, "mit.txt")
	apache := licenceText(t, "apache-2.0.txt")
	gpl := licenceText(t, "gpl-3.0.txt")
	custom := licenceText(t, "custom.txt")
	restricted := append(bytes.Clone(mit), bytes.Repeat([]byte("You may not copy, share or sell these materials for any purpose. "), 10)...)
	atLimit := append(bytes.Clone(mit), bytes.Repeat([]byte(" "), maxLicenceBytes-len(mit))...)
	overLimit := append(bytes.Clone(atLimit), ' ')
	files := func(kv ...any) map[string][]byte {
		m := make(map[string][]byte)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].([]byte)
		}
		return m
	}
	skillMD := []byte("---\nname: s\ndescription: d\nlicense: MIT\n---\nBody.\n")
	const copyNot = ": view on GitHub; Zero does not copy it"

	tests := []struct {
		name         string
		folder, repo map[string][]byte
		want         Licence
	}{
		{"MIT", files("LICENSE", mit), nil,
			Licence{LicencePermissive, "MIT", "LICENSE", "Permissive (MIT): attribution kept"}},
		{"Apache-2.0 in LICENSE.txt", files("LICENSE.txt", apache, "SKILL.md", skillMD), nil,
			Licence{LicencePermissive, "Apache-2.0", "LICENSE.txt", "Permissive (Apache-2.0): attribution kept"}},
		{"CC-BY-4.0", files("license.md", licenceText(t, "cc-by-4.0.txt")), nil,
			Licence{LicencePermissive, "CC-BY-4.0", "license.md", "Permissive (CC-BY-4.0): attribution kept"}},
		{"CC-BY-SA-4.0", files("COPYING", licenceText(t, "cc-by-sa-4.0.txt")), nil,
			Licence{LicenceShareAlike, "CC-BY-SA-4.0", "COPYING", "Share-alike: keep attribution"}},
		{"GPL-3.0 is custom", files("LICENSE", gpl), nil,
			Licence{LicenceCustom, "GPL-3.0", "LICENSE", "GPL-3.0 terms" + copyNot}},
		{"read but not copy", files("LICENSE", custom), nil,
			Licence{LicenceCustom, "", "LICENSE", "Custom terms" + copyNot}},
		{"MIT with restrictions", files("LICENSE", restricted), nil,
			Licence{LicenceCustom, "", "LICENSE", "MIT with other terms (58% recognised)" + copyNot}},
		{"two licences in one file", files("LICENSE", append(bytes.Clone(mit), gpl...)), nil,
			Licence{LicenceCustom, "", "LICENSE", "Several licences (MIT, GPL-3.0)" + copyNot}},
		{"licence files disagree", files("LICENSE", mit, "COPYING", gpl), nil,
			Licence{LicenceCustom, "", "COPYING", "Licence files disagree (COPYING, LICENSE)" + copyNot}},
		{"licence files agree", files("LICENSE", mit, "LICENSE.md", mit), nil,
			Licence{LicencePermissive, "MIT", "LICENSE", "Permissive (MIT): attribution kept"}},
		{"at the size limit", files("LICENSE", atLimit), nil,
			Licence{LicencePermissive, "MIT", "LICENSE", "Permissive (MIT): attribution kept"}},
		{"one byte over", files("LICENSE", overLimit), nil,
			Licence{LicenceCustom, "", "LICENSE", "Licence file over 256 KiB" + copyNot}},
		{"the folder's own wins", files("LICENSE", custom), files("LICENSE", mit),
			Licence{LicenceCustom, "", "LICENSE", "Custom terms" + copyNot}},
		{"else the repository's", files("SKILL.md", skillMD), files("LICENSE", apache),
			Licence{LicencePermissive, "Apache-2.0", "LICENSE", "Permissive (Apache-2.0): attribution kept"}},
		{"frontmatter only", files("SKILL.md", skillMD), files("README.md", []byte("MIT licensed.")),
			Licence{LicenceNone, "", "", "No licence file" + copyNot}},
		{"no files", nil, nil,
			Licence{LicenceNone, "", "", "No licence file" + copyNot}},
		{"a subfolder's licence does not count", files("scripts/LICENSE", mit), nil,
			Licence{LicenceNone, "", "", "No licence file" + copyNot}},
		{"other names do not count", files("LICENSE.rst", mit, "LICENſE", mit, "./LICENSE", mit), nil,
			Licence{LicenceNone, "", "", "No licence file" + copyNot}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Classify(tc.folder, tc.repo)); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCopyable(t *testing.T) {
	want := map[LicenceClass]bool{
		LicencePermissive: true, LicenceShareAlike: true, LicenceNone: false, LicenceCustom: false, "": false,
	}
	for class, copyable := range want {
		if got := (Licence{Class: class}).Copyable(); got != copyable {
			t.Errorf("Licence{Class: %q}.Copyable() = %v, want %v", class, got, copyable)
		}
	}
}

// TestLicenceIDs checks that the IDs Classify trusts are ones licensecheck
// reports, so that none is misspelled into never matching.
func TestLicenceIDs(t *testing.T) {
	known := make(map[string]bool)
	for _, l := range licensecheck.BuiltinLicenses() {
		known[l.ID] = true
	}
	for _, id := range append(append([]string{}, permissiveIDs...), shareAlikeIDs...) {
		if !known[id] {
			t.Errorf("%s is not a licensecheck ID", id)
		}
	}
	for _, id := range shareAlikeIDs {
		if !strings.HasPrefix(id, "CC-BY-SA-") {
			t.Errorf("share-alike %s is not CC-BY-SA", id)
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add(licenceText(f, "mit.txt"))
	f.Add(licenceText(f, "custom.txt"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, text []byte) {
		l := Classify(map[string][]byte{"LICENSE": text}, nil)
		if l.File != "LICENSE" || l.Note == "" {
			t.Errorf("Classify = %+v, want File LICENSE and a note", l)
		}
		if l.Copyable() && l.SPDX == "" {
			t.Errorf("copyable without an SPDX ID: %+v", l)
		}
	})
}
