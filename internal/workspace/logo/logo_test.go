package logo

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// pngOf encodes an image of the given size, filled by fill.
func pngOf(t testing.TB, w, h int, fill func(x, y int) color.NRGBA) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, fill(x, y))
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func red(int, int) color.NRGBA { return color.NRGBA{R: 255, A: 255} }

// noise fills pixels with random colours, which do not compress.
func noise() func(int, int) color.NRGBA {
	r := rand.New(rand.NewPCG(1, 2))
	return func(int, int) color.NRGBA {
		return color.NRGBA{uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), 255}
	}
}

// chunk builds a PNG chunk with its CRC.
func chunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// rawPNG builds a PNG by hand that declares w x h RGBA pixels and holds one
// IDAT chunk of a few compressed bytes, whatever the size.
func rawPNG(t *testing.T, w, h uint32) []byte {
	t.Helper()
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0) // 8-bit RGBA, no interlace
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 64))
	zw.Close()
	b := append([]byte(nil), pngSignature...)
	b = append(b, chunk("IHDR", ihdr)...)
	b = append(b, chunk("IDAT", z.Bytes())...)
	return append(b, chunk("IEND", nil)...)
}

func TestCheckPNG(t *testing.T) {
	valid := pngOf(t, 16, 16, red)
	noisy := pngOf(t, MaxSide, MaxSide, noise())
	if len(noisy) <= MaxBytes {
		t.Fatalf("the noisy PNG is %d bytes; it should be over %d", len(noisy), MaxBytes)
	}
	wide := pngOf(t, MaxSide+1, 1, red)
	wider := pngOf(t, 300, 10, red)
	for _, b := range [][]byte{wide, wider} {
		if len(b) > MaxBytes {
			t.Fatalf("a too-wide PNG is %d bytes; it should fit %d, to test the side alone", len(b), MaxBytes)
		}
	}
	var g bytes.Buffer
	if err := gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 16, 16), []color.Color{color.Black}), nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"16x16", valid, nil},
		{"MaxSide a side", pngOf(t, MaxSide, MaxSide, red), nil},
		{"over MaxBytes", noisy, ErrTooLarge},
		{"257x1", wide, ErrTooLarge},
		{"300x10", wider, ErrTooLarge},
		{"tall", pngOf(t, 1, MaxSide+1, red), ErrTooLarge},
		{"zero width", rawPNG(t, 0, 16), ErrPNG},
		{"zero height", rawPNG(t, 16, 0), ErrPNG},
		{"truncated", valid[:len(valid)-20], ErrPNG},
		{"signature only", pngSignature, ErrPNG},
		{"data after the end", append(append([]byte(nil), valid...), "<html><script>alert(1)</script>"...), ErrPNG},
		{"bad CRC", bytes.Replace(valid, []byte("IHDR"), []byte("IHDr"), 1), ErrPNG},
		{"GIF", g.Bytes(), ErrPNG},
		{"empty", nil, ErrPNG},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPNG(tt.data)
			if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
				t.Errorf("CheckPNG = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestCheckPNGHugeHeader proves the size is checked before decoding: a
// decoder that trusted this header would allocate 40 GB for the pixels.
func TestCheckPNGHugeHeader(t *testing.T) {
	data := rawPNG(t, 100000, 100000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := CheckPNG(data)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("CheckPNG = %v, want ErrTooLarge", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("CheckPNG allocated %d bytes", n)
	}
}

func TestDataURL(t *testing.T) {
	valid := pngOf(t, 16, 16, red)
	var j bytes.Buffer
	if err := jpeg.Encode(&j, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		t.Fatal(err)
	}
	t.Run("PNG", func(t *testing.T) {
		got, err := DataURL(valid)
		if err != nil {
			t.Fatal(err)
		}
		if got != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(valid) {
			t.Errorf("DataURL = %.60s...", got)
		}
	})
	t.Run("SVG", func(t *testing.T) {
		got, err := DataURL([]byte("\n  " + doc(`<script>alert(1)</script>`)))
		if err != nil {
			t.Fatal(err)
		}
		svg := decodeSVGURL(t, got)
		if strings.Contains(svg, "script") || !strings.Contains(svg, keptHarmless[0]) {
			t.Errorf("DataURL held %s", svg)
		}
	})
	for _, tt := range []struct {
		name string
		data []byte
		want error
	}{
		{"JPEG", j.Bytes(), ErrSVG},
		{"HTML", []byte(`<html><body onload="alert(1)"></body></html>`), ErrSVG},
		{"text", []byte("hello"), ErrSVG},
		{"PNG signature then SVG", append(append([]byte(nil), pngSignature...), doc(``)...), ErrPNG},
		{"over MaxBytes", make([]byte, MaxBytes+1), ErrTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DataURL(tt.data)
			if !errors.Is(err, tt.want) || got != "" {
				t.Errorf("DataURL = %.40q, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// decodeSVGURL returns the SVG inside a data:image/svg+xml;base64 URL.
func decodeSVGURL(t *testing.T, u string) string {
	t.Helper()
	b64, ok := strings.CutPrefix(u, "data:image/svg+xml;base64,")
	if !ok {
		t.Fatalf("not an SVG data URL: %.60s", u)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
