package skills

import (
	"bytes"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/hiddentext"
)

// KindBinary is the Kind of the one finding for a file that is not text.
const KindBinary = "binary"

// A Finding is one thing the preview flags in a skill's file.
type Finding struct {
	File string `json:"file"`
	// Line and Column are where it starts, from 1; both are 0 for
	// [KindBinary].
	Line   int `json:"line"`
	Column int `json:"column"`
	// Kind is a [hiddentext.Kind] or [KindBinary].
	Kind string `json:"kind"`
	// Detail names hidden characters by code point, never raw.
	Detail string `json:"detail"`
}

// Findings returns what the preview flags in the file at path: the hidden
// content [hiddentext.Scan] finds, in order and as bounded there, or for a
// file holding a NUL byte or invalid UTF-8, one [KindBinary] finding.
func Findings(path string, data []byte) []Finding {
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return []Finding{{File: path, Kind: KindBinary, Detail: "binary file"}}
	}
	var out []Finding
	for _, f := range hiddentext.Scan(string(data)) {
		out = append(out, Finding{File: path, Line: f.Line, Column: f.Column, Kind: string(f.Kind), Detail: f.Detail})
	}
	return out
}
