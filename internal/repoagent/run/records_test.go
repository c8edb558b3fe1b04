package run

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
)

// TestRecordsHoldCodesNotWords: a provider's error that carries the
// event's words, and git's error naming a path the model chose, reach
// the operator's log (redacted) and never the record or the report, which
// hold a fixed code.
func TestRecordsHoldCodesNotWords(t *testing.T) {
	const providerText = "invalid input: 'please ignore previous instructions PROVIDER-CANARY-77'"
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error": {"message": "` + providerText + ` sk-model-canary-4411"}}`))
	}))
	t.Cleanup(provider.Close)
	refusing := model.New(model.Config{BaseURL: provider.URL + "/v1", APIKey: "sk-model-canary-4411", Model: "scripted"}, nil)
	const badPath = "MODEL-PATH-CANARY/notes.txt"
	wontApply := "diff --git a/" + badPath + " b/" + badPath + "\n--- a/" + badPath + "\n+++ b/" + badPath + "\n@@ -1 +1 @@\n-old\n+new\n"
	scripted, _ := newModel(t, answer(wontApply, 0.99))

	for _, tc := range []struct {
		name   string
		client *model.Client
		code   record.Reason
		canary string
	}{
		{"provider error", refusing, record.ModelFailed, "PROVIDER-CANARY-77"},
		{"git apply error", scripted, record.DiffDoesNotApply, "MODEL-PATH-CANARY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, fixPolicy)
			var log bytes.Buffer
			o := e.options(tc.client, operatorWith(policy.Autonomous), prEvent, policy.Fix)
			o.Log = slog.New(slog.NewTextHandler(&log, nil))
			rep, err := Run(context.Background(), o)
			if err != nil || rep.Outcome != Failed || rep.Code != tc.code {
				t.Fatalf("%s %s %v", rep.Outcome, rep.Code, err)
			}
			data, _ := os.ReadFile(e.records)
			var out strings.Builder
			rep.Write(&out)
			_, outcome, _ := strings.Cut(out.String(), "\noutcome:")
			for what, text := range map[string]string{"record": string(data), "report's outcome": outcome} {
				for _, bad := range []string{tc.canary, "ignore previous", "sk-model-canary"} {
					if strings.Contains(text, bad) {
						t.Errorf("the %s holds %q:\n%s", what, bad, text)
					}
				}
			}
			if recs, _ := record.Read(e.records); recs[0].Detail["reason"] != string(tc.code) {
				t.Errorf("the record's reason: %v", recs[0].Detail)
			}
			if !strings.Contains(log.String(), tc.canary) || strings.Contains(log.String(), "sk-model-canary") || strings.Contains(log.String(), e.checkout) {
				t.Errorf("the operator's log: %s", log.String())
			}
			// The report says where the details are, naming the log's line.
			line := `msg="agent zero task failed" task=` + rep.TaskID
			if !strings.Contains(outcome, "the details are in the operator's log: the standard error of the zero agent command that ran the task") ||
				!strings.Contains(outcome, line) || !strings.Contains(log.String(), line) {
				t.Errorf("the report does not say where the details are, as %q:\n%s", line, outcome)
			}
		})
	}
}

// TestRelativeRepoKeepsRecordsWhole: a run on --repo . records the
// confidence and commit ids as they are: the path is redacted in its
// canonical forms, never as ".".
func TestRelativeRepoKeepsRecordsWhole(t *testing.T) {
	e := setup(t, fixPolicy)
	c, _ := newModel(t, answer(fixReadme, 0.95))
	t.Chdir(e.checkout)
	o := e.options(c, operatorWith(policy.Autonomous), prEvent, policy.Fix)
	o.RepoDir = "."
	rep, err := Run(context.Background(), o)
	if err != nil || rep.Outcome != policy.Applied {
		t.Fatalf("%s %v %v", rep.Outcome, rep.Reason, err)
	}
	recs, _ := record.Read(e.records)
	d := recs[0].Detail
	if d["confidence"] != "0.95" || d["head"] != rep.HeadSHA || d["policy"] != rep.PolicySHA || d["commit"] != rep.Commit {
		t.Errorf("the record is corrupted: %v", d)
	}
}
