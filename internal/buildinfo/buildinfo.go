// Package buildinfo reports which build of zero is running.
package buildinfo

import "runtime/debug"

// version is set at link time with
// -ldflags "-X github.com/zero-dev/zero/internal/buildinfo.version=v1.2.3".
var version = ""

// Version returns the version of this build: the link-time version, else the
// module version, else the VCS revision, else "devel".
func Version() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
}
