package risk

import (
	"strconv"
	"strings"
)

// version is a dotted version: up to four numbers, a wildcard ("x", "X" or
// "*") ending the numbers early, and a pre-release part.
type version struct {
	nums []int
	wild bool // the numbers after nums are a wildcard
	pre  string
}

// rangeOps are the operators that may lead a version requirement; the
// version after one is the requirement's floor. Longest first.
var rangeOps = []string{"===", "~>", "~=", ">=", "==", "^", "~", "=", ">"}

// parseRange reads a single-version requirement as the manifests write it:
// an optional operator from rangeOps, then a version. Anything more (two
// bounds, alternatives, tags such as "latest") does not parse: the caller
// must treat it as something it cannot understand.
func parseRange(s string) (version, bool) {
	s = strings.TrimSpace(s)
	for _, op := range rangeOps {
		if rest, ok := strings.CutPrefix(s, op); ok {
			s = strings.TrimSpace(rest)
			break
		}
	}
	return parseVersion(s)
}

// parseVersion reads [v]N[.N[.N[.N]]][-pre][+build], where a number may be a
// wildcard that ends the numbers. Build metadata (such as Go's
// +incompatible) is ignored.
func parseVersion(s string) (version, bool) {
	var v version
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	s, _, _ = strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(s, "-")
	if hasPre {
		if pre == "" || strings.Trim(pre, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.-") != "" {
			return v, false
		}
		v.pre = pre
	}
	parts := strings.Split(core, ".")
	if len(parts) > 4 {
		return v, false
	}
	for i, p := range parts {
		if p == "x" || p == "X" || p == "*" {
			if i == 0 || i != len(parts)-1 || hasPre {
				return v, false
			}
			v.wild = true
			break
		}
		n, ok := smallNumber(p)
		if !ok {
			return v, false
		}
		v.nums = append(v.nums, n)
	}
	return v, true
}

// compareVersions compares a with b: -1, 0 or +1. Missing numbers count as
// zero; a version with a pre-release part comes before the same version
// without one.
func compareVersions(a, b version) int {
	for i := range max(len(a.nums), len(b.nums)) {
		x, y := at(a.nums, i), at(b.nums, i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	return comparePre(a.pre, b.pre)
}

func at(nums []int, i int) int {
	if i < len(nums) {
		return nums[i]
	}
	return 0
}

// comparePre compares pre-release parts by semver's rules: dot-separated
// identifiers, numbers numerically and below words, words by bytes.
func comparePre(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(as), len(bs)) {
		x, y := as[i], bs[i]
		xn, errX := strconv.Atoi(x)
		yn, errY := strconv.Atoi(y)
		switch {
		case errX == nil && errY == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case errX == nil:
			return -1
		case errY == nil:
			return 1
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	switch {
	case len(as) < len(bs):
		return -1
	case len(as) > len(bs):
		return 1
	}
	return 0
}

// versionChange classes a change of one dependency's requirement from old
// to new: Dependencies for a forward update within the same major version,
// DependencyMajor for a new major version or a downgrade, and
// DependencySource when either side cannot be read. When zeroMinorBreaks,
// a 0.x version's minor number counts as its major one, as caret
// requirements (npm, Cargo, Composer, Poetry) treat it; Go does not, since
// every version of a module path must stay compatible.
func versionChange(name, old, new string, zeroMinorBreaks bool) verdict {
	if old == new {
		return verdict{Dependencies, "changes the dependency " + name}
	}
	a, okA := parseRange(old)
	b, okB := parseRange(new)
	if !okA || !okB {
		return verdict{DependencySource, "changes the dependency " + name + " in a way the rules cannot read"}
	}
	if at(a.nums, 0) != at(b.nums, 0) || zeroMinorBreaks && at(a.nums, 0) == 0 && at(a.nums, 1) != at(b.nums, 1) {
		return verdict{DependencyMajor, "moves " + name + " to a new major version"}
	}
	if compareVersions(b, a) < 0 {
		return verdict{DependencyMajor, "downgrades " + name}
	}
	return verdict{Dependencies, "updates " + name + " within its major version"}
}

// smallNumber reads up to nine decimal digits.
func smallNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
