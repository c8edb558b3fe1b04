// Package archtest owns the tests that keep the code's shape: which packages
// may import which security-sensitive packages, and that every package says,
// in one doc comment, what it owns or guards. It has no code of its own.
package archtest
