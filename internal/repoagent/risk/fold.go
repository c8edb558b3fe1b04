package risk

import (
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// A pathKey is a path as the path rules compare it: folded the way the file
// systems a checkout may land on fold names, and further, so that every
// spelling one of them takes for a protected name matches its rule. Case
// folding (full Unicode folding: "ſ" is "s", the Kelvin sign is "k"), a
// round of upper-casing (NTFS upcases, so "ı" is "i"), compatibility
// normalization (NFD and NFC spellings compare equal, as on APFS and HFS+,
// and so do fullwidth and other compatibility forms, which no file system
// folds but which read as the protected name), and no combining marks
// ("Dockérfile" is "dockerfile"). It errs towards matching: a path that
// only might be protected is.
type pathKey string

// fold makes a new caser each time: a cases.Caser keeps state.
func fold(s string) string { return cases.Fold().String(s) }

// noMarks drops nonspacing marks.
func noMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// keys remembers recent folds: the rules fold the same few paths many
// times over.
var keys struct {
	sync.Mutex
	m map[string]pathKey
}

const maxKeys = 1 << 12

// keyOf folds p. It is a fixed point: keyOf(string(keyOf(p))) == keyOf(p).
// A path longer than a checkout can hold is not folded (badPath refuses
// it): folding costs more than its length.
func keyOf(p string) pathKey {
	if len(p) > maxPath {
		return pathKey(p)
	}
	keys.Lock()
	k, ok := keys.m[p]
	keys.Unlock()
	if ok {
		return k
	}
	k = foldKey(p)
	keys.Lock()
	if len(keys.m) >= maxKeys || keys.m == nil {
		keys.m = map[string]pathKey{}
	}
	keys.m[p] = k
	keys.Unlock()
	return k
}

func foldKey(p string) pathKey {
	s := p
	for range 4 {
		next := norm.NFKC.String(noMarks(norm.NFKD.String(fold(strings.ToUpper(fold(noMarks(norm.NFKD.String(s))))))))
		if next == s {
			break
		}
		s = next
	}
	return pathKey(s)
}
