package policy

import (
	"math/rand/v2"
	"testing"
	"testing/quick"
)

var allModes = []Mode{Observe, Fix, Autonomous}

func TestParseMode(t *testing.T) {
	for _, m := range allModes {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	for _, s := range []string{"", "Observe", "FIX", " fix", "fix ", "auto", "0", "1", "observe\n"} {
		if got, err := ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q) = %v, want an error", s, got)
		} else if got != Observe {
			t.Errorf("ParseMode(%q) returned %v with its error, want observe", s, got)
		}
	}
}

func TestModeOrderAndString(t *testing.T) {
	if !(Observe < Fix && Fix < Autonomous) {
		t.Fatalf("modes out of order: %d %d %d", Observe, Fix, Autonomous)
	}
	if Mode(0) != Observe {
		t.Errorf("the zero Mode is %v, want observe", Mode(0))
	}
	for m, want := range map[Mode]string{Observe: "observe", Fix: "fix", Autonomous: "autonomous", 7: "Mode(7)", -1: "Mode(-1)"} {
		if got := m.String(); got != want {
			t.Errorf("Mode(%d).String() = %q, want %q", int(m), got, want)
		}
	}
}

// TestEffectiveIsMinimum: for every combination of modes, Effective is the
// minimum, so it never exceeds any of its inputs and equals one of them.
func TestEffectiveIsMinimum(t *testing.T) {
	n := 0
	for _, c := range allModes {
		for _, r := range allModes {
			for _, q := range allModes {
				n++
				got := Effective(c, r, q)
				if want := min(c, r, q); got != want {
					t.Errorf("Effective(%v, %v, %v) = %v, want %v", c, r, q, got, want)
				}
				if got > c || got > r || got > q {
					t.Errorf("Effective(%v, %v, %v) = %v exceeds an input", c, r, q, got)
				}
			}
		}
	}
	if n != 27 {
		t.Fatalf("checked %d combinations, want 27", n)
	}
	// Random triples, including values that are not modes: those count as
	// observe, and a valid result never exceeds a valid input.
	prop := func(a, b, c int8) bool {
		ms := []Mode{Mode(a % 4), Mode(b % 4), Mode(c % 4)}
		got := Effective(ms[0], ms[1], ms[2])
		if !got.valid() {
			return false
		}
		for _, m := range ms {
			if !m.valid() {
				return got == Observe
			}
		}
		return got == min(ms[0], ms[1], ms[2])
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
	for range 1000 {
		c, r, q := allModes[rand.IntN(3)], allModes[rand.IntN(3)], allModes[rand.IntN(3)]
		if got := Effective(c, r, q); got > c || got > r || got > q {
			t.Fatalf("Effective(%v, %v, %v) = %v exceeds an input", c, r, q, got)
		}
	}
}

func TestEffectiveInvalidIsObserve(t *testing.T) {
	for _, bad := range []Mode{-1, 3, 100} {
		for _, args := range [][3]Mode{{bad, Autonomous, Autonomous}, {Autonomous, bad, Autonomous}, {Autonomous, Autonomous, bad}} {
			if got := Effective(args[0], args[1], args[2]); got != Observe {
				t.Errorf("Effective(%v, %v, %v) = %v, want observe", args[0], args[1], args[2], got)
			}
		}
	}
}
