package netguard

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
)

// A hostRow is a row of testdata/hosts.json, which testdata/hosts.mjs
// generates with Node's WHATWG URL parser.
type hostRow struct {
	Input string `json:"input"`
	Want  string `json:"want"`
	Error bool   `json:"error"`
	// KnownDifference, when set, is what ParseHost does instead, and why.
	KnownDifference *struct {
		Want   string `json:"want"`
		Error  bool   `json:"error"`
		Reason string `json:"reason"`
	} `json:"knownDifference"`
}

func hostTable(t testing.TB) []hostRow {
	t.Helper()
	b, err := os.ReadFile("testdata/hosts.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []hostRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 300 {
		t.Fatalf("the table has %d rows", len(rows))
	}
	return rows
}

// TestParseHostTable checks ParseHost against every row of the table that
// Node's WHATWG URL parser wrote; a row marked as a known difference must
// still differ as recorded, so that a fix in x/net/idna shows up here.
func TestParseHostTable(t *testing.T) {
	for _, row := range hostTable(t) {
		want, wantErr := row.Want, row.Error
		if d := row.KnownDifference; d != nil {
			if d.Reason == "" {
				t.Errorf("ParseHost(%q): a known difference without a reason", row.Input)
			}
			want, wantErr = d.Want, d.Error
		}
		h, err := ParseHost(row.Input)
		switch {
		case wantErr && err == nil:
			t.Errorf("ParseHost(%q) = %q, want an error", row.Input, h)
		case wantErr && !errors.Is(err, ErrHost):
			t.Errorf("ParseHost(%q) = %v, want ErrHost", row.Input, err)
		case !wantErr && err != nil:
			t.Errorf("ParseHost(%q) = %v, want %q", row.Input, err, want)
		case !wantErr && h.String() != want:
			t.Errorf("ParseHost(%q) = %q, want %q", row.Input, h, want)
		}
	}
}

// TestParseHostKinds checks what the table cannot: the address a host
// carries, and inputs that are not valid UTF-8 (Go's url.Parse lets
// %80-%FF through into a host; a JSON table cannot hold them).
func TestParseHostKinds(t *testing.T) {
	for _, c := range []struct {
		in, addr string // addr "" for a domain
	}{
		{"0x7f000001", "127.0.0.1"},
		{"１２７.０.０.１", "127.0.0.1"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
		{"[::127.0.0.1]", "::127.0.0.1"},
		{"[::1]", "::1"},
		{"example.com", ""},
		{"1.2.3.4.com", ""},
	} {
		h, err := ParseHost(c.in)
		if err != nil {
			t.Fatalf("ParseHost(%q): %v", c.in, err)
		}
		a, ok := h.Addr()
		if ok != (c.addr != "") || ok && a != netip.MustParseAddr(c.addr) {
			t.Errorf("ParseHost(%q).Addr() = %v, %v; want %q", c.in, a, ok, c.addr)
		}
	}
	for _, in := range []string{"\xff", "a\xffb.com", "\xc3", "[::1]\xff", "\xed\xa0\x80.com"} {
		if h, err := ParseHost(in); !errors.Is(err, ErrHost) {
			t.Errorf("ParseHost(%q) = %q, %v; want ErrHost", in, h, err)
		}
	}
	if h, err := ParseHost(strings.Repeat("a.", 10000) + "b"); err != nil || len(h.String()) != 20001 {
		t.Errorf("a long name: %d bytes, %v", len(h.String()), err)
	}
}

func TestHostIsLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1":          true,
		"127.1":              true,
		"0x7f000001":         true,
		"127.255.255.254":    true,
		"[::1]":              true,
		"[::ffff:127.0.0.1]": true,
		"[::ffff:7f00:2]":    true,
		"localhost":          true,
		"LOCALHOST":          true,
		"ｌｏｃａｌｈｏｓｔ":          true,
		"localhost.":         false,
		"foo.localhost":      false,
		"localhost.example":  false,
		"[::127.0.0.1]":      false, // IPv4-compatible, not mapped
		"128.0.0.1":          false,
		"0.0.0.0":            false,
		"[::]":               false,
		"example.com":        false,
	} {
		h, err := ParseHost(in)
		if err != nil {
			t.Fatalf("ParseHost(%q): %v", in, err)
		}
		if got := h.IsLoopback(); got != want {
			t.Errorf("ParseHost(%q).IsLoopback() = %v, want %v", in, got, want)
		}
	}
	if (Host{}).IsLoopback() {
		t.Error("the zero Host is loopback")
	}
}
