package fsroot

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// raceEnabled is set by race_test.go in a build with the race detector.
var raceEnabled bool

// direntBuffer writes records as getdents64 does: d_ino, d_off, d_reclen,
// d_type, the name and a NUL, padded to 8 bytes.
func direntBuffer(names []string, types []byte) []byte {
	var buf []byte
	for i, name := range names {
		reclen := (19 + len(name) + 1 + 7) &^ 7
		rec := make([]byte, reclen)
		binary.LittleEndian.PutUint64(rec, uint64(i+1))
		binary.LittleEndian.PutUint16(rec[16:], uint16(reclen))
		rec[18] = types[i]
		copy(rec[19:], name)
		buf = append(buf, rec...)
	}
	return buf
}

// TestParseDirents reads names and types from a getdents64 buffer, leaving
// out . and .., in two allocations for a whole buffer: one for the names
// and one for the entries, instead of one per name.
func TestParseDirents(t *testing.T) {
	names := []string{".", "..", "a", "dir", "link", "fifo"}
	types := []byte{unix.DT_DIR, unix.DT_DIR, unix.DT_REG, unix.DT_DIR, unix.DT_LNK, unix.DT_FIFO}
	for i := range 50 {
		names = append(names, fmt.Sprintf("file%02d.txt", i))
		types = append(types, unix.DT_REG)
	}
	buf := direntBuffer(names, types)
	got := parseDirents(-1, buf, nil)
	if len(got) != len(names)-2 {
		t.Fatalf("%d entries, want %d", len(got), len(names)-2)
	}
	want := map[string]fs.FileMode{"a": 0, "dir": fs.ModeDir, "link": fs.ModeSymlink, "fifo": fs.ModeIrregular, "file49.txt": 0}
	for _, d := range got {
		if typ, ok := want[d.name]; ok && typ != d.typ {
			t.Errorf("%s: type %v, want %v", d.name, d.typ, typ)
		}
	}
	if !slices.ContainsFunc(got, func(d dirent) bool { return d.name == "file49.txt" }) {
		t.Error("the last record is missing")
	}
	if raceEnabled {
		return
	}
	if n := testing.AllocsPerRun(100, func() { parseDirents(-1, buf, nil) }); n > 2 {
		t.Errorf("%v allocations for a buffer of %d names, want at most 2", n, len(names))
	}
}
