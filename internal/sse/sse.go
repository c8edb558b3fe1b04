// Package sse reads server-sent events (the text/event-stream format), as
// the MCP streamable HTTP transport and streamed chat completions send
// them, with a bound on each event.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge reports an event, or a line, over the bound.
var ErrTooLarge = errors.New("server-sent event over the size bound")

// Read reads events from r (fields, one a line, an empty line ends an
// event) and calls emit with the name (empty for none) and the data of each
// event that has data, until r ends or emit fails. Lines end in LF or CRLF;
// comments (keep-alives), id and retry fields are skipped. Data lines are
// joined with LF. An event whose data, or any line, passes max bytes ends
// the stream with an error wrapping ErrTooLarge. It returns io.EOF when r
// ends; an event not ended by an empty line is dropped.
func Read(r io.Reader, max int, emit func(event string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	// The scanner's bound is the larger of its buffer's capacity and the
	// maximum given: the first buffer must not pass the maximum.
	line := max + len("data: \r\n")
	sc.Buffer(make([]byte, 0, min(line, 64<<10)), line)
	var (
		data []byte
		name string
	)
	for sc.Scan() {
		text := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(text) == 0 {
			if d := bytes.TrimSuffix(data, []byte("\n")); len(d) > 0 {
				if err := emit(name, d); err != nil {
					return err
				}
			}
			data, name = data[:0], ""
			continue
		}
		if text[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(text, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if len(data)+len(value)+1 > max+1 {
				return fmt.Errorf("%w: an event over %d bytes", ErrTooLarge, max)
			}
			data = append(append(data, value...), '\n')
		case "event":
			name = string(value)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("%w: a line over %d bytes", ErrTooLarge, max)
	}
	if sc.Err() != nil {
		return sc.Err()
	}
	return io.EOF
}
