package policy

import (
	"fmt"
	"strconv"
)

// Mode is how far Agent Zero may go. Modes are ordered:
// Observe < Fix < Autonomous.
type Mode int

const (
	// Observe reports and never writes to the repository. It is the default.
	Observe Mode = iota
	// Fix may write a change the authorization chain allows.
	Fix
	// Autonomous is the highest mode; its writes always need an isolated
	// runner (see [NeedsIsolation]).
	Autonomous
)

var modeNames = [...]string{Observe: "observe", Fix: "fix", Autonomous: "autonomous"}

// ParseMode parses "observe", "fix" or "autonomous", exactly (lower case).
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return Observe, fmt.Errorf("unknown mode %s (want observe, fix or autonomous)", quoteShort(s))
}

// String returns the mode's name as ParseMode reads it, or Mode(n) for a
// value that is not a mode.
func (m Mode) String() string {
	if m.valid() {
		return modeNames[m]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

func (m Mode) valid() bool { return m >= Observe && m <= Autonomous }

// Effective is the minimum of the operator's ceiling, the repository
// policy's mode and what the event (or the --mode flag) asks for: nothing
// can raise a mode another one caps. A value that is not a mode counts as
// Observe.
func Effective(ceiling, repo, requested Mode) Mode {
	m := Autonomous
	for _, x := range [...]Mode{ceiling, repo, requested} {
		if !x.valid() {
			return Observe
		}
		m = min(m, x)
	}
	return m
}
