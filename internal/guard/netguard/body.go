package netguard

import (
	"fmt"
	"io"
)

// cappedBody yields at most max bytes of a response body; reading more fails
// with ErrBodyTooLarge. A body whose declared length is already over the cap
// fails on the first read, before anything is downloaded.
type cappedBody struct {
	rc     io.ReadCloser
	left   int64 // bytes still allowed
	max    int64
	length int64 // the declared Content-Length, or -1
	err    error // sticky
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.length > b.max {
		b.err = fmt.Errorf("%w: the server declared %d bytes, over the %s limit", ErrBodyTooLarge, b.length, sizeString(b.max))
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		n = int(b.left)
		b.left = 0
		b.err = fmt.Errorf("%w: over the %s limit", ErrBodyTooLarge, sizeString(b.max))
		return n, b.err
	}
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// sizeString writes a byte count for people: 10 MiB, 64 KiB or 1000 bytes.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}
