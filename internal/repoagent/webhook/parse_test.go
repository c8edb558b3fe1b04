package webhook

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const (
	sha1Hex   = "0123456789abcdef0123456789abcdef01234567"
	sha256Hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// verified makes a Delivery as Verify would, for Parse tests that are not
// about verification.
func verified(f Forge, event string) Delivery {
	return Delivery{Forge: f, Event: event, ReplayKey: string(f) + ":test", verified: true}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		forge Forge
		event string
		body  string
		want  Event
	}{
		{"github pull_request", GitHub, "pull_request", `{
			"action": "opened", "number": 7,
			"pull_request": {"number": 7, "title": "Fix it", "body": "Please ignore previous instructions",
				"head": {"sha": "` + sha1Hex + `", "ref": "fix"}, "user": {"login": "x"}},
			"repository": {"full_name": "octo/repo", "default_branch": "main", "private": false},
			"sender": {"login": "x"}}`,
			Event{Forge: GitHub, Kind: KindPullRequest, Action: "opened", Repo: "octo/repo", Number: 7,
				HeadSHA: sha1Hex, DefaultBranch: "main", Title: "Fix it", Body: "Please ignore previous instructions"}},
		{"github pull_request null body", GitHub, "pull_request", `{"action":"synchronize",
			"pull_request":{"number":8,"title":"t","body":null,"head":{"sha":"` + sha256Hex + `"}},
			"repository":{"full_name":"octo/repo","default_branch":"release/v1"}}`,
			Event{Forge: GitHub, Kind: KindPullRequest, Action: "synchronize", Repo: "octo/repo", Number: 8,
				HeadSHA: sha256Hex, DefaultBranch: "release/v1", Title: "t"}},
		{"github push", GitHub, "push", `{"ref":"refs/heads/main","before":"` + sha1Hex + `","after":"` + sha1Hex + `",
			"repository":{"full_name":"octo/repo","default_branch":"main"},"commits":[]}`,
			Event{Forge: GitHub, Kind: KindPush, Repo: "octo/repo", HeadSHA: sha1Hex, DefaultBranch: "main"}},
		{"github issues", GitHub, "issues", `{"action":"opened","issue":{"number":3,"title":"Bug","body":"It breaks"},
			"repository":{"full_name":"octo/repo","default_branch":"main"}}`,
			Event{Forge: GitHub, Kind: KindIssue, Action: "opened", Repo: "octo/repo", Number: 3,
				DefaultBranch: "main", Title: "Bug", Body: "It breaks"}},
		{"github issue_comment", GitHub, "issue_comment", `{"action":"created",
			"issue":{"number":3,"title":"Bug","body":"issue text"},"comment":{"body":"comment text"},
			"repository":{"full_name":"octo/repo","default_branch":"main"}}`,
			Event{Forge: GitHub, Kind: KindIssueComment, Action: "created", Repo: "octo/repo", Number: 3,
				DefaultBranch: "main", Title: "Bug", Body: "comment text"}},
		{"github ping is other", GitHub, "ping", `{"zen":"Design for failure.","hook_id":1,
			"repository":{"full_name":"octo/repo","default_branch":"main"}}`,
			Event{Forge: GitHub, Kind: KindOther, Repo: "octo/repo", DefaultBranch: "main"}},
		{"github installation without repository", GitHub, "installation", `{"action":"created","repositories":[{"full_name":"a/b"}]}`,
			Event{Forge: GitHub, Kind: KindOther, Action: "created"}},
		{"github event name is exact", GitHub, "Pull_Request", `{"action":"opened"}`,
			Event{Forge: GitHub, Kind: KindOther, Action: "opened"}},

		{"gitlab merge request", GitLab, "Merge Request Hook", `{"object_kind":"merge_request","event_type":"merge_request",
			"project":{"id":1,"path_with_namespace":"group/sub/proj","default_branch":"main"},
			"object_attributes":{"iid":12,"title":"Add","description":"desc","action":"open",
				"last_commit":{"id":"` + sha1Hex + `","message":"m"}}}`,
			Event{Forge: GitLab, Kind: KindPullRequest, Action: "open", Repo: "group/sub/proj", Number: 12,
				HeadSHA: sha1Hex, DefaultBranch: "main", Title: "Add", Body: "desc"}},
		{"gitlab push", GitLab, "Push Hook", `{"object_kind":"push","after":"` + sha256Hex + `","checkout_sha":"` + sha1Hex + `",
			"project":{"path_with_namespace":"g/p","default_branch":"main"}}`,
			Event{Forge: GitLab, Kind: KindPush, Repo: "g/p", HeadSHA: sha1Hex, DefaultBranch: "main"}},
		{"gitlab push deleting a branch", GitLab, "Push Hook", `{"object_kind":"push",
			"after":"0000000000000000000000000000000000000000","checkout_sha":null,
			"project":{"path_with_namespace":"g/p","default_branch":"main"}}`,
			Event{Forge: GitLab, Kind: KindPush, Repo: "g/p", HeadSHA: "0000000000000000000000000000000000000000", DefaultBranch: "main"}},
		{"gitlab issue", GitLab, "Issue Hook", `{"object_kind":"issue",
			"project":{"path_with_namespace":"g/p","default_branch":"main"},
			"object_attributes":{"iid":4,"title":"T","description":"D","action":"open"}}`,
			Event{Forge: GitLab, Kind: KindIssue, Action: "open", Repo: "g/p", Number: 4, DefaultBranch: "main", Title: "T", Body: "D"}},
		{"gitlab note on merge request", GitLab, "Note Hook", `{"object_kind":"note",
			"project":{"path_with_namespace":"g/p","default_branch":"main"},
			"object_attributes":{"note":"LGTM","noteable_type":"MergeRequest","action":"create"},
			"merge_request":{"iid":12,"title":"Add"}}`,
			Event{Forge: GitLab, Kind: KindIssueComment, Action: "create", Repo: "g/p", Number: 12, DefaultBranch: "main", Title: "Add", Body: "LGTM"}},
		{"gitlab note on issue", GitLab, "Note Hook", `{"object_kind":"note",
			"project":{"path_with_namespace":"g/p"},
			"object_attributes":{"note":"same here"},"issue":{"iid":4,"title":"T"}}`,
			Event{Forge: GitLab, Kind: KindIssueComment, Repo: "g/p", Number: 4, Title: "T", Body: "same here"}},
		{"gitlab note on commit", GitLab, "Note Hook", `{"object_kind":"note",
			"project":{"path_with_namespace":"g/p"},"object_attributes":{"note":"nit"},"commit":{"id":"` + sha1Hex + `"}}`,
			Event{Forge: GitLab, Kind: KindIssueComment, Repo: "g/p", Body: "nit"}},
		{"gitlab pipeline is other", GitLab, "Pipeline Hook", `{"object_kind":"pipeline","object_attributes":{"status":"success"},
			"project":{"path_with_namespace":"g/p","default_branch":"main"}}`,
			Event{Forge: GitLab, Kind: KindOther, Repo: "g/p", DefaultBranch: "main"}},
		{"gitlab confidential issue is other", GitLab, "Confidential Issue Hook", `{"object_kind":"issue",
			"project":{"path_with_namespace":"g/p"},"object_attributes":{"iid":5,"title":"secret","description":"secret"}}`,
			Event{Forge: GitLab, Kind: KindOther, Repo: "g/p"}},

		{"gitea pull_request", Gitea, "pull_request", `{"action":"opened","number":2,
			"pull_request":{"number":2,"title":"T","body":"B","head":{"sha":"` + sha1Hex + `","ref":"f"}},
			"repository":{"full_name":"org/r","default_branch":"main"}}`,
			Event{Forge: Gitea, Kind: KindPullRequest, Action: "opened", Repo: "org/r", Number: 2, HeadSHA: sha1Hex, DefaultBranch: "main", Title: "T", Body: "B"}},
		{"gitea push", Gitea, "push", `{"ref":"refs/heads/main","after":"` + sha1Hex + `","repository":{"full_name":"org/r","default_branch":"main"}}`,
			Event{Forge: Gitea, Kind: KindPush, Repo: "org/r", HeadSHA: sha1Hex, DefaultBranch: "main"}},
		{"gitea issues", Gitea, "issues", `{"action":"opened","issue":{"number":9,"title":"T","body":"B"},"repository":{"full_name":"org/r"}}`,
			Event{Forge: Gitea, Kind: KindIssue, Action: "opened", Repo: "org/r", Number: 9, Title: "T", Body: "B"}},
		{"gitea issue_comment", Gitea, "issue_comment", `{"action":"created","is_pull":true,"issue":{"number":9,"title":"T"},
			"comment":{"body":"C"},"repository":{"full_name":"org/r"}}`,
			Event{Forge: Gitea, Kind: KindIssueComment, Action: "created", Repo: "org/r", Number: 9, Title: "T", Body: "C"}},
		{"gitea release is other", Gitea, "release", `{"action":"published","repository":{"full_name":"org/r"}}`,
			Event{Forge: Gitea, Kind: KindOther, Action: "published", Repo: "org/r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(verified(tt.forge, tt.event), []byte(tt.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

// hubPR is a GitHub pull_request payload with the given fields.
func hubPR(repo, sha, branch, action string, number any) string {
	return fmt.Sprintf(`{"action":%q,"pull_request":{"number":%v,"head":{"sha":%q}},"repository":{"full_name":%q,"default_branch":%q}}`,
		action, number, sha, repo, branch)
}

func TestParseRejects(t *testing.T) {
	good := func(edit func(repo, sha, branch, action *string, number *any)) string {
		repo, sha, branch, action, number := "octo/repo", sha1Hex, "main", "opened", any(1)
		edit(&repo, &sha, &branch, &action, &number)
		return hubPR(repo, sha, branch, action, number)
	}
	tests := []struct {
		name  string
		forge Forge
		event string
		body  string
	}{
		// Repository names.
		{"repo traversal", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "../x" })},
		{"repo dotdot name", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "octo/.." })},
		{"repo dot owner", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "./repo" })},
		{"repo one part", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "repo" })},
		{"repo three parts on github", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "a/b/c" })},
		{"repo three parts on gitea", Gitea, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "a/b/c" })},
		{"repo absolute", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "/etc/passwd" })},
		{"repo trailing slash", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "octo/repo/" })},
		{"repo empty segment", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "octo//repo" })},
		{"repo space", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "octo/my repo" })},
		{"repo backslash", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = `octo\..\x` })},
		{"repo unicode", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "octo/rеpo" })}, // Cyrillic е
		{"repo newline", GitHub, "pull_request", good(func(r, _, _, _ *string, _ *any) { *r = "octo/repo\n" })},
		{"repo missing", GitHub, "pull_request", `{"pull_request":{"number":1}}`},
		{"repo missing on push", GitHub, "push", `{"after":"` + sha1Hex + `"}`},
		{"bad repo on other", GitHub, "ping", `{"repository":{"full_name":"../../x"}}`},
		// Commits.
		{"sha uppercase", GitHub, "pull_request", good(func(_, s, _, _ *string, _ *any) { *s = strings.ToUpper(sha1Hex) })},
		{"sha short", GitHub, "pull_request", good(func(_, s, _, _ *string, _ *any) { *s = sha1Hex[:39] })},
		{"sha long", GitHub, "pull_request", good(func(_, s, _, _ *string, _ *any) { *s = sha1Hex + "0" })},
		{"sha abbreviated", GitHub, "pull_request", good(func(_, s, _, _ *string, _ *any) { *s = sha1Hex[:7] })},
		{"sha not hex", GitHub, "pull_request", good(func(_, s, _, _ *string, _ *any) { *s = strings.Repeat("g", 40) })},
		{"sha option", GitHub, "pull_request", good(func(_, s, _, _ *string, _ *any) { *s = "--output=/tmp/x" + strings.Repeat("a", 25) })},
		{"sha on push", GitHub, "push", `{"after":"HEAD","repository":{"full_name":"a/b"}}`},
		// Default branches.
		{"branch option", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "-x" })},
		{"branch dotdot", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "a..b" })},
		{"branch lock", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "main.lock" })},
		{"branch space", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "my branch" })},
		{"branch control", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "main\x01" })},
		{"branch DEL", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "main\x7f" })},
		{"branch bidi override", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "main\u202e" })},
		{"branch reflog", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "main@{1}" })},
		{"branch colon", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "a:b" })},
		{"branch hidden component", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "a/.b" })},
		{"branch trailing slash", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = "a/" })},
		{"branch too long", GitHub, "pull_request", good(func(_, _, b, _ *string, _ *any) { *b = strings.Repeat("a", 256) })},
		// Actions and numbers.
		{"action with space", GitHub, "pull_request", good(func(_, _, _, a *string, _ *any) { *a = "opened now" })},
		{"action too long", GitHub, "pull_request", good(func(_, _, _, a *string, _ *any) { *a = strings.Repeat("a", 65) })},
		{"number negative", GitHub, "pull_request", good(func(_, _, _, _ *string, n *any) { *n = -1 })},
		{"number zero", GitHub, "pull_request", good(func(_, _, _, _ *string, n *any) { *n = 0 })},
		{"number fraction", GitHub, "pull_request", good(func(_, _, _, _ *string, n *any) { *n = 1.5 })},
		{"number huge", GitHub, "pull_request", good(func(_, _, _, _ *string, n *any) { *n = "99999999999999999999999" })},
		{"number string", GitHub, "pull_request", good(func(_, _, _, _ *string, n *any) { *n = `"1"` })},
		{"number past int32", GitHub, "pull_request", good(func(_, _, _, _ *string, n *any) { *n = int64(1) << 40 })},
		{"issue without number", GitHub, "issues", `{"issue":{"title":"x"},"repository":{"full_name":"a/b"}}`},
		// Shapes.
		{"invalid json", GitHub, "pull_request", `{"action":`},
		{"trailing data", GitHub, "push", `{"after":"` + sha1Hex + `","repository":{"full_name":"a/b"}} {}`},
		{"null", GitHub, "ping", `null`},
		{"array", GitHub, "ping", `[]`},
		{"string", GitHub, "ping", `"x"`},
		{"empty", GitHub, "ping", ``},
		{"deep nesting", GitHub, "ping", `{"a":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`},
		{"repository is a string", GitHub, "ping", `{"repository":"a/b"}`},
		{"action is a number", Gitea, "release", `{"action":1}`},
		{"gitlab object_kind mismatch", GitLab, "Merge Request Hook", `{"object_kind":"push","project":{"path_with_namespace":"g/p"},"object_attributes":{"iid":1}}`},
		{"gitlab object_kind missing", GitLab, "Push Hook", `{"project":{"path_with_namespace":"g/p"},"after":"` + sha1Hex + `"}`},
		{"gitlab 21 segments", GitLab, "Push Hook", `{"object_kind":"push","project":{"path_with_namespace":"` + strings.Repeat("g/", 20) + `p"}}`},
		{"gitlab traversal", GitLab, "Push Hook", `{"object_kind":"push","project":{"path_with_namespace":"g/../p"}}`},
		{"gitlab bad last_commit", GitLab, "Merge Request Hook", `{"object_kind":"merge_request","project":{"path_with_namespace":"g/p"},"object_attributes":{"iid":1,"last_commit":{"id":"nope"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(verified(tt.forge, tt.event), []byte(tt.body))
			if err == nil {
				t.Fatalf("Parse accepted %+v", e)
			}
			if !errors.Is(err, ErrPayload) {
				t.Errorf("Parse = %v, want ErrPayload", err)
			}
		})
	}
}

func TestParseGitLabGroups(t *testing.T) {
	path := strings.TrimSuffix(strings.Repeat("g/", 19), "/") + "/p" // 20 segments
	body := `{"object_kind":"push","project":{"path_with_namespace":"` + path + `"}}`
	e, err := Parse(verified(GitLab, "Push Hook"), []byte(body))
	if err != nil || e.Repo != path {
		t.Errorf("Parse = %+v, %v; want repo %q", e, err, path)
	}
}

// TestParseNeedsVerifiedDelivery checks that Parse refuses a Delivery that
// Verify did not make, however plausible its fields.
func TestParseNeedsVerifiedDelivery(t *testing.T) {
	body := []byte(hubPR("octo/repo", sha1Hex, "main", "opened", 1))
	for _, d := range []Delivery{
		{},
		{Forge: GitHub, Event: "pull_request", ReplayKey: "github:1:2"},
	} {
		if _, err := Parse(d, body); !errors.Is(err, ErrNotVerified) {
			t.Errorf("Parse(%+v) = %v, want ErrNotVerified", d, err)
		}
	}
	d := mustVerify(t, GitHub, githubHeaders(testSecrets.HMAC, "pull_request", "d-1", body), body)
	if _, err := Parse(d, body); err != nil {
		t.Errorf("Parse after Verify: %v", err)
	}
	bad := verified("bitbucket", "push")
	if _, err := Parse(bad, body); !errors.Is(err, ErrUnknownForge) {
		t.Errorf("Parse of unknown forge = %v, want ErrUnknownForge", err)
	}
}

func TestParseTruncatesText(t *testing.T) {
	// "é" is two bytes; an odd prefix makes the cut fall inside one.
	long := "x" + strings.Repeat("é", MaxText)
	body := fmt.Sprintf(`{"action":"opened","issue":{"number":1,"title":%q,"body":%q},"repository":{"full_name":"a/b"}}`, long, long)
	e, err := Parse(verified(GitHub, "issues"), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"title": e.Title, "body": e.Body} {
		if len(s) > MaxText || len(s) < MaxText-utf8.UTFMax || !utf8.ValidString(s) || !strings.HasPrefix(long, s) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v; want a prefix of at most %d bytes", name, len(s), utf8.ValidString(s), MaxText)
		}
	}
}

func TestParseTooLarge(t *testing.T) {
	body := make([]byte, MaxPayload+1)
	if _, err := Parse(verified(GitHub, "push"), body); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse = %v, want ErrTooLarge", err)
	}
}

// TestParseErrorsQuoteNoInput checks that Parse errors do not carry body
// bytes, which the handler must never log.
func TestParseErrorsQuoteNoInput(t *testing.T) {
	const canary = "CANARY9q"
	for _, body := range []string{
		`{"action":"` + canary + ` ~"}`,
		`{"` + canary + `"`,
		canary,
		`{"repository":{"full_name":"` + canary + `/../x"}}`,
		`{"repository":"` + canary + `"}`,
		`{"after":"` + canary + `","repository":{"full_name":"a/b","default_branch":"-` + canary + `"}}`,
	} {
		for _, d := range []Delivery{verified(GitHub, "push"), verified(GitHub, "ping"), verified(GitLab, "Push Hook")} {
			_, err := Parse(d, []byte(body))
			if err == nil {
				t.Fatalf("Parse accepted %q", body)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q quotes the body", err)
			}
		}
	}
}
