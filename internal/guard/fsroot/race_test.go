//go:build race

package fsroot

// The race detector's instrumentation changes how many allocations a call
// makes (slices.Grow's make is no longer elided), so counts are not checked
// under it.
func init() { raceEnabled = true }
