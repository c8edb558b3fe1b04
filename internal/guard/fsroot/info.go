package fsroot

import (
	"io/fs"
	"time"
)

// Info describes a file for get_file_info.
type Info struct {
	fs.FileInfo
	// Created is the file's birth time, or zero where the system does not
	// record one.
	Created time.Time
	// Accessed is the last access time, or zero where unknown.
	Accessed time.Time
}

// Info describes the file or directory p leads to.
func (p *Path) Info() (Info, error) {
	fi, err := p.Stat()
	if err != nil {
		return Info{}, err
	}
	info := Info{FileInfo: fi}
	info.Created, info.Accessed = p.times(fi)
	return info, nil
}
