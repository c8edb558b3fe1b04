package graphstore

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Benchmarks. Run them with, for example,
//
//	go test -run '^$' -bench . -benchtime 2000x ./internal/graphstore
//
// BenchmarkWrite at 10k and 1M entities shows that a write costs the same
// however large the graph; BenchmarkOpen/1M is the time to open a graph of
// a million entities.

// benchFiles caches generated graph files by size, for the whole run, in
// benchRoot, which TestMain removes.
var (
	benchFiles    sync.Map
	benchRootOnce sync.Once
	benchRoot     string
	benchRootErr  error
)

// benchFile returns a main file holding n entities, each with two
// observations, and n/2 relations, written as the reference writes it.
func benchFile(b *testing.B, n int) string {
	if p, ok := benchFiles.Load(n); ok {
		return p.(string)
	}
	benchRootOnce.Do(func() { benchRoot, benchRootErr = os.MkdirTemp("", "graphstore-bench") })
	if benchRootErr != nil {
		b.Fatal(benchRootErr)
	}
	path := filepath.Join(benchRoot, fmt.Sprintf("memory-%d.jsonl", n))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		if i > 0 {
			w.WriteByte('\n')
		}
		fmt.Fprintf(w, `{"type":"entity","name":"entity-%07d","entityType":"type-%d","observations":["observation one of %07d","Observation two: %07d likes tea"]}`, i, i%10, i, i)
	}
	for i := 0; i < n/2; i++ {
		fmt.Fprintf(w, "\n"+`{"type":"relation","from":"entity-%07d","to":"entity-%07d","relationType":"knows"}`, i, (i*7919)%n)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	benchFiles.Store(n, path)
	return path
}

// copyBenchFile returns a private copy of benchFile(n), for benchmarks that
// write.
func copyBenchFile(b *testing.B, n int) string {
	data, err := os.ReadFile(benchFile(b, n))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "memory.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(size(n), func(b *testing.B) {
			path := benchFile(b, n)
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			for b.Loop() {
				s, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkWrite creates one entity per operation, synced, in a graph of
// 10k or 1M entities.
func BenchmarkWrite(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(size(n), func(b *testing.B) {
			s, err := Open(copyBenchFile(b, n))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			i := 0
			for b.Loop() {
				i++
				e := Entity{Name: fmt.Sprintf("new-%d", i), EntityType: "type", Observations: []string{"an observation of a new entity"}}
				if _, err := s.CreateEntities([]Entity{e}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAddObservation adds one observation per operation to an
// existing entity.
func BenchmarkAddObservation(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(size(n), func(b *testing.B) {
			s, err := Open(copyBenchFile(b, n))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			i := 0
			for b.Loop() {
				i++
				o := Observations{EntityName: fmt.Sprintf("entity-%07d", (i*7919)%n), Contents: []string{fmt.Sprintf("observation %d", i)}}
				if _, err := s.AddObservations([]Observations{o}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(size(n), func(b *testing.B) {
			s, err := Open(benchFile(b, n))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			s.Search("warm up")
			i := 0
			for b.Loop() {
				i++
				if _, err := s.Search(fmt.Sprintf("ENTITY-%07d", (i*7919)%n)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func size(n int) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("%dM", n/1_000_000)
	}
	return fmt.Sprintf("%dk", n/1000)
}

// BenchmarkFirstSearch is the first search after opening a graph: the
// open is not timed, the search is.
func BenchmarkFirstSearch(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(size(n), func(b *testing.B) {
			path := benchFile(b, n)
			i := 0
			for b.Loop() {
				b.StopTimer()
				s, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				i++
				b.StartTimer()
				if _, err := s.Search(fmt.Sprintf("ENTITY-%07d", (i*7919)%n)); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
		})
	}
}
