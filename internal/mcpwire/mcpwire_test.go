package mcpwire

import (
	"bufio"
	"strings"
	"testing"
)

func TestScanValue(t *testing.T) {
	tests := []struct {
		in       string
		end      int
		complete bool
	}{
		{`{"a":1}`, 7, true},
		{`{"a":"}"}`, 9, true},
		{`{"a":"\"}"}`, 11, true},
		{`{"a":[1,2]`, 10, false},
		{`"str"`, 5, true},
		{`true `, 4, true},
		{`{"a":1} x`, 7, true},
	}
	for _, tt := range tests {
		for k := range len(tt.in) + 1 { // the value in two reads, split at k
			var s valueScanner
			end, complete, err := s.scan([]byte(tt.in[:k]))
			if !complete && err == nil {
				var rest int
				rest, complete, err = s.scan([]byte(tt.in[k:]))
				end = k + rest
			}
			if err != nil || end != tt.end || complete != tt.complete {
				t.Errorf("scan(%q) split at %d = %d, %v, %v; want %d, %v", tt.in, k, end, complete, err, tt.end, tt.complete)
			}
		}
	}
	var s valueScanner
	if _, _, err := s.scan([]byte(strings.Repeat("[", MaxDepth+1))); err == nil {
		t.Error("no error past the depth limit")
	}
}

func TestReadFrameLimit(t *testing.T) {
	const max = 1 << 20
	r := bufio.NewReaderSize(strings.NewReader(`{"a":"`+strings.Repeat("x", max)+`"}`+"\n"), 64<<10)
	if _, err := ReadFrame(r, max); err != ErrFrameTooLarge {
		t.Errorf("ReadFrame of a frame over %d bytes: %v", max, err)
	}
	r = bufio.NewReader(strings.NewReader("\n  \n{\"a\":\n1}\n"))
	if b, err := ReadFrame(r, max); err != nil || string(b) != "{\"a\":\n1}" {
		t.Errorf("ReadFrame of a message over two lines = %q, %v", b, err)
	}
}
