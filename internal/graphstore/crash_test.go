package graphstore

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The crash test runs this test binary again as a writer process (see
// TestMain) and kills it.
const writerEnv = "GRAPHSTORE_TEST_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		runWriter(spec)
		return
	}
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// runWriter opens the file named in spec ("round path") and writes from
// four goroutines until it is killed, printing each write on stdout once it
// returned: "+ NAME" created, "o NAME" observation "second" added, "- NAME"
// deleted, and "? NAME" before it asks to delete NAME.
func runWriter(spec string) {
	round, path, _ := strings.Cut(spec, " ")
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.compactAt = 4 << 10 // compact often, so that kills land in compactions too
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				n := fmt.Sprintf("r%s-w%d-%d", round, w, i)
				if _, err := s.CreateEntities([]Entity{ent(n, "t", "first", strings.Repeat("padding ", i%50))}); err != nil {
					fail(err)
				}
				say("+ %s", n)
				if _, err := s.AddObservations([]Observations{{n, []string{"second"}}}); err != nil {
					fail(err)
				}
				say("o %s", n)
				if i%4 == 3 {
					prev := fmt.Sprintf("r%s-w%d-%d", round, w, i-1)
					say("? %s", prev)
					if err := s.DeleteEntities([]string{prev}); err != nil {
						fail(err)
					}
					say("- %s", prev)
				}
			}
		})
	}
	wg.Wait()
}

// TestKillDuringWrites kills a process writing from four goroutines, with
// frequent compactions, at a random moment, five times over on the same
// file. After each kill the file must load and hold every write the process
// reported done.
func TestKillDuringWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	created, added, deleted, maybeDeleted := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	check := func(t *testing.T, g Graph) {
		t.Helper()
		have := map[string]Entity{}
		for _, e := range g.Entities {
			have[e.Name] = e
		}
		for n := range created {
			e, ok := have[n]
			switch {
			case deleted[n]:
				if ok {
					t.Errorf("%s: deleted, but present", n)
				}
			case maybeDeleted[n]:
			case !ok:
				t.Errorf("%s: created, but missing", n)
			case !slices.Contains(e.Observations, "first"):
				t.Errorf("%s: observations %q lack \"first\"", n, e.Observations)
			case added[n] && !slices.Contains(e.Observations, "second"):
				t.Errorf("%s: observations %q lack \"second\", which was added", n, e.Observations)
			}
		}
	}
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", writerEnv, round, path))
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAt := 50 + r.IntN(400)
		br := bufio.NewReader(stdout)
		acks := 0
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				break // killed; a line cut short is no report
			}
			op, n, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
			switch op {
			case "+":
				created[n] = true
			case "o":
				added[n] = true
			case "?":
				maybeDeleted[n] = true
			case "-":
				deleted[n] = true
			}
			if acks++; acks == killAt {
				cmd.Process.Kill()
			}
		}
		if err := cmd.Wait(); err == nil || acks < killAt {
			t.Fatalf("round %d: the writer stopped by itself after %d reports: %v", round, acks, err)
		}
		s, err := Open(path)
		if err != nil {
			t.Fatalf("round %d: the file does not load after the kill: %v", round, err)
		}
		g, err := s.Read()
		if err != nil {
			t.Fatal(err)
		}
		check(t, g)
		if round%2 == 0 {
			s.closeFiles() // leave the log as the crash left it for the next round
		} else if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := must(Open(path))(t).Close(); err != nil {
		t.Fatal(err)
	}
	// After the last Close, the main file alone holds it all.
	if _, err := os.Stat(path + LogSuffix); !os.IsNotExist(err) {
		t.Errorf("the change log is still there after Close: %v", err)
	}
	data, _ := os.ReadFile(path)
	g, err := parseMain(path, string(data))
	if err != nil {
		t.Fatal(err)
	}
	check(t, g.all())
	t.Logf("%d entities created, %d deleted, main file %d bytes", len(created), len(deleted), len(data))
}
