//go:build !linux

package mcpserver

import "io"

// growPipe does nothing where pipes cannot be resized.
func growPipe(io.Writer) {}
