package repoagent

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesARescueWithinTheTaskTimeout: a rescue that does not
// exceed the task timeout (River would take a task still running for
// stuck and run it twice) is refused before anything listens, as is a
// task timeout under a second; unset, the rescue is the task timeout and
// RescueMargin.
func TestServeRefusesARescueWithinTheTaskTimeout(t *testing.T) {
	a, err := Open(context.Background(), Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, o := range []ServeOptions{
		{Addr: "127.0.0.1:0", TaskTimeout: time.Minute, RescueAfter: time.Minute},
		{Addr: "127.0.0.1:0", TaskTimeout: time.Minute, RescueAfter: 30 * time.Second},
		{Addr: "127.0.0.1:0", RescueAfter: 30 * time.Minute},
		{Addr: "127.0.0.1:0", TaskTimeout: time.Millisecond},
	} {
		listened := false
		o.Ready = func(string) { listened = true }
		if err := a.Serve(context.Background(), o); err == nil || listened {
			t.Errorf("Serve(%+v): %v, listened %v", o, err, listened)
		}
	}
	o := ServeOptions{TaskTimeout: 15 * time.Second}
	if err := o.Check(); err != nil || o.RescueAfter != 15*time.Second+RescueMargin {
		t.Errorf("the default rescue: %v %v", o.RescueAfter, err)
	}
	o = ServeOptions{}
	if err := o.Check(); err != nil || o.TaskTimeout != TaskTimeout || o.RescueAfter != TaskTimeout+RescueMargin {
		t.Errorf("the defaults: %+v %v", o, err)
	}
}

// TestJobTaskID: every attempt of a job is one task id, of the shape a
// run's ids have; another job's differs.
func TestJobTaskID(t *testing.T) {
	created := time.Date(2026, 12, 3, 13, 4, 5, 999, time.FixedZone("x", 3600))
	id := JobTaskID(42, created)
	if !regexp.MustCompile(`^20261203-120405-[0-9a-f]{8}$`).MatchString(id) || JobTaskID(42, created) != id {
		t.Errorf("JobTaskID(42) = %q", id)
	}
	if other := JobTaskID(43, created); other == id || !strings.HasPrefix(other, "20261203-120405-") {
		t.Errorf("JobTaskID(43) = %q, JobTaskID(42) = %q", other, id)
	}
}
