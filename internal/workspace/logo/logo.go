// Package logo turns the icon an MCP server or registry declares into a
// safe, same-origin data: URL for the workspace web UI, so that the browser
// never loads a remote logo.
//
// [DataURL] decides the type from the bytes alone, never from a name or a
// declared MIME type: a PNG is accepted only if it decodes fully with
// image/png ([CheckPNG]) and is at most [MaxSide] pixels a side; anything
// else must be an SVG document, which [SanitizeSVG] rebuilds from an
// allow-list of elements and attributes. Both are limited to [MaxBytes].
//
// A [Fetcher] fetches https icons on the server side, refusing redirects,
// other schemes and bodies over MaxBytes, and caches the results. The URL is
// checked by netguard ([netguard.HTTPSOnly]) and fetched with its host in
// canonical form, so a numeric spelling of an address is that address. The rule
// that an icon comes from a public host belongs to the *http.Client it is
// given: the workspace passes a netguard client with BlockPrivate.
package logo

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
)

// Limits on an icon.
const (
	MaxBytes = 32 << 10 // 32 KiB, for the icon's bytes
	MaxSide  = 256      // pixels, for a PNG's width and height
)

var (
	// ErrTooLarge reports an icon over MaxBytes, or a PNG over MaxSide.
	ErrTooLarge = errors.New("icon too large")
	// ErrPNG reports bytes that start like a PNG but are not a valid one.
	ErrPNG = errors.New("invalid PNG icon")
	// ErrSVG reports bytes refused as an SVG icon, which is also the verdict
	// on bytes that are neither PNG nor SVG.
	ErrSVG = errors.New("invalid SVG icon")
	// ErrURL reports an icon source refused before any network I/O.
	ErrURL = errors.New("icon URL refused")
)

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// DataURL checks an icon's bytes and returns them as a data: URL:
// "data:image/png;base64,..." for a PNG that passes [CheckPNG], or
// "data:image/svg+xml;base64,..." holding the output of [SanitizeSVG].
// Bytes that start with the PNG signature are judged only as a PNG; all
// other bytes only as an SVG.
func DataURL(data []byte) (string, error) {
	if len(data) > MaxBytes {
		return "", fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrTooLarge, len(data), MaxBytes)
	}
	if bytes.HasPrefix(data, pngSignature) {
		if err := CheckPNG(data); err != nil {
			return "", err
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(data), nil
	}
	svg, err := SanitizeSVG(data)
	if err != nil {
		return "", fmt.Errorf("not a PNG, and as SVG: %w", err)
	}
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg), nil
}

// CheckPNG accepts data only if it is one complete PNG image, with nothing
// after it, of at most MaxBytes bytes and at least 1 and at most MaxSide
// pixels a side. It reads the header before decoding, so a PNG that claims
// a huge size is refused before any pixel memory is allocated.
func CheckPNG(data []byte) error {
	if len(data) > MaxBytes {
		return fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrTooLarge, len(data), MaxBytes)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrPNG, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("%w: size %dx%d", ErrPNG, cfg.Width, cfg.Height)
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide {
		return fmt.Errorf("%w: %dx%d pixels, over %d a side", ErrTooLarge, cfg.Width, cfg.Height, MaxSide)
	}
	r := bytes.NewReader(data)
	if _, err := png.Decode(r); err != nil {
		return fmt.Errorf("%w: %v", ErrPNG, err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("%w: %d bytes after the end of the image", ErrPNG, r.Len())
	}
	return nil
}
