//go:build !linux

package spawn

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// run refuses to start anything: the guarantees of this package (killing a
// process group only while its leader is unreaped, bubblewrap) are built on
// Linux system calls.
func (p *prepared) run(context.Context) (Result, error) {
	return Result{}, fmt.Errorf("running processes on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// start refuses to start anything, as run does.
func (p *prepared) start(context.Context) (*Process, error) {
	return nil, fmt.Errorf("running processes on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// LimitsAvailable reports that resource limits cannot be enforced: they
// are built on Linux cgroups.
func LimitsAvailable() error {
	return fmt.Errorf("%w on %s", ErrNoCgroups, runtime.GOOS)
}
