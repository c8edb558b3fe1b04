//go:build unix && !linux

package fsroot

import "os"

// renameNoReplace renames after checking that dstName is free; see
// renameChecked for the window this leaves.
func renameNoReplace(srcDir *os.File, srcName string, dstDir *os.File, dstName string) error {
	return renameChecked(srcDir, srcName, dstDir, dstName)
}
