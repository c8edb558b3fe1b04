package main

import (
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/testgit"
)

// TestSkillFromGitHubInThread: zero serve adds a skill from a real local
// git server (ZERO_GITHUB_URL), then the owner adds `zero mcp skills
// --workspace $ZERO_HOME/skills` as an approved stdio server, and a
// thread's model lists and activates the skill through it: the skill is
// usable from a thread and from zero mcp skills, and only through the
// tool runtime, with the call approved.
func TestSkillFromGitHubInThread(t *testing.T) {
	g := testgit.NewServer(t)
	g.Repo(t, "acme/skills", map[string]string{
		"LICENSE":             mitText,
		"skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Read PDFs.\n---\nTo read a PDF, use pdftotext.\n",
	})
	ms := modeltest.New(t)
	ms.Push(
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("c1", "skills__activate_skill", `{"name":"pdf"}`)}},
		modeltest.Reply{Text: "The skill says to use pdftotext."},
	)
	srv := startServe(t, []string{"ZERO_GITHUB_URL=" + g.URL, "GH_TOKEN=", "GITHUB_TOKEN="})
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar}
	if resp, err := b.Get(srv.link); err != nil || resp.StatusCode != 200 {
		t.Fatalf("login: %v %v", resp, err)
	}
	var session struct {
		CSRF string `json:"csrf_token"`
	}
	getJSON(t, b, "GET", srv.base+"/api/session", nil, nil, &session)
	h := map[string]string{"X-CSRF-Token": session.CSRF, "Sec-Fetch-Site": "same-origin", "Origin": srv.base, "Content-Type": "application/json"}
	call := func(method, path string, body, out any) {
		t.Helper()
		if out == nil {
			out = &map[string]any{}
		}
		getJSON(t, b, method, srv.base+path, body, h, out)
	}

	var p struct {
		Commit  string `json:"commit"`
		SetHash string `json:"set_hash"`
	}
	req := map[string]string{"repo": "acme/skills", "ref": "main", "folder": "skills/pdf"}
	call("POST", "/api/skills/preview", req, &p)
	call("POST", "/api/skills", map[string]string{"repo": "acme/skills", "ref": "main", "folder": "skills/pdf", "commit": p.Commit, "set_hash": p.SetHash}, nil)

	config := map[string]any{"name": "skills", "kind": "stdio", "command": zeroBinary(t),
		"args": []string{"mcp", "skills", "--workspace", filepath.Join(srv.home, "skills")}}
	var preview struct {
		Fingerprint string `json:"fingerprint"`
	}
	call("POST", "/api/servers/preview", map[string]any{"config": config}, &preview)
	var created struct {
		Server struct {
			ID int64 `json:"id"`
		} `json:"server"`
	}
	call("POST", "/api/servers", map[string]any{"config": config, "fingerprint": preview.Fingerprint, "enable": true}, &created)
	call("POST", "/api/servers/"+strconv.FormatInt(created.Server.ID, 10)+"/test", nil, nil)
	call("POST", "/api/providers", map[string]any{"name": "local", "base_url": ms.BaseURL(), "default_model": "scripted-1"}, nil)
	var th struct {
		ID int64 `json:"id"`
	}
	call("POST", "/api/threads", map[string]string{"title": "skills", "provider": "local"}, &th)
	call("POST", "/api/threads/"+strconv.FormatInt(th.ID, 10)+"/runs", map[string]string{"prompt": "How do I read a PDF?"}, nil)

	type event struct {
		Kind string         `json:"kind"`
		Body map[string]any `json:"body"`
	}
	var got struct {
		Events []event         `json:"events"`
		Run    *map[string]any `json:"run"`
	}
	poll := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			call("GET", "/api/threads/"+strconv.FormatInt(th.ID, 10), nil, &got)
			if done() {
				return
			}
		}
		t.Fatalf("never: %s: %+v", what, got)
	}
	var approval float64
	poll("a pending approval", func() bool {
		for _, e := range got.Events {
			if e.Kind == "approval" && e.Body["status"] == "pending" {
				approval = e.Body["approval"].(float64)
				return true
			}
		}
		return false
	})
	call("POST", "/api/approvals/"+strconv.FormatInt(int64(approval), 10), map[string]string{"answer": "once"}, nil)
	poll("the run's end", func() bool { return got.Run != nil && (*got.Run)["status"] == "completed" })
	var result string
	for _, e := range got.Events {
		if e.Kind == "message" && e.Body["role"] == "tool" {
			result, _ = e.Body["content"].(string)
		}
	}
	if !strings.Contains(result, "To read a PDF, use pdftotext.") || !strings.Contains(result, `server="skills" tool="activate_skill"`) {
		t.Errorf("the activated skill as the model read it: %q", result)
	}
	if refused := ms.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused: %v", refused)
	}
}
