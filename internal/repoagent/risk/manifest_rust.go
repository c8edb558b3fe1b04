package risk

import (
	"slices"
	"strings"
)

func cargoName(n string) string { return strings.ReplaceAll(strings.ToLower(n), "_", "-") }

// cargoBenign are [package] keys that are metadata: Dependencies.
var cargoBenign = []string{
	"description", "authors", "license", "license-file", "readme", "keywords", "categories",
	"repository", "homepage", "documentation", "edition", "rust-version", "exclude", "include",
	"resolver", "metadata",
}

// cargoTargets are the [package] keys and top-level tables that decide
// which tests exist and how they build and run: Verification.
var (
	cargoTargetKeys = []string{"autotests", "autobins", "autoexamples", "autobenches", "autolib", "default-run", "workspace"}
	cargoTargets    = []string{"lib", "bin", "test", "bench", "example", "profile", "lints"}
	cargoDepTables  = []string{"dependencies", "dev-dependencies", "build-dependencies", "dev_dependencies", "build_dependencies"}
)

// readCargo reads Cargo.toml.
func readCargo(data []byte) (*facts, error) {
	doc, err := tomlTable(data)
	if err != nil {
		return nil, err
	}
	f := newFacts()
	for key, val := range doc {
		switch {
		case key == "package" || key == "project":
			cargoPackage(f, key, val)
		case slices.Contains(cargoDepTables, key):
			tableDeps(f, key, val)
		case key == "target":
			targets, ok := val.(map[string]any)
			if !ok {
				f.cannot(key, canon(val))
				continue
			}
			for name, t := range targets {
				tt, ok := t.(map[string]any)
				if !ok {
					f.cannot("target."+name, canon(t))
					continue
				}
				for k, v := range tt {
					if slices.Contains(cargoDepTables, k) {
						tableDeps(f, "target."+name+"."+k, v)
					} else {
						f.set("target."+name+"."+k, canon(v), DependencySource, "changes [target."+clip(name)+"], which the rules cannot read")
					}
				}
			}
		case key == "workspace":
			ws, ok := val.(map[string]any)
			if !ok {
				f.cannot(key, canon(val))
				continue
			}
			for k, v := range ws {
				switch k {
				case "dependencies":
					tableDeps(f, "workspace.dependencies", v)
				case "package":
					cargoPackage(f, "workspace.package", v)
				case "members", "exclude", "default-members", "lints":
					f.set("workspace."+k, canon(v), Verification, "changes the workspace's "+k+", which decide what cargo test builds and runs")
				case "metadata", "resolver":
					f.set("workspace."+k, canon(v), Dependencies, "changes the workspace's "+k)
				default:
					f.set("workspace."+k, canon(v), DependencySource, "changes the workspace's "+clip(k)+", which the rules cannot read")
				}
			}
		case key == "patch" || key == "replace" || key == "source" || key == "registries":
			f.set(key, canon(val), DependencySource, "edits ["+key+"], which redirects dependencies")
		case key == "features":
			feats, ok := val.(map[string]any)
			if !ok {
				f.cannot(key, canon(val))
				continue
			}
			for name, v := range feats {
				if name == "default" {
					f.set("features.default", canon(v), Verification, "changes the default features, which decide what cargo test builds")
				} else {
					f.set("features."+name, canon(v), Dependencies, "changes a feature")
				}
			}
		case slices.Contains(cargoTargets, key):
			f.set(key, canon(val), Verification, "changes ["+key+"], which decides which tests build and how they run")
		case key == "badges":
			f.set(key, canon(val), Dependencies, "changes the badges")
		default:
			f.set(key, canon(val), DependencySource, "changes ["+clip(key)+"], which the rules cannot read")
		}
	}
	return f, nil
}

func cargoPackage(f *facts, where string, val any) {
	p, ok := val.(map[string]any)
	if !ok {
		f.cannot(where, canon(val))
		return
	}
	for k, v := range p {
		switch {
		case k == "name" || k == "version" || k == "publish":
			f.set(where+"."+k, canon(v), ReleasePublish, "changes the package's "+k)
		case k == "build" || k == "links":
			f.set(where+"."+k, canon(v), InstallHooks, "changes the package's build script")
			f.set(where+"."+k+" (surface)", canon(v), Verification, "changes the package's build script, which cargo test runs")
		case slices.Contains(cargoTargetKeys, k):
			f.set(where+"."+k, canon(v), Verification, "changes the package's "+k+", which decides which tests build")
		case slices.Contains(cargoBenign, k):
			f.set(where+"."+k, canon(v), Dependencies, "changes the package's "+k)
		default:
			f.set(where+"."+k, canon(v), DependencySource, "changes the package's "+clip(k)+", which the rules cannot read")
		}
	}
}
