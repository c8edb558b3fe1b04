package risk

// Class is the risk class of a change. The low classes may be allow-listed
// by a repository for automatic changes; the high-impact classes always need
// a human. A Class that is not declared here counts as Unclassified.
type Class string

// Low classes, in increasing order of risk. A repository may allow-list them.
const (
	Docs         Class = "docs"         // documentation and images under docs/
	Tests        Class = "tests"        // test files and test data
	Code         Class = "code"         // source files
	Config       Class = "config"       // configuration files, licences, an executable bit removed
	Dependencies Class = "dependencies" // minor or patch updates of existing dependencies
)

// High-impact classes. They always need a human and cannot be allow-listed.
const (
	CI               Class = "ci"                // CI pipelines and bots that act on the repository
	AgentPolicy      Class = "agent_policy"      // agent instructions, code owners, security policy
	Secrets          Class = "secrets"           // credential files, or credentials in added lines
	DependencyMajor  Class = "dependency_major"  // a version change that is not a forward minor/patch update
	DependencySource Class = "dependency_source" // a new dependency, or one from somewhere new
	InstallHooks     Class = "install_hooks"     // code that runs on install, build, checkout or commit
	InfraDeploy      Class = "infra_deploy"      // containers, infrastructure, deployment
	ReleasePublish   Class = "release_publish"   // release tooling and published versions
	DeletedTests     Class = "deleted_tests"     // deleted, renamed-away or skipped tests
	Verification     Class = "verification"      // what the checks execute or read: build and task files, test runners' settings, TestMain
	Executable       Class = "executable"        // a file that becomes executable: a new executable, an added executable bit, a new #!
	MassChange       Class = "mass_change"       // too many files or lines to review as one change
	Unclassified     Class = "unclassified"      // anything the rules cannot vouch for
)

// ranked lists every declared class in increasing order of risk; a class's
// Rank is its place here, counting from 1. The first lowCount are the low
// classes. Among the high-impact ones the order only decides which class a
// change reports when it has several (all of them need a human): whole-change
// and test findings first, then what the checks run, then changes to what
// gets installed, released, deployed and executed, then what drives
// automation and agents, then credentials, and
// last Unclassified, because it means the classifier cannot vouch for any of
// the change.
var ranked = [...]Class{
	Docs, Tests, Code, Config, Dependencies,
	MassChange, DeletedTests, Verification, DependencyMajor, DependencySource, ReleasePublish,
	InfraDeploy, InstallHooks, Executable, CI, AgentPolicy, Secrets, Unclassified,
}

const lowCount = 5

// Rank places c in a total order of risk; every high-impact class ranks above
// every low class. An undeclared class ranks as Unclassified.
func (c Class) Rank() int {
	for i, k := range ranked {
		if k == c {
			return i + 1
		}
	}
	return len(ranked)
}

// HighImpact reports whether c always needs a human and cannot be
// allow-listed. It is true for every class that is not one of the five low
// ones, undeclared classes included.
func (c Class) HighImpact() bool {
	return c.Rank() > lowCount
}

// Known returns the declared class named name, exactly as spelled in a
// policy's allowedChangeRisks list. The caller must still refuse to
// allow-list a class that is HighImpact.
func Known(name string) (Class, bool) {
	for _, c := range ranked {
		if string(c) == name {
			return c, true
		}
	}
	return "", false
}

// verdict is the highest class found so far and why.
type verdict struct {
	class  Class
	reason string
}

// raise lifts v to c if c ranks higher than what v holds; the first reason
// found for a class is kept.
func (v *verdict) raise(c Class, reason string) {
	if v.class == "" || c.Rank() > v.class.Rank() {
		v.class, v.reason = c, reason
	}
}

// add raises v to what w holds.
func (v *verdict) add(w verdict) {
	if w.class != "" {
		v.raise(w.class, w.reason)
	}
}
