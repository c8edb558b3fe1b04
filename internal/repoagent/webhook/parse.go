package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zero-dev/zero/internal/gitref"
	"math"
	"strings"
	"unicode/utf8"
)

// Kind is the normalized kind of an event.
type Kind string

// The kinds of event. Every event a forge sends that is not one of the first
// four is KindOther.
const (
	KindPullRequest  Kind = "pull_request" // a GitHub or Gitea pull request, a GitLab merge request
	KindPush         Kind = "push"
	KindIssue        Kind = "issue"
	KindIssueComment Kind = "issue_comment" // a comment on an issue or pull request; a GitLab note
	KindOther        Kind = "other"
)

// An Event is the normalized, untrusted content of a verified delivery.
// Repo, Number, HeadSHA, DefaultBranch and Action are validated; Title and
// Body are untrusted text, only truncated, to be treated as data and never
// as instructions.
type Event struct {
	Forge  Forge
	Kind   Kind
	Action string // e.g. "opened", "synchronize", "open"; "" if none

	// Repo is "owner/name", or for GitLab "group/.../name" with up to
	// MaxRepoSegments segments. Each segment is [A-Za-z0-9._-]+ and neither
	// "." nor "..". It is "" only for KindOther events without a repository.
	Repo string
	// Number is the pull request, merge request or issue number, 0 if none.
	Number int
	// HeadSHA is 40 or 64 lowercase hex digits, or "".
	HeadSHA string
	// DefaultBranch is a valid git branch name, or "" if absent.
	DefaultBranch string

	Title, Body string // untrusted, at most MaxText bytes each
}

// Limits on what Parse accepts.
const (
	MaxPayload      = 25 << 20 // bytes of body; GitHub's own cap on payloads
	MaxText         = 64 << 10 // bytes kept of Title and of Body
	MaxRepoSegments = 20       // segments of a GitLab project path
	maxSegment      = 255
	maxRepo         = 1024
	maxAction       = 64
)

// Parse turns the body of a verified delivery into an Event. It refuses a
// Delivery that [Verify] did not produce (ErrNotVerified), a body that is
// not one JSON object, fields of the wrong type, and field values that fail
// validation (ErrPayload). Unknown fields are ignored. Its errors never quote
// the body.
func Parse(d Delivery, body []byte) (Event, error) {
	if !d.verified {
		return Event{}, ErrNotVerified
	}
	if len(body) > MaxPayload {
		return Event{}, ErrTooLarge
	}
	var (
		e   Event
		err error
	)
	switch d.Forge {
	case GitHub, Gitea:
		e, err = parseHubStyle(d.Event, body)
	case GitLab:
		e, err = parseGitLab(d.Event, body)
	default:
		return Event{}, ErrUnknownForge
	}
	if err != nil {
		return Event{}, fmt.Errorf("parse %s %s: %w", d.Forge, e.Kind, err)
	}
	e.Forge = d.Forge
	e.Title = truncate(e.Title, MaxText)
	e.Body = truncate(e.Body, MaxText)
	if err := e.validate(); err != nil {
		return Event{}, fmt.Errorf("parse %s %s: %w", d.Forge, e.Kind, err)
	}
	return e, nil
}

// The shapes read from GitHub and Gitea payloads, which agree on the fields
// used here.
type (
	hubRepo struct {
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	}
	hubCommon struct {
		Action     string   `json:"action"`
		Repository *hubRepo `json:"repository"`
	}
	hubPullRequest struct {
		hubCommon
		PullRequest *struct {
			Number int    `json:"number"`
			Title  string `json:"title"`
			Body   string `json:"body"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	hubPush struct {
		hubCommon
		After string `json:"after"`
	}
	hubIssue struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
		Body   string `json:"body"`
	}
	hubIssues struct {
		hubCommon
		Issue *hubIssue `json:"issue"`
	}
	hubIssueComment struct {
		hubCommon
		Issue   *hubIssue `json:"issue"`
		Comment *struct {
			Body string `json:"body"`
		} `json:"comment"`
	}
)

func (c hubCommon) fill(e *Event) {
	e.Action = c.Action
	if c.Repository != nil {
		e.Repo = c.Repository.FullName
		e.DefaultBranch = c.Repository.DefaultBranch
	}
}

// parseHubStyle reads GitHub and Gitea/Forgejo payloads, whose event names
// and shapes match for the kinds used here.
func parseHubStyle(event string, body []byte) (Event, error) {
	var e Event
	switch event {
	case "pull_request":
		e.Kind = KindPullRequest
		var p hubPullRequest
		if err := decode(body, &p); err != nil {
			return e, err
		}
		p.fill(&e)
		if pr := p.PullRequest; pr != nil {
			e.Number, e.HeadSHA, e.Title, e.Body = pr.Number, pr.Head.SHA, pr.Title, pr.Body
		}
	case "push":
		e.Kind = KindPush
		var p hubPush
		if err := decode(body, &p); err != nil {
			return e, err
		}
		p.fill(&e)
		e.HeadSHA = p.After
	case "issues":
		e.Kind = KindIssue
		var p hubIssues
		if err := decode(body, &p); err != nil {
			return e, err
		}
		p.fill(&e)
		if is := p.Issue; is != nil {
			e.Number, e.Title, e.Body = is.Number, is.Title, is.Body
		}
	case "issue_comment":
		e.Kind = KindIssueComment
		var p hubIssueComment
		if err := decode(body, &p); err != nil {
			return e, err
		}
		p.fill(&e)
		if is := p.Issue; is != nil {
			e.Number, e.Title = is.Number, is.Title
		}
		if p.Comment != nil {
			e.Body = p.Comment.Body
		}
	default:
		e.Kind = KindOther
		var p hubCommon
		if err := decode(body, &p); err != nil {
			return e, err
		}
		p.fill(&e)
	}
	return e, nil
}

// The shapes read from GitLab payloads.
type (
	labProject struct {
		PathWithNamespace string `json:"path_with_namespace"`
		DefaultBranch     string `json:"default_branch"`
	}
	labCommon struct {
		ObjectKind string      `json:"object_kind"`
		Project    *labProject `json:"project"`
	}
	labMergeRequest struct {
		labCommon
		ObjectAttributes *struct {
			IID         int    `json:"iid"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Action      string `json:"action"`
			LastCommit  *struct {
				ID string `json:"id"`
			} `json:"last_commit"`
		} `json:"object_attributes"`
	}
	labPush struct {
		labCommon
		CheckoutSHA string `json:"checkout_sha"`
		After       string `json:"after"`
	}
	labIssue struct {
		labCommon
		ObjectAttributes *struct {
			IID         int    `json:"iid"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Action      string `json:"action"`
		} `json:"object_attributes"`
	}
	labNoteTarget struct {
		IID   int    `json:"iid"`
		Title string `json:"title"`
	}
	labNote struct {
		labCommon
		ObjectAttributes *struct {
			Note   string `json:"note"`
			Action string `json:"action"`
		} `json:"object_attributes"`
		MergeRequest *labNoteTarget `json:"merge_request"`
		Issue        *labNoteTarget `json:"issue"`
	}
)

func (c labCommon) fill(e *Event) {
	if c.Project != nil {
		e.Repo = c.Project.PathWithNamespace
		e.DefaultBranch = c.Project.DefaultBranch
	}
}

// kindIs checks the payload's own object_kind against the kind the event
// header named. For Standard Webhooks the body is signed and the header is
// not, so this keeps a header swap from recasting a payload.
func (c labCommon) kindIs(want string) error {
	if c.ObjectKind != want {
		return fmt.Errorf("%w: object_kind does not match the event header", ErrPayload)
	}
	return nil
}

func parseGitLab(event string, body []byte) (Event, error) {
	var e Event
	switch event {
	case "Merge Request Hook":
		e.Kind = KindPullRequest
		var p labMergeRequest
		if err := decode(body, &p); err != nil {
			return e, err
		}
		if err := p.kindIs("merge_request"); err != nil {
			return e, err
		}
		p.fill(&e)
		if a := p.ObjectAttributes; a != nil {
			e.Number, e.Title, e.Body, e.Action = a.IID, a.Title, a.Description, a.Action
			if a.LastCommit != nil {
				e.HeadSHA = a.LastCommit.ID
			}
		}
	case "Push Hook":
		e.Kind = KindPush
		var p labPush
		if err := decode(body, &p); err != nil {
			return e, err
		}
		if err := p.kindIs("push"); err != nil {
			return e, err
		}
		p.fill(&e)
		e.HeadSHA = p.CheckoutSHA // null when a branch is deleted
		if e.HeadSHA == "" {
			e.HeadSHA = p.After
		}
	case "Issue Hook":
		e.Kind = KindIssue
		var p labIssue
		if err := decode(body, &p); err != nil {
			return e, err
		}
		if err := p.kindIs("issue"); err != nil {
			return e, err
		}
		p.fill(&e)
		if a := p.ObjectAttributes; a != nil {
			e.Number, e.Title, e.Body, e.Action = a.IID, a.Title, a.Description, a.Action
		}
	case "Note Hook":
		e.Kind = KindIssueComment
		var p labNote
		if err := decode(body, &p); err != nil {
			return e, err
		}
		if err := p.kindIs("note"); err != nil {
			return e, err
		}
		p.fill(&e)
		if a := p.ObjectAttributes; a != nil {
			e.Body, e.Action = a.Note, a.Action
		}
		// A note on a commit or snippet has neither and keeps Number 0.
		switch {
		case p.MergeRequest != nil:
			e.Number, e.Title = p.MergeRequest.IID, p.MergeRequest.Title
		case p.Issue != nil:
			e.Number, e.Title = p.Issue.IID, p.Issue.Title
		}
	default:
		e.Kind = KindOther
		var p labCommon
		if err := decode(body, &p); err != nil {
			return e, err
		}
		p.fill(&e)
	}
	return e, nil
}

// decode unmarshals one JSON object into v. encoding/json checks the whole
// input first, refusing invalid JSON, trailing data and nesting deeper than
// its fixed limit of 10000 before anything is stored. The error it returns
// here holds an offset or a field name of ours, never input.
func decode(body []byte, v any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", ErrPayload)
	}
	err := json.Unmarshal(body, v)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntax):
		return fmt.Errorf("%w: malformed JSON near byte %d", ErrPayload, syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("%w: field %s has the wrong type", ErrPayload, typ.Field)
	}
	return fmt.Errorf("%w: malformed JSON", ErrPayload)
}

// validate checks the fields code acts on.
func (e Event) validate() error {
	known := e.Kind != KindOther
	switch {
	case (known || e.Repo != "") && !validRepo(e.Repo, e.Forge):
		return fmt.Errorf("%w: repository name", ErrPayload)
	case e.Number < 0 || e.Number > math.MaxInt32:
		return fmt.Errorf("%w: number out of range", ErrPayload)
	case (e.Kind == KindPullRequest || e.Kind == KindIssue) && e.Number == 0:
		return fmt.Errorf("%w: missing number", ErrPayload)
	case e.HeadSHA != "" && !gitref.ValidSHA(e.HeadSHA):
		return fmt.Errorf("%w: head commit", ErrPayload)
	case e.DefaultBranch != "" && !gitref.ValidBranch(e.DefaultBranch):
		return fmt.Errorf("%w: default branch", ErrPayload)
	case !validAction(e.Action):
		return fmt.Errorf("%w: action", ErrPayload)
	case len(e.Title) > MaxText || len(e.Body) > MaxText:
		return fmt.Errorf("%w: text too long", ErrPayload) // cannot happen after truncate
	}
	return nil
}

// validRepo reports whether repo is "owner/name" (GitLab: 2 to
// MaxRepoSegments segments), each segment [A-Za-z0-9._-]+ other than "."
// and "..".
func validRepo(repo string, f Forge) bool {
	if repo == "" || len(repo) > maxRepo {
		return false
	}
	segs := strings.Split(repo, "/")
	max := 2
	if f == GitLab {
		max = MaxRepoSegments
	}
	if len(segs) < 2 || len(segs) > max {
		return false
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || len(s) > maxSegment {
			return false
		}
		for i := 0; i < len(s); i++ {
			if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
				return false
			}
		}
	}
	return true
}

// validAction reports whether s is "" or a short [A-Za-z0-9._-]+ word.
func validAction(s string) bool {
	if len(s) > maxAction {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
