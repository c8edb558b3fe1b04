package sse

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func events(t testing.TB, stream string, max int) ([]string, error) {
	t.Helper()
	var got []string
	err := Read(strings.NewReader(stream), max, func(event string, data []byte) error {
		if event != "" {
			got = append(got, event+"="+string(data))
		} else {
			got = append(got, string(data))
		}
		return nil
	})
	return got, err
}

// TestRead reads the event stream format as the MCP SDK's server and chat
// completion providers write it, and as the format allows: data lines
// joined, CRLF, comments and other fields skipped, named events, the size
// bound.
func TestRead(t *testing.T) {
	tests := []struct {
		name, stream string
		want         []string
		err          error
	}{
		{"the SDK's events", "event: message\nid: 1\ndata: {\"a\":1}\n\nevent: message\ndata: {\"b\":2}\n\n", []string{`message={"a":1}`, `message={"b":2}`}, io.EOF},
		{"no event name", "data: x\n\n", []string{"x"}, io.EOF},
		{"data lines joined", "data: a\ndata:b\ndata:  c\n\n", []string{"a\nb\n c"}, io.EOF},
		{"CRLF", "data: x\r\n\r\ndata: y\r\n\r\n", []string{"x", "y"}, io.EOF},
		{"comments and retry", ": keepalive\nretry: 100\n\ndata: x\n\n", []string{"x"}, io.EOF},
		{"named events", "event: error\ndata: x\n\ndata: y\n\n", []string{"error=x", "y"}, io.EOF},
		{"no data", "event: message\n\nid: 3\n\n", nil, io.EOF},
		{"unfinished event", "data: x\n\ndata: y\n", []string{"x"}, io.EOF},
		{"event at the bound", "data: 0123456789\n\n", []string{"0123456789"}, io.EOF},
		{"event too large", "data: 0123456789a\n\n", nil, ErrTooLarge},
		{"too large in pieces", "data: 01234\ndata: 56789\n\n", nil, ErrTooLarge},
		{"a line too long", "data: x\n\n: " + strings.Repeat("z", 100) + "\n", []string{"x"}, ErrTooLarge},
	}
	for _, tc := range tests {
		got, err := events(t, tc.stream, 10)
		if diff := cmp.Diff(tc.want, got); diff != "" || !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v; events (-want +got):\n%s", tc.name, err, tc.err, diff)
		}
	}
	stop := errors.New("stop")
	n := 0
	err := Read(strings.NewReader("data: 1\n\ndata: 2\n\n"), 10, func(string, []byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("emit's error: %v after %d events", err, n)
	}
}

// FuzzRead: whatever a server sends, the reader ends (io.EOF or an error),
// and no event it hands on passes the bound or is empty.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"data: {}\n\n", "event: message\r\ndata: x\r\n\r\n", ":\n\n", "data\n\n", "data:" + strings.Repeat("y", 80) + "\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		const max = 64
		var got [][]byte
		err := Read(strings.NewReader(stream), max, func(_ string, data []byte) error {
			got = append(got, data)
			return nil
		})
		if err == nil {
			t.Fatal("Read returned nil")
		}
		for _, e := range got {
			if len(e) > max || len(e) == 0 {
				t.Fatalf("event of %d bytes handed on", len(e))
			}
		}
	})
}
