package workspace

import (
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/web"
)

// cannotRun is what a review or a draft's page shows of a configuration
// that runs nothing, which cannot be approved: why, and for a command typed
// as a whole command line, the offer to split it.
type cannotRun struct {
	Why string
	// Program and Args are the split offered, each word quoted as the
	// review's command line quotes it (so an empty or blank word shows);
	// Program is "" when there is no offer.
	Program string
	Args    []string
	// Refused says why the command, read as a command line, cannot be
	// split.
	Refused string
	// Encoded is the configuration as a review form carries it, for a
	// draft's page to post its split back for review.
	Encoded string
}

// cannotRunOf says why c, as it would run now, cannot run, with the split
// its command offers; nil when it runs.
func (w *Workspace) cannotRunOf(c servers.Config) *cannotRun {
	why := w.servers.NotRunnable(c)
	if why == "" {
		return nil
	}
	out := &cannotRun{Why: why, Encoded: encodeConfig(c)}
	split, ok, err := servers.SplitCommand(c)
	switch {
	case ok:
		out.Program = web.CommandLine(split.Command, nil)
		for _, a := range split.Args {
			out.Args = append(out.Args, web.CommandLine(a, nil))
		}
	case err != nil:
		out.Refused = err.Error()
	}
	return out
}

// splitCommand is a review's "Split into program and arguments": the
// configuration reviewed, with its command split as the review offered.
// What it gives is reviewed again before anything is saved.
func splitCommand(c servers.Config) servers.Config {
	if split, ok, err := servers.SplitCommand(c); ok && err == nil {
		return split
	}
	return c
}
