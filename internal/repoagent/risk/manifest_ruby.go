package risk

import (
	"regexp"
	"strings"
	"sync"
)

var (
	gemLine    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gem\s*\(?\s*['"]([^'"]+)['"](.*)$`) })
	quoted     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`['"]([^'"]*)['"]`) })
	gemSources = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:git|github|gitlab|bitbucket|path|source|git_source)\s*:|:(?:git|github|path|source)\s*=>`)
	})
	gemStructure = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:(?:group|platforms?|install_if)\b.*\bdo(?:\s*\|.*\|)?|end|ruby\s.*)$`)
	})
)

// readGemfile reads a Gemfile line by line (it is Ruby, which only bundler
// runs): gem lines are entries, a gem from git or a path DependencySource;
// groups and the Ruby version are Dependencies; any other line (source,
// gemspec, code) DependencySource when it is added or removed.
func readGemfile(data []byte) (*facts, error) {
	f := newFacts()
	for _, l := range lines(data) {
		t := strings.TrimSpace(l)
		if i := strings.Index(t, " #"); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		case gemStructure().MatchString(t):
			f.set("structure "+t, "", Dependencies, "changes the Gemfile's groups")
			continue
		}
		m := gemLine().FindStringSubmatch(t)
		if m == nil {
			f.set("line "+t, "", DependencySource, "changes a Gemfile line the rules cannot read: "+clip(t))
			continue
		}
		if gemSources().MatchString(m[2]) || sourceMarkers().MatchString(m[2]) {
			f.set("source "+t, "", DependencySource, "takes the gem "+clip(m[1])+" from a source other than the registry")
		}
		req := ""
		// The first requirement: quoted strings before any option.
		opts, _, _ := strings.Cut(m[2], ":")
		if q := quoted().FindStringSubmatch(opts); q != nil {
			req = q[1]
		}
		f.dep(m[1], req)
	}
	return f, nil
}
