package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAuditPage: the audit page fits 1280 and 390 px wide, its
// table included; a server's records name it, with its id, and link to it;
// fingerprints are shortened to one line, whole in their title and when
// opened; a long value wraps.
func TestBrowserAuditPage(t *testing.T) {
	tab := browser(t)
	srv := startServe(t, nil)
	command := buildEnvserver(t)
	do(t, tab, chromedp.Navigate(srv.link), chromedp.WaitVisible(chromedp.ID("add-server")))
	long := "http://127.0.0.1:1/v1/" + strings.Repeat("a-long-path-segment-", 12)
	id := inPage(t, tab, `
		const config = {name: "audited-files", kind: "stdio", command: `+jsString(command)+`};
		const p = await send("POST", "/api/servers/preview", {config});
		const c = await send("POST", "/api/servers", {config, fingerprint: p.fingerprint, enable: true});
		await send("POST", "/api/providers", {name: "far", base_url: `+jsString(long)+`});
		return String(c.server.id);`)
	do(t, tab, chromedp.Navigate(srv.base+"/audit"), chromedp.WaitVisible(chromedp.CSS("table.audit")))

	for _, width := range []int64{1280, 390} {
		do(t, tab, chromedp.EmulateViewport(width, 900))
		fit := run(t, tab, chromedp.Evaluate[string](`(() => {
			const doc = document.documentElement, table = document.querySelector("table.audit");
			if (doc.scrollWidth > window.innerWidth) return "the page is " + doc.scrollWidth + " px wide";
			const w = Math.max(table.scrollWidth, table.getBoundingClientRect().width), box = table.parentElement.clientWidth;
			if (w > box + 1) return "the table is " + w + " px wide in " + box;
			for (const s of document.querySelectorAll("table.audit details.short summary")) {
				const size = parseFloat(getComputedStyle(s).fontSize);
				if (s.getBoundingClientRect().height > 2 * size) return "a shortened digest takes " + s.getBoundingClientRect().height + " px: " + s.textContent;
			}
			return "";
		})()`))
		if fit != "" {
			t.Errorf("at %d px: %s", width, fit)
		}
	}
	what := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.audit td.target"), td => td.textContent + " -> " + (td.querySelector("a") ? td.querySelector("a").getAttribute("href") : ""))`))
	named := false
	for _, w := range what {
		if strings.Contains(w, "server:"+id) {
			named = true
			if w != "audited-files server:"+id+" -> /servers/"+id {
				t.Errorf("a server's record shows %q", w)
			}
		}
	}
	if !named {
		t.Errorf("no record of server %s: %q", id, what)
	}
	fps := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table.audit dd.record-fingerprint summary"), s => s.textContent + "|" + s.title)`))
	full := regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	if len(fps) == 0 {
		t.Error("no record shows a fingerprint")
	}
	for _, fp := range fps {
		short, title, _ := strings.Cut(fp, "|")
		if !full.MatchString(title) || !strings.HasPrefix(short, title[:19]+"…") || len(short) > 40 {
			t.Errorf("a fingerprint shown as %q, titled %q", short, title)
		}
	}
	do(t, tab, chromedp.EmulateViewport(1280, 900))
	if !run(t, tab, chromedp.Evaluate[bool](`document.body.textContent.includes(`+jsString(long)+`)`)) {
		t.Error("the provider's long base URL is not shown whole")
	}
	screenshot(t, tab, "audit")
	if t.Failed() {
		return
	}
	do(t, tab, chromedp.Click(chromedp.CSS(`table.audit dd.record-fingerprint summary`)), chromedp.WaitVisible(chromedp.CSS(`table.audit dd.record-fingerprint details[open] code.hash`)))
	if got := run(t, tab, chromedp.Text(chromedp.CSS(`table.audit dd.record-fingerprint details[open] code.hash`))); !full.MatchString(got) {
		t.Errorf("an opened fingerprint shows %q", got)
	}
}
