package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zero-dev/zero/internal/workspace/threads"
)

// TestOpenEndsRunsOfLastStart: a run that had not ended when the workspace
// stopped is interrupted when it opens again, and threads' folders are
// under the thread workspace ($ZERO_HOME/workspace/threads/ID).
func TestOpenEndsRunsOfLastStart(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	w, err := Open(ctx, Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	th, err := w.threads.Create(ctx, threads.Thread{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, "workspace", "threads", itoa(th.ID)); th.Dir != want {
		t.Errorf("the thread's folder is %s, want %s", th.Dir, want)
	}
	if fi, err := os.Stat(th.Dir); err != nil || !fi.IsDir() {
		t.Errorf("the thread's folder: %v", err)
	}
	run, _ := w.threads.StartRun(ctx, th.ID)
	w.Close()

	w, err = Open(ctx, Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got, err := w.threads.GetRun(ctx, run.ID)
	if err != nil || got.Status != threads.Interrupted || got.Error == "" {
		t.Errorf("the run after the restart: %+v %v, want interrupted with a reason", got, err)
	}
	if _, err := w.threads.StartRun(ctx, th.ID); err != nil {
		t.Errorf("a new run after the restart: %v", err)
	}
}
