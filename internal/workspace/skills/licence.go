package skills

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/licensecheck"
)

// A LicenceClass says whether Zero may copy a skill under its licence.
type LicenceClass string

const (
	// LicencePermissive is a known permissive licence: the skill can be
	// copied, keeping the attribution.
	LicencePermissive LicenceClass = "permissive"
	// LicenceShareAlike is a Creative Commons share-alike licence: the
	// skill can be copied, keeping the attribution.
	LicenceShareAlike LicenceClass = "share-alike"
	// LicenceNone means no licence file was found.
	LicenceNone LicenceClass = "none"
	// LicenceCustom is anything else: other licences, terms licensecheck
	// does not recognise, or several licences at once.
	LicenceCustom LicenceClass = "custom"
)

// A Licence is the classification of a skill's licence file.
type Licence struct {
	Class LicenceClass `json:"class"`
	// SPDX is the licence recognised, such as "MIT", or "" if none or
	// several were.
	SPDX string `json:"spdx"`
	// File is the key of the file read, "" if none was.
	File string `json:"file"`
	// Note is the short text the UI shows.
	Note string `json:"note"`
}

// Copyable reports whether Zero may copy the skill.
func (l Licence) Copyable() bool {
	return l.Class == LicencePermissive || l.Class == LicenceShareAlike
}

const (
	// minCoverage is the share of a licence file, in percent of its words,
	// that must match the licence recognised. It is the threshold pkgsite
	// uses with licensecheck to call a module redistributable.
	minCoverage = 75
	// maxLicenceBytes bounds a licence file read; GPL-3.0 is 35 KB.
	maxLicenceBytes = 256 << 10
	// maxNoteIDs bounds the licence IDs a note lists.
	maxNoteIDs = 3
)

// licenceNames are the licence file names, in lower case.
var licenceNames = []string{"license", "license.md", "license.txt", "copying"}

// permissiveIDs and shareAlikeIDs are licensecheck IDs; any other ID is
// custom.
var (
	permissiveIDs = []string{
		"0BSD", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "BSL-1.0", "BlueOak-1.0.0",
		"CC-BY-1.0", "CC-BY-2.0", "CC-BY-2.5", "CC-BY-3.0", "CC-BY-3.0-AT", "CC-BY-4.0",
		"CC0-1.0", "ISC", "MIT", "MIT-0", "PostgreSQL", "UPL-1.0", "Unlicense", "Zlib",
	}
	shareAlikeIDs = []string{
		"CC-BY-SA-1.0", "CC-BY-SA-2.0", "CC-BY-SA-2.5", "CC-BY-SA-3.0", "CC-BY-SA-3.0-AT", "CC-BY-SA-4.0",
	}
)

// Classify classifies the licence of a skill from its files, keyed by slash
// path relative to their root: the licence files (LICENSE, LICENSE.md,
// LICENSE.txt, COPYING, in any ASCII case) at the top of folderFiles, or if
// there are none, at the top of repoFiles. Files in subfolders do not count,
// and neither does anything a SKILL.md says about its licence.
func Classify(folderFiles, repoFiles map[string][]byte) Licence {
	for _, files := range []map[string][]byte{folderFiles, repoFiles} {
		if names := licenceFiles(files); len(names) > 0 {
			return classifyFiles(files, names)
		}
	}
	return Licence{Class: LicenceNone, Note: "No licence file: view on GitHub; Zero does not copy it"}
}

// licenceFiles returns the sorted keys of files that are licence files.
func licenceFiles(files map[string][]byte) []string {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if slices.Contains(licenceNames, asciiLower(name)) {
			names = append(names, name)
		}
	}
	return names
}

// asciiLower lowers ASCII letters only, so that a name such as "LICENſE"
// (U+017F, which Unicode folds to s) is not taken for LICENSE.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// classifyFiles classifies the named licence files, which must agree.
func classifyFiles(files map[string][]byte, names []string) Licence {
	first := classifyText(files[names[0]])
	first.File = names[0]
	for _, name := range names[1:] {
		if l := classifyText(files[name]); l.Class != first.Class || l.SPDX != first.SPDX {
			return custom(names[0], "", fmt.Sprintf("Licence files disagree (%s)", strings.Join(names, ", ")))
		}
	}
	return first
}

// classifyText classifies one licence file's text.
func classifyText(text []byte) Licence {
	if len(text) > maxLicenceBytes {
		return custom("", "", fmt.Sprintf("Licence file over %d KiB", maxLicenceBytes>>10))
	}
	cov := licensecheck.Scan(text)
	var ids []string
	for _, m := range cov.Match {
		if !slices.Contains(ids, m.ID) {
			ids = append(ids, m.ID)
		}
	}
	switch {
	case len(ids) == 0:
		return custom("", "", "Custom terms")
	case len(ids) > 1:
		return custom("", "", "Several licences ("+listIDs(ids)+")")
	case cov.Percent < minCoverage:
		return custom("", "", fmt.Sprintf("%s with other terms (%.0f%% recognised)", ids[0], cov.Percent))
	}
	id := ids[0]
	switch {
	case slices.Contains(permissiveIDs, id):
		return Licence{Class: LicencePermissive, SPDX: id, Note: "Permissive (" + id + "): attribution kept"}
	case slices.Contains(shareAlikeIDs, id):
		return Licence{Class: LicenceShareAlike, SPDX: id, Note: "Share-alike: keep attribution"}
	}
	return custom("", id, id+" terms")
}

func custom(file, spdx, reason string) Licence {
	return Licence{Class: LicenceCustom, SPDX: spdx, File: file, Note: reason + ": view on GitHub; Zero does not copy it"}
}

// listIDs lists at most maxNoteIDs licence IDs.
func listIDs(ids []string) string {
	if len(ids) <= maxNoteIDs {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:maxNoteIDs], ", "), len(ids)-maxNoteIDs)
}
