package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fakeProbe is a Runner whose probe answers err; it runs nothing.
type fakeProbe struct {
	b      Backend
	err    error
	probed *int
}

func (f fakeProbe) Backend() Backend { return f.b }
func (f fakeProbe) Probe(context.Context) error {
	*f.probed++
	return f.err
}
func (f fakeProbe) Run(context.Context, Guest) (Result, error) {
	return Result{}, errors.New("not a backend")
}

// TestChoose: the strongest usable backend the policy allows is chosen;
// a pinned or minimum backend that is unusable is refused with
// ErrUnavailable and each reason, never a weaker one.
func TestChoose(t *testing.T) {
	var probed int
	runners := []Runner{
		fakeProbe{Bubblewrap, nil, &probed},
		fakeProbe{Runsc, nil, &probed},
		fakeProbe{SmolVM, errors.New("no /dev/kvm"), &probed},
	}
	ctx := context.Background()
	for _, c := range []struct {
		p    Policy
		want Backend
		why  []string
	}{
		{Policy{}, Runsc, nil},
		{Policy{Minimum: Runsc}, Runsc, nil},
		{Policy{Pin: Bubblewrap}, Bubblewrap, nil},
		{Policy{Pin: SmolVM}, "", []string{"smolvm: no /dev/kvm"}},
		{Policy{Minimum: DockerRunsc}, "", []string{"smolvm: no /dev/kvm", "docker-runsc: not provided"}},
		{Policy{Pin: "host"}, "", []string{`"host"`}},
	} {
		r, err := Choose(ctx, runners, c.p)
		if c.want != "" {
			if err != nil || r.Backend() != c.want {
				t.Errorf("%+v: %v, %v; want %s", c.p, r, err, c.want)
			}
			continue
		}
		if !errors.Is(err, ErrUnavailable) || r != nil {
			t.Errorf("%+v: %v, %v; want ErrUnavailable", c.p, r, err)
			continue
		}
		for _, w := range c.why {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v lacks %q", c.p, err, w)
			}
		}
	}
}

func TestParseBackend(t *testing.T) {
	for _, b := range Tiers {
		if got, err := ParseBackend(string(b)); err != nil || got != b {
			t.Errorf("%s: %v %v", b, got, err)
		}
	}
	if _, err := ParseBackend("host"); err == nil {
		t.Error("host was accepted")
	}
}
