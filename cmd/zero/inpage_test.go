package main

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
)

// inPage runs body, the body of an async JavaScript function, in tab's
// signed-in page, and returns what it returns as a string. There, send(method,
// path, body) calls the API as the page's own script does (JSON, the
// session's CSRF token) and returns the answer's JSON, throwing on an error
// answer. Tests use it to set up what other tests drive through pages.
func inPage(t *testing.T, tab context.Context, body string) string {
	t.Helper()
	return run(t, tab, chromedp.Evaluate[string](`(async () => {
		const s = await (await fetch("/api/session")).json();
		const send = async (method, path, body) => {
			const r = await fetch(path, {method, headers: {"Content-Type": "application/json", "X-CSRF-Token": s.csrf_token}, body: JSON.stringify(body)});
			const j = await r.json();
			if (!r.ok) throw new Error(path + ": " + JSON.stringify(j));
			return j;
		};
		`+body+`
	})()`, chromedp.EvalAwaitPromise))
}

// toolsAndProvider is inPage code that adds, approves, enables and tests
// the runtime's toolserver as server "tools", and adds provider "local" at
// modelURL with the default model scripted-1.
func toolsAndProvider(t *testing.T, modelURL string) string {
	return `
		const config = {name: "tools", kind: "stdio", command: ` + jsString(runtimetest.Toolserver(t)) + `};
		const p = await send("POST", "/api/servers/preview", {config});
		const c = await send("POST", "/api/servers", {config, fingerprint: p.fingerprint, enable: true});
		await send("POST", "/api/servers/" + c.server.id + "/test", null);
		await send("POST", "/api/providers", {name: "local", base_url: ` + jsString(modelURL) + `, default_model: "scripted-1"});`
}
