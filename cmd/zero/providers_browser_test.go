package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/testnet"
)

// TestBrowserProviders drives the providers page in headless Chromium: a
// first provider is added with no key to remove; List models leads to its
// edit form, whose model field offers the models listed; a key set there
// can then be removed; an endpoint that does not answer is saved with a
// warning that says why; the page fits 1280 and 390 px.
func TestBrowserProviders(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.New(t)
	seen := record(t, tab)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Navigate(srv.base+"/providers"), chromedp.WaitVisible(chromedp.ID("save-provider")))
	if n := run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll("#provider-clear-key").length`)); n != 0 {
		t.Error("the form to add the first provider offers to remove a saved key")
	}
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("provider-name"), "local"),
		chromedp.SendKeys(chromedp.ID("provider-url"), ms.BaseURL()),
		chromedp.Click(chromedp.ID("save-provider")),
		chromedp.WaitVisible(chromedp.ID("notice")),
		chromedp.Click(chromedp.CSS(`button[id^="models-"]`)),
		chromedp.WaitVisible(chromedp.ID("cancel-edit")),
	)
	if h := run(t, tab, chromedp.Text(chromedp.ID("form-heading"))); h != "Edit local" {
		t.Errorf("the form after List models is headed %q", h)
	}
	offered := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.getElementById("provider-model").list.options, o => o.value)`))
	if strings.Join(offered, ",") != "scripted-1,scripted-2" {
		t.Errorf("the model field offers %q", offered)
	}
	if n := run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll("#provider-clear-key").length`)); n != 0 {
		t.Error("a provider without a key offers to remove one")
	}
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("provider-model"), "scripted-2"),
		chromedp.SendKeys(chromedp.ID("provider-key"), "sk-browser-canary-31"),
		chromedp.Click(chromedp.ID("save-provider")),
		chromedp.WaitNotPresent(chromedp.ID("cancel-edit")), // the edit form had a notice too
		chromedp.WaitVisible(chromedp.ID("notice")),
		chromedp.Click(chromedp.CSS(`a[id^="edit-"]`)),
		chromedp.WaitVisible(chromedp.ID("provider-clear-key")),
	)
	if v := run(t, tab, chromedp.Value(chromedp.ID("provider-model"))); v != "scripted-2" {
		t.Errorf("the edit form's model: %q", v)
	}
	if v := run(t, tab, chromedp.Value(chromedp.ID("provider-key"))); v != "" {
		t.Errorf("the edit form shows a key: %q", v)
	}
	screenshot(t, tab, "provider-edit")

	closed := "http://" + testnet.ClosedAddr(t) + "/v1"
	do(t, tab,
		chromedp.Click(chromedp.ID("cancel-edit")),
		chromedp.WaitNotPresent(chromedp.ID("cancel-edit")),
		chromedp.WaitVisible(chromedp.ID("provider-name")),
		chromedp.SendKeys(chromedp.ID("provider-name"), "later"),
		chromedp.SendKeys(chromedp.ID("provider-url"), closed),
		chromedp.Click(chromedp.ID("save-provider")),
		chromedp.WaitVisible(chromedp.ID("warning")),
	)
	warning := run(t, tab, chromedp.Text(chromedp.ID("warning")))
	if !strings.Contains(warning, "Saved, but the endpoint did not answer: "+closed+": nothing is listening there (connection refused)") {
		t.Errorf("the warning: %q", warning)
	}
	screenshot(t, tab, "provider-warning")
	if f := seen.foreign(srv.base); len(f) > 0 {
		t.Errorf("requests off the workspace's origin: %v", f)
	}
}

// TestBrowserProviderWireAPI: a provider's wire API is chosen on its form,
// saved, shown in the table and on its edit form, and used to list its
// models (Anthropic's /v1/models, which the scripted server refuses
// without Anthropic's headers); a wire API the workspace does not speak
// is refused with the reason.
func TestBrowserProviderWireAPI(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	ms := modeltest.NewAnthropic(t)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")),
		chromedp.Navigate(srv.base+"/providers"), chromedp.WaitVisible(chromedp.ID("save-provider")))
	if v := run(t, tab, chromedp.Value(chromedp.ID("provider-wire"))); v != "chat-completions" {
		t.Errorf("a new provider's wire API is %q, want chat-completions", v)
	}
	do(t, tab,
		chromedp.SendKeys(chromedp.ID("provider-name"), "claude"),
		chromedp.SendKeys(chromedp.ID("provider-url"), ms.BaseURL()),
		chromedp.SetValue(chromedp.ID("provider-wire"), "anthropic-messages"),
		chromedp.Click(chromedp.ID("save-provider")),
		chromedp.WaitVisible(chromedp.ID("notice")),
	)
	if w := run(t, tab, chromedp.Text(chromedp.CSS(`tr[id^="provider-"] td.wire-api`))); w != "anthropic-messages" {
		t.Errorf("the table shows wire API %q", w)
	}
	do(t, tab,
		chromedp.Click(chromedp.CSS(`button[id^="models-"]`)),
		chromedp.WaitVisible(chromedp.ID("cancel-edit")),
	)
	if v := run(t, tab, chromedp.Value(chromedp.ID("provider-wire"))); v != "anthropic-messages" {
		t.Errorf("the edit form's wire API is %q", v)
	}
	offered := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.getElementById("provider-model").list.options, o => o.value)`))
	if strings.Join(offered, ",") != "scripted-1,scripted-2" {
		t.Errorf("the model field offers %q (the server refused: %q)", offered, ms.Refused())
	}
	screenshot(t, tab, "provider-wire-api")

	// A value the select does not offer, as a hand-made form would send.
	do(t, tab,
		chromedp.Evaluate[chromedp.Void](`{const s = document.getElementById("provider-wire"); s.add(new Option("anthropic", "anthropic")); s.value = "anthropic"}`),
		chromedp.Click(chromedp.ID("save-provider")),
		chromedp.WaitVisible(chromedp.ID("problem")),
	)
	if p := run(t, tab, chromedp.Text(chromedp.ID("problem"))); !strings.Contains(p, `wire API "anthropic": want chat-completions, responses, anthropic-messages`) {
		t.Errorf("the refusal says %q", p)
	}
	if w := run(t, tab, chromedp.Text(chromedp.CSS(`tr[id^="provider-"] td.wire-api`))); w != "anthropic-messages" {
		t.Errorf("after the refusal the table shows wire API %q", w)
	}
}
