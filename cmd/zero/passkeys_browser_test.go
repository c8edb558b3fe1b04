package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

// addAuthenticator adds a CDP virtual authenticator to tab's page, as a
// device's own (internal, CTAP 2, resident keys, user verification that
// succeeds, presence without a touch), and returns its id.
func addAuthenticator(t *testing.T, tab context.Context) webauthn.AuthenticatorID {
	t.Helper()
	var id webauthn.AuthenticatorID
	do(t, tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return err
		}
		res, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true,
			HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
		id = res.AuthenticatorID
		return err
	}))
	return id
}

func removeAuthenticator(t *testing.T, tab context.Context, id webauthn.AuthenticatorID) {
	t.Helper()
	do(t, tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, webauthn.RemoveVirtualAuthenticator, webauthn.RemoveVirtualAuthenticatorParams{AuthenticatorID: id})
		return err
	}))
}

// addPasskeyOnPage adds the signed-in person's first passkey on the
// Security page, with the tab's authenticator, and returns its credential
// as the page shows it.
func addPasskeyOnPage(t *testing.T, tab context.Context, srv *serveProcess) string {
	t.Helper()
	do(t, tab, chromedp.Navigate(srv.base+"/security"), chromedp.WaitVisible(chromedp.ID("no-passkeys")),
		chromedp.SendKeys(chromedp.ID("new-passkey-name"), "virtual key"),
		chromedp.Click(chromedp.ID("add-passkey")),
		chromedp.WaitVisible(chromedp.CSS("table.passkeys code.credential")))
	credential := run(t, tab, chromedp.Text(chromedp.CSS("table.passkeys code.credential")))
	if name := run(t, tab, chromedp.Value(chromedp.CSS("table.passkeys input[name=name]"))); name != "virtual key" || len(credential) < 16 {
		t.Fatalf("the passkey listed: %q %q", name, credential)
	}
	return credential
}

// auditActors returns the actor of each audit record of action, read by
// the tab's signed-in page.
func auditActors(t *testing.T, tab context.Context, action string) []string {
	t.Helper()
	var actors []string
	out := inPage(t, tab, `return JSON.stringify((await send("GET", "/api/audit")).filter(r => r.action === `+jsString(action)+`).map(r => r.actor));`)
	if err := json.Unmarshal([]byte(out), &actors); err != nil {
		t.Fatal(err)
	}
	return actors
}

// TestBrowserPasskeyThreadApproval: with approvals needing a passkey, a
// thread's tool call is allowed from its page with the passkey: the
// thread page's script, refused with passkey_required, asks the
// authenticator for that answer and sends it again; the run completes and
// the answer's record names the credential.
func TestBrowserPasskeyThreadApproval(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	ms.Push(
		modeltest.Reply{Calls: []model.ToolCall{modeltest.Call("call_1", "tools__echo", `{"x": 1}`)}},
		modeltest.Reply{Text: "The tool said x is 1."},
	)
	addAuthenticator(t, tab)
	threadSetup(t, tab, srv, ms)
	credential := addPasskeyOnPage(t, tab, srv)
	newThread(t, tab, srv, "Passkey thread")
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("prompt"), "Echo x=1, please."),
		chromedp.Click(chromedp.ID("send")),
		chromedp.WaitVisible(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)),
		chromedp.Click(chromedp.CSS(`.approval[data-status="pending"] button[data-answer="once"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
	)
	if actors := auditActors(t, tab, "thread.approval"); len(actors) != 1 || actors[0] != "user:owner passkey:"+credential {
		t.Errorf("the answer's records: %q, want one by the credential %s", actors, credential)
	}
}

// TestBrowserPasskeyApproval drives zero serve in headless Chromium at
// http://localhost:PORT, the link it prints, with a CDP virtual
// authenticator: the owner adds a passkey on the Security page, reads on
// the review what the passkey will confirm (the server's name and the
// first 12 characters of its fingerprint), approves with the passkey, and
// the approval's audit record names the credential. Then the attack: a
// script in the same signed-in session clicks Approve on another server
// with the authenticator gone, and with a second virtual authenticator
// whose credential was never registered, and posts the approval form
// itself, skipping the page's passkey step: nothing approves it, and the
// refusal is audited.
func TestBrowserPasskeyApproval(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	if !strings.HasPrefix(srv.base, "http://localhost:") {
		t.Fatalf("zero serve names itself %s, want http://localhost:PORT", srv.base)
	}
	key := addAuthenticator(t, tab)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	command := buildEnvserver(t)
	inPage(t, tab, `
		for (const name of ["alpha", "beta"]) await send("POST", "/api/servers", {config: {name, kind: "stdio", command: `+jsString(command)+`}});
		return "";`)

	credential := addPasskeyOnPage(t, tab, srv)
	screenshot(t, tab, "security-passkey")

	do(t, tab, chromedp.Navigate(srv.base+"/servers/1"), chromedp.WaitVisible(chromedp.ID("passkey-approve")))
	fingerprint := run(t, tab, chromedp.Value(chromedp.CSS("form.approve input[name=fingerprint]")))
	words := run(t, tab, chromedp.Text(chromedp.ID("passkey-approve")))
	if want := `Approve server "alpha" with fingerprint ` + fingerprint[:12]; !strings.Contains(words, want) {
		t.Errorf("the review says %q, want %q", words, want)
	}
	screenshot(t, tab, "passkey-review")
	do(t, tab, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("notice")))
	if loc := run(t, tab, chromedp.Location()); loc != srv.base+"/servers/1?done=approved" {
		t.Fatalf("after approving with the passkey: %s", loc)
	}

	// The attack on beta, in the same session.
	removeAuthenticator(t, tab, key)
	clickApprove := func(what string) {
		t.Helper()
		do(t, tab, chromedp.Navigate(srv.base+"/servers/2"), chromedp.WaitVisible(chromedp.ID("approve")),
			chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(".passkey-problem")))
		if msg := run(t, tab, chromedp.Evaluate[string](`(async () => {
			for (let i = 0; i < 100; i++) {
				const p = document.querySelector(".passkey-problem");
				if (p && p.textContent.startsWith("Not sent")) return p.textContent;
				await new Promise(r => setTimeout(r, 100));
			}
			return document.querySelector(".passkey-problem").textContent;
		})()`, chromedp.EvalAwaitPromise)); !strings.HasPrefix(msg, "Not sent") {
			t.Errorf("%s: the page says %q", what, msg)
		}
	}
	// With no authenticator the browser waits for one (up to the
	// challenge's two minutes) and sends nothing; the script gives up.
	do(t, tab, chromedp.Navigate(srv.base+"/servers/2"), chromedp.WaitVisible(chromedp.ID("approve")),
		chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(".passkey-problem")))
	if msg := run(t, tab, chromedp.Text(chromedp.CSS(".passkey-problem"))); !strings.HasPrefix(msg, "Touch your passkey to confirm: Approve server \"beta\"") {
		t.Errorf("no authenticator: the page says %q", msg)
	}
	addAuthenticator(t, tab)
	clickApprove("an authenticator whose credential was never registered")
	status := run(t, tab, chromedp.Evaluate[int](`(async () => {
		const form = document.querySelector("form.approve");
		const r = await fetch("/servers/2/approve", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"},
			body: new URLSearchParams({csrf_token: form.csrf_token.value, fingerprint: form.fingerprint.value, enable: "1"})});
		return r.status;
	})()`, chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("the script's own post of the form: status %d", status)
	}

	var state struct {
		Servers []struct {
			Name     string `json:"name"`
			Approved bool   `json:"approved"`
		} `json:"servers"`
		Records []struct {
			Actor  string            `json:"actor"`
			Action string            `json:"action"`
			Detail map[string]string `json:"detail"`
		} `json:"records"`
	}
	out := inPage(t, tab, `
		const servers = (await send("GET", "/api/servers")).map(s => ({name: s.config.name, approved: s.approved}));
		return JSON.stringify({servers, records: await send("GET", "/api/audit")});`)
	if err := json.Unmarshal([]byte(out), &state); err != nil {
		t.Fatal(err)
	}
	for _, s := range state.Servers {
		if s.Approved != (s.Name == "alpha") {
			t.Errorf("server %s approved: %v", s.Name, s.Approved)
		}
	}
	var approvedBy string
	refused := 0
	for _, r := range state.Records {
		switch {
		case r.Action == "server.approve":
			approvedBy = r.Actor
		case r.Action == "access.refused" && r.Detail["reason"] == "passkey":
			refused++
		}
	}
	if approvedBy != "user:owner passkey:"+credential {
		t.Errorf("the approval's record: actor %q, want the credential %s", approvedBy, credential)
	}
	if refused == 0 {
		t.Error("the refused approval is not in the audit log")
	}
}
