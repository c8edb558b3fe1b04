package mcpbridge

import (
	"errors"
	"fmt"
	"io"

	"github.com/zero-dev/zero/internal/sse"
)

// errMalformedEvent reports an event whose data is not a JSON-RPC message,
// or that passes the size bound.
var errMalformedEvent = errors.New("malformed event on the workspace's event stream")

// readEvents reads the workspace's event stream from r and calls emit with
// the data of each message event (sse.Read; events of another type are
// skipped), until r ends or emit fails. An event or line over max bytes
// ends the stream with errMalformedEvent. It returns io.EOF when r ends.
func readEvents(r io.Reader, max int, emit func(data []byte) error) error {
	err := sse.Read(r, max, func(event string, data []byte) error {
		if event != "" && event != "message" {
			return nil
		}
		return emit(data)
	})
	if errors.Is(err, sse.ErrTooLarge) {
		return fmt.Errorf("%w: %w", errMalformedEvent, err)
	}
	return err
}
