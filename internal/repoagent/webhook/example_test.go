package webhook_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/zero-dev/zero/internal/repoagent/webhook"
)

// Verify first, from headers and raw bytes only; parse only what verified.
func ExampleVerify() {
	body := []byte(`{"after":"0123456789abcdef0123456789abcdef01234567","repository":{"full_name":"octo/repo","default_branch":"main"}}`)
	h := http.Header{}
	h.Set("X-Hub-Signature-256", "sha256=a0b2ff2e2cfd5e3e3e9d35e3c68fe8b0a8e09e3b0b9d1c1a9b0c5a4f2f3e1d0c") // forged
	h.Set("X-GitHub-Event", "push")
	h.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	secrets := webhook.Secrets{HMAC: "It's a Secret to Everybody"}

	d, err := webhook.Verify(webhook.GitHub, h, body, secrets, time.Now(), webhook.DefaultSkew)
	if err != nil {
		fmt.Println("rejected:", err) // the body is never looked at
		return
	}
	e, err := webhook.Parse(d, body)
	fmt.Println(e.Repo, err)
	// Output: rejected: verify github delivery: missing or invalid webhook signature
}

// A Delivery that Verify did not make cannot be parsed.
func ExampleParse_unverified() {
	d := webhook.Delivery{Forge: webhook.GitHub, Event: "push", ReplayKey: "github::1"}
	_, err := webhook.Parse(d, []byte(`{}`))
	fmt.Println(err)
	// Output: delivery not verified
}
