package mcpbridge

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadEvents: of the workspace's event stream (the format itself is
// package sse's, tested there), message events are handed on, events of
// another type skipped, and an event over the bound is a malformed event.
func TestReadEvents(t *testing.T) {
	tests := []struct {
		name, stream string
		want         []string
		err          error
	}{
		{"the SDK's events", "event: message\nid: 1\ndata: {\"a\":1}\n\ndata: {\"b\":2}\n\n", []string{`{"a":1}`, `{"b":2}`}, io.EOF},
		{"other events", "event: close\ndata: x\n\ndata: y\n\n", []string{"y"}, io.EOF},
		{"event too large", "data: 0123456789a\n\n", nil, errMalformedEvent},
	}
	for _, tc := range tests {
		var got []string
		err := readEvents(strings.NewReader(tc.stream), 10, func(data []byte) error {
			got = append(got, string(data))
			return nil
		})
		if diff := cmp.Diff(tc.want, got); diff != "" || !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v; events (-want +got):\n%s", tc.name, err, tc.err, diff)
		}
	}
}
