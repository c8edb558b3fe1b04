package cli

import "github.com/zero-dev/zero/internal/sandbox/guest"

// guestWord is the hidden command "zero guest ...": the guest helper
// (internal/sandbox/guest) that a sandboxed thread's file tools run inside
// a guest. It is not in the command tree, so no help lists it: its
// arguments, JSON answers and exit codes are guest.Main's own.
const guestWord = "guest"

func runGuest(args []string, stdio Stdio) int {
	return guest.Main(args, stdio.In, stdio.Out, stdio.Err)
}
