//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package audit

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking lock on f for as long as it is
// open, so that two writers never extend the same chain.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
