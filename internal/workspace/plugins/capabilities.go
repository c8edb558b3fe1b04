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
	// Each item is said in the words of plugin.Capabilities.Words, so the
	// diff reads as the capability lists do.
	list := func(words func(string) string, a, b []string) {
		for _, x := range b {
			if !slices.Contains(a, x) {
				widened = append(widened, words(x))
			}
		}
		for _, x := range a {
			if !slices.Contains(b, x) {
				narrowed = append(narrowed, "no longer "+words(x))
			}
		}
	}
	list(func(p string) string { return plugin.Capabilities{FSRead: []string{p}}.Words()[0] }, was.FSRead, now.FSRead)
	list(func(p string) string { return plugin.Capabilities{FSWrite: []string{p}}.Words()[0] }, was.FSWrite, now.FSWrite)
	list(func(h string) string { return plugin.Capabilities{NetworkHosts: []string{h}}.Words()[0] }, was.NetworkHosts, now.NetworkHosts)
	list(func(n string) string { return plugin.Capabilities{Secrets: []string{n}}.Words()[0] }, was.Secrets, now.Secrets)
	process := plugin.Capabilities{Process: true}.Words()[0]
	switch {
	case now.Process && !was.Process:
		widened = append(widened, process)
	case was.Process && !now.Process:
		narrowed = append(narrowed, "no longer "+process)
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
