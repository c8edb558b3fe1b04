//go:build !linux

package fsroot

import (
	"io/fs"
	"time"
)

// times reports no birth or access time where statx is missing.
func (p *Path) times(fs.FileInfo) (created, accessed time.Time) { return }
