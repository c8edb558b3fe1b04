// Package webhook guards Agent Zero's webhook entry point: it decides whether
// a delivery from GitHub, GitLab or Gitea/Forgejo is authentic, fresh and new
// before a single byte of its body is parsed, and only then turns the body
// into an [Event] of untrusted data.
//
// The order is fixed and visible in the types. [Verify] reads only headers
// and the raw body bytes (to compute an HMAC); it never parses the body. It
// is a pure function: the secrets, the current time and the allowed clock
// skew are its arguments, and it reads neither the environment nor a clock.
// What it establishes is a [Delivery]: the forge, the event type named by
// the headers, and a replay key. [Parse] accepts only a Delivery that Verify
// produced, so a body cannot be parsed on a path that skipped verification.
// [Handler] puts the steps in order for HTTP: method, route, capped read,
// Verify, replay check through a [Ledger], Parse, and finally the caller's
// Accept.
//
// How each forge is verified:
//
//   - GitHub: X-Hub-Signature-256 is "sha256=" and the hex HMAC-SHA256 of
//     the body under [Secrets].HMAC.
//   - Gitea and Forgejo: X-Gitea-Signature or X-Forgejo-Signature is the hex
//     HMAC-SHA256 of the body under Secrets.HMAC, with no prefix. Every one
//     of the two that is present must match.
//   - GitLab: either X-Gitlab-Token equals [Secrets].GitLab, or the delivery
//     carries a Standard Webhooks signature (webhook-id, webhook-timestamp,
//     webhook-signature) under Secrets.HMAC whose timestamp is within the
//     allowed skew of now.
//
// MACs and tokens are compared in constant time. A delivery without an ID to
// de-duplicate it by is refused ([ErrNoDeliveryID]). Errors never quote
// header values or body bytes, and [Handler] answers with short fixed text
// and logs only the forge and a fixed reason, so a rejected body or a
// presented secret is never logged or echoed.
//
// An [Event] is data, never instructions: its text fields are untrusted and
// merely truncated, while the fields code acts on (repository, number,
// commit, default branch, action) are validated and refused when malformed.
//
// What it cannot do: GitHub and Gitea sign only the body, so their event and
// delivery headers are not authenticated; someone who captured one signed
// delivery can present it again under a new delivery ID, and nothing in
// those protocols (they carry no signed timestamp) lets a receiver tell. A
// GitLab token authenticates the sender but not the body.
package webhook
