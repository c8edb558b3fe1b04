package spawn

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkSpawn measures what the boundary costs over a bare os/exec run of
// the same program, and what the sandbox adds.
func BenchmarkSpawn(b *testing.B) {
	roots, dir := workspace(b)
	b.Run("bare exec", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, iso := range []Isolation{None, Bubblewrap} {
		b.Run("Run "+string(iso), func(b *testing.B) {
			if iso == Bubblewrap {
				requireIsolation(b)
			}
			c := Cmd{Program: "/bin/true", Roots: roots, Dir: dir, Timeout: 10 * time.Second, Isolation: iso}
			for b.Loop() {
				res, err := Run(context.Background(), c)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("Run = %+v, %v", res, err)
				}
			}
		})
	}
}

// BenchmarkStart measures starting /bin/cat with Start and stopping it: the
// child exits at end of file, so Stop does not wait out its grace.
func BenchmarkStart(b *testing.B) {
	roots, dir := workspace(b)
	for _, iso := range []Isolation{None, Bubblewrap} {
		b.Run(string(iso), func(b *testing.B) {
			if iso == Bubblewrap {
				requireIsolation(b)
			}
			c := Cmd{Program: "/bin/cat", Roots: roots, Dir: dir, Timeout: 10 * time.Second, Isolation: iso}
			for b.Loop() {
				p, err := Start(context.Background(), c)
				if err != nil {
					b.Fatal(err)
				}
				if res, err := p.Stop(); err != nil || res.ExitCode != 0 {
					b.Fatalf("Stop = %+v, %v", res, err)
				}
			}
		})
	}
}
