//go:build !linux

package spawn

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// runWith makes the checks of prep and refuses to start anything: the
// guarantees of this package (killing a process group only while its leader
// is unreaped, bubblewrap) are built on Linux system calls.
func runWith(_ context.Context, prep func() (*prepared, error)) (Result, error) {
	if _, err := prep(); err != nil {
		return Result{}, err
	}
	return Result{}, fmt.Errorf("running processes on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// startWith refuses to start anything, as runWith does.
func startWith(_ context.Context, prep func() (*prepared, error)) (*Process, error) {
	if _, err := prep(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("running processes on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// LimitsAvailable reports that resource limits cannot be enforced: they
// are built on Linux cgroups.
func LimitsAvailable() error {
	return fmt.Errorf("%w on %s", ErrNoCgroups, runtime.GOOS)
}
