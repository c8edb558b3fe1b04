package mcpbridge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errMalformedEvent reports an event whose data is not a JSON-RPC message,
// or that passes the size bound.
var errMalformedEvent = errors.New("malformed event on the workspace's event stream")

// readEvents reads server-sent events from r (the text/event-stream
// format: fields, one a line, an empty line ends an event) and calls emit
// with the data of each message event, until r ends or emit fails. Lines
// end in LF or CRLF; comments, id and retry fields, events of another type
// and events with no data are skipped. An event whose data passes max
// bytes ends the stream with errMalformedEvent. It returns io.EOF when r
// ends.
func readEvents(r io.Reader, max int, emit func(data []byte) error) error {
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
			if d := bytes.TrimSuffix(data, []byte("\n")); len(d) > 0 && (name == "" || name == "message") {
				if err := emit(d); err != nil {
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
				return fmt.Errorf("%w: an event over %d bytes", errMalformedEvent, max)
			}
			data = append(append(data, value...), '\n')
		case "event":
			name = string(value)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("%w: a line over %d bytes", errMalformedEvent, max)
	}
	if sc.Err() != nil {
		return sc.Err()
	}
	return io.EOF
}
