package plugins

import (
	"fmt"
	"slices"

	"github.com/zero-dev/zero/internal/plugin"
)

// diffCapabilities says, in words, what now grants that was did not
// (widened) and what it no longer grants (narrowed).
func diffCapabilities(was, now plugin.Capabilities) (widened, narrowed []string) {
	widened, narrowed = []string{}, []string{}
	list := func(what string, a, b []string) {
		for _, x := range b {
			if !slices.Contains(a, x) {
				widened = append(widened, what+" "+x)
			}
		}
		for _, x := range a {
			if !slices.Contains(b, x) {
				narrowed = append(narrowed, what+" "+x+" no more")
			}
		}
	}
	list("reads files under", was.FSRead, now.FSRead)
	list("writes files under", was.FSWrite, now.FSWrite)
	list("connects to", was.NetworkHosts, now.NetworkHosts)
	list("receives the secret", was.Secrets, now.Secrets)
	switch {
	case now.Process && !was.Process:
		widened = append(widened, "starts child processes")
	case was.Process && !now.Process:
		narrowed = append(narrowed, "starts child processes no more")
	}
	limit := func(what, unit string, a, b int) {
		switch {
		case b > a:
			widened = append(widened, fmt.Sprintf("%s raised from %d to %d %s", what, a, b, unit))
		case b < a:
			narrowed = append(narrowed, fmt.Sprintf("%s lowered from %d to %d %s", what, a, b, unit))
		}
	}
	wl, nl := was.EffectiveLimits(), now.EffectiveLimits()
	limit("time a call may take", "ms", wl.TimeoutMS, nl.TimeoutMS)
	limit("memory", "MiB", wl.MemoryMiB, nl.MemoryMiB)
	limit("processes at once", "", wl.Processes, nl.Processes)
	return widened, narrowed
}
