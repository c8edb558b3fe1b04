package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// SmolVMRunner would make guests as smolvm microVMs, each with its own
// kernel. Its probe asks for a usable KVM device (opened read-write,
// answering the KVM API version 12). This slice boots no microVM: where the
// device is usable the probe still refuses, saying so, and Run never runs
// anything.
type SmolVMRunner struct {
	KVM string // the KVM device; "" means /dev/kvm
}

// Backend is SmolVM.
func (SmolVMRunner) Backend() Backend { return SmolVM }

// kvmAPIVersion is what KVM_GET_API_VERSION answers on every KVM since
// Linux 2.6.22.
const kvmAPIVersion = 12

// kvmGetAPIVersion is the ioctl _IO(0xAE, 0x00).
const kvmGetAPIVersion = 0xAE00

// Probe says why smolvm cannot make a guest here.
func (r SmolVMRunner) Probe(context.Context) error {
	kvm := r.KVM
	if kvm == "" {
		kvm = "/dev/kvm"
	}
	fd, err := unix.Open(kvm, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("no usable %s: %w", kvm, &os.PathError{Op: "open", Path: kvm, Err: err})
	}
	v, err := unix.IoctlRetInt(fd, kvmGetAPIVersion)
	unix.Close(fd)
	if err != nil || v != kvmAPIVersion {
		return fmt.Errorf("no usable %s: it answers no KVM API version %d (%d, %v)", kvm, kvmAPIVersion, v, err)
	}
	return errors.New("booting a smolvm guest is not built yet")
}

// Run refuses: it wraps ErrUnavailable with the probe's reason.
func (r SmolVMRunner) Run(ctx context.Context, _ Guest) (Result, error) {
	return Result{Backend: SmolVM, ExitCode: -1}, fmt.Errorf("%w: %s: %v", ErrUnavailable, SmolVM, r.Probe(ctx))
}
