package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"

	"github.com/zero-dev/zero/internal/workspace/logo"
)

// An Icon is one icon an entry declares: the registry's shape, and nothing
// else.
type Icon struct {
	Src      string   // https, at most 255 bytes
	MIMEType string   // image/png, image/jpeg, image/svg+xml, image/webp, or ""
	Sizes    []string // WxH or "any"
	Theme    string   // light, dark, or ""
}

// maxIconSrc bounds an icon's src, as the registry's schema does.
const maxIconSrc = 255

// iconTypes are the types an icon may declare; image/jpg, which the
// registry's schema also lists, is read as image/jpeg.
var iconTypes = []string{"image/png", "image/jpeg", "image/svg+xml", "image/webp"}

var sizeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{1,5}x[0-9]{1,5}|any)$`) })

func (p *parser) icon(where string, raw json.RawMessage) Icon {
	var ic Icon
	obj, ok := object(p, where, raw)
	if !ok {
		return ic
	}
	src, ok := get[string](p, where+".src", obj["src"])
	switch {
	case !ok && obj["src"] == nil:
		p.bad(where+".src", "is missing")
	case len(src) > maxIconSrc:
		p.bad(where+".src", "is %d bytes, over %d", len(src), maxIconSrc)
	case ok:
		if msg := urlProblem(src, true); msg != "" {
			p.bad(where+".src", "%s", msg)
		}
		ic.Src = src
	}
	if t, ok := get[string](p, where+".mimeType", obj["mimeType"]); ok {
		if t == "image/jpg" {
			t = "image/jpeg"
		}
		if !slices.Contains(iconTypes, t) {
			p.bad(where+".mimeType", "is %s, not image/png, image/jpeg, image/svg+xml or image/webp", quote(t))
		}
		ic.MIMEType = t
	}
	if sizes, ok := get[[]string](p, where+".sizes", obj["sizes"]); ok {
		for i, s := range sizes {
			if i >= maxItems || !sizeRE().MatchString(s) {
				p.bad(fmt.Sprintf("%s.sizes[%d]", where, i), "is %s, not WxH or any", quote(s))
				break
			}
		}
		ic.Sizes = sizes
	}
	if t, ok := get[string](p, where+".theme", obj["theme"]); ok {
		if t != "light" && t != "dark" {
			p.bad(where+".theme", "is %s, not light or dark", quote(t))
		}
		ic.Theme = t
	}
	return ic
}

// ErrIcon reports an entry's icons, none of which Zero shows.
var ErrIcon = errors.New("icon refused")

// maxIconTries is how many of an entry's icons are fetched before giving
// up.
const maxIconTries = 3

// Icons fetches entries' icons on the server side with logo's Fetcher:
// https only, no redirect, at most 32 KiB, a PNG of at most 256 pixels a
// side or an SVG that logo sanitises; every other body is refused. The
// public-host rule is the client's: the workspace passes a netguard client
// with BlockPrivate. The browser gets the data: URL, never the src.
type Icons struct{ fetcher *logo.Fetcher }

// NewIcons returns Icons that fetch with client (see logo.NewFetcher).
func NewIcons(client *http.Client) *Icons { return &Icons{fetcher: logo.NewFetcher(client)} }

// DataURL returns an entry's icon as a data: URL, or "" and nil when it
// declares none. It tries the icons declared as PNG or SVG, or with no
// type, the light- or any-theme ones first, up to three; an icon declared
// as another type is not fetched. When none is usable it returns an error
// wrapping ErrIcon with each icon's reason.
func (ic *Icons) DataURL(ctx context.Context, icons []Icon) (string, error) {
	if len(icons) == 0 {
		return "", nil
	}
	order := slices.Clone(icons)
	slices.SortStableFunc(order, func(a, b Icon) int { return themeRank(a) - themeRank(b) })
	var reasons []error
	tries := 0
	for _, c := range order {
		if c.MIMEType != "" && c.MIMEType != "image/png" && c.MIMEType != "image/svg+xml" {
			reasons = append(reasons, fmt.Errorf("%s is %s: Zero shows PNG and SVG icons only", c.Src, c.MIMEType))
			continue
		}
		if tries == maxIconTries {
			break
		}
		tries++
		u, err := ic.fetcher.Fetch(ctx, c.Src)
		if err == nil {
			return u, nil
		}
		reasons = append(reasons, fmt.Errorf("%s: %w", c.Src, err))
	}
	return "", fmt.Errorf("%w: %w", ErrIcon, errors.Join(reasons...))
}

// themeRank orders icons for a light page: light, then any, then dark.
func themeRank(ic Icon) int {
	switch ic.Theme {
	case "light":
		return 0
	case "":
		return 1
	}
	return 2
}
