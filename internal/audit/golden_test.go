package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The bytes and hashes in this file are frozen. Every audit log ever written
// verifies against them, so changing any of them is a breaking change: old
// logs would stop verifying. A new format needs a new version line and its
// own golden vectors beside these.

var goldenTime = time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC)

var goldenRecord = Record{
	Seq:  7,
	Time: goldenTime,
	Event: Event{
		Actor:       "user:owner",
		Action:      "server.create",
		Target:      "srv_1",
		Fingerprint: "sha256:0011",
		Detail:      map[string]string{"name": "files", "note": "quote \" back\\ tab\t nl\n é <b>&\x01"},
	},
	Prev: "sha256:aa",
}

const goldenEncoding = "zero-audit-record-v1\n" +
	"seq 7\n" +
	"time 22:2025-01-02T03:04:05.6Z\n" +
	"actor 10:user:owner\n" +
	"action 13:server.create\n" +
	"target 5:srv_1\n" +
	"fingerprint 11:sha256:0011\n" +
	"detail 2\n" +
	"4:name\n" +
	"5:files\n" +
	"4:note\n" +
	"31:quote \" back\\ tab\t nl\n é <b>&\x01\n" +
	"prev 9:sha256:aa\n"

const goldenHash = "sha256:6d3bb00d22988041b1eae929c1a6478fc837dc7f89d457398e8a5fe968f7a4d2"

const goldenLine = `{"seq":7,"time":"2025-01-02T03:04:05.6Z","actor":"user:owner","action":"server.create",` +
	`"target":"srv_1","fingerprint":"sha256:0011","detail":{"name":"files","note":"quote \" back\\ tab\t nl\n é <b>&\u0001"},` +
	`"prev":"sha256:aa","hash":"` + goldenHash + `"}` + "\n"

func TestRecordGolden(t *testing.T) {
	if diff := cmp.Diff(goldenEncoding, string(encodeRecord(goldenRecord))); diff != "" {
		t.Errorf("encoding (-want +got):\n%s", diff)
	}
	sum := sha256.Sum256([]byte(goldenEncoding))
	if want := "sha256:" + hex.EncodeToString(sum[:]); goldenHash != want {
		t.Errorf("golden hash %s is not the hash of the golden bytes (%s)", goldenHash, want)
	}
	if got := hashRecord(goldenRecord); got != goldenHash {
		t.Errorf("hash = %s, want %s", got, goldenHash)
	}
	r := goldenRecord
	r.Hash = goldenHash
	if diff := cmp.Diff(goldenLine, string(appendLine(nil, r))); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
	got, err := decodeLine([]byte(goldenLine[:len(goldenLine)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
}

// TestLogFileGolden writes a two-record log with a fixed clock and a
// checkpoint every two records, and compares its three files byte for
// byte.
func TestLogFileGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := open(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	l.now = func() time.Time { return goldenTime.In(time.FixedZone("X", 3600)) }
	if _, err := l.Append(Event{Actor: "user:owner", Action: "server.create", Target: "srv_1", Fingerprint: "sha256:0011"}); err != nil {
		t.Fatal(err)
	}
	l.now = func() time.Time { return goldenTime.Add(time.Second + 7) }
	if _, err := l.Append(Event{Actor: "token:abc", Action: "server.enable", Target: "srv_1", Detail: map[string]string{"b": "2", "a": "1"}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	const (
		hash1 = "sha256:202c3267c53f7d3263e5b128c7c3db4d6d5870b7f6e977921a33ed4498dcb8ce"
		hash2 = "sha256:c407be2f2f439cfb4c8e5cf2b83e26f0617782f7ef04a21e735d477a025c9711"
	)
	wantLog := `{"seq":1,"time":"2025-01-02T03:04:05.6Z","actor":"user:owner","action":"server.create","target":"srv_1","fingerprint":"sha256:0011","detail":{},"prev":"","hash":"` + hash1 + `"}` + "\n" +
		`{"seq":2,"time":"2025-01-02T03:04:06.600000007Z","actor":"token:abc","action":"server.enable","target":"srv_1","fingerprint":"","detail":{"a":"1","b":"2"},"prev":"` + hash1 + `","hash":"` + hash2 + `"}` + "\n"
	wantHead := `{"seq":2,"hash":"` + hash2 + `"}` + "\n"
	wantCheckpoint := `{"seq":2,"offset":236,"hash":"` + hash2 + `"}` + "\n" // record 2 starts at byte 236
	gotLog, _ := os.ReadFile(path)
	gotHead, _ := os.ReadFile(path + ".head")
	gotCheckpoint, _ := os.ReadFile(path + ".checkpoint")
	if diff := cmp.Diff(wantLog, string(gotLog)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantHead, string(gotHead)); diff != "" {
		t.Errorf("head (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCheckpoint, string(gotCheckpoint)); diff != "" {
		t.Errorf("checkpoint (-want +got):\n%s", diff)
	}
	if n, err := Verify(path); n != 2 || err != nil {
		t.Errorf("Verify = %d, %v", n, err)
	}
}

// TestCheckpointFileGolden: the checkpoint file's one line, read back, and
// lines that are not exactly it refused.
func TestCheckpointFileGolden(t *testing.T) {
	const golden = `{"seq":1000,"offset":254321,"hash":"sha256:6d3bb00d22988041b1eae929c1a6478fc837dc7f89d457398e8a5fe968f7a4d2"}` + "\n"
	cp := checkpoint{seq: 1000, offset: 254321, hash: goldenHash}
	if diff := cmp.Diff(golden, string(appendCheckpoint(nil, cp))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for _, c := range []struct {
		name, file string
		ok         bool
	}{
		{"golden", golden, true},
		{"no newline", strings.TrimSuffix(golden, "\n"), false},
		{"a space", strings.Replace(golden, `,"offset"`, `, "offset"`, 1), false},
		{"members reordered", `{"offset":254321,"seq":1000,"hash":"` + goldenHash + `"}` + "\n", false},
		{"an unknown member", strings.Replace(golden, `{"seq"`, `{"x":1,"seq"`, 1), false},
		{"a leading zero", strings.Replace(golden, `"offset":254321`, `"offset":0254321`, 1), false},
		{"no record", `{"seq":0,"offset":0,"hash":""}` + "\n", false},
		{"a negative byte", `{"seq":1,"offset":-1,"hash":""}` + "\n", false},
		{"empty", "", false},
	} {
		os.WriteFile(path+".checkpoint", []byte(c.file), 0o600)
		got, err := readCheckpoint(path)
		if c.ok && (err != nil || got != cp) {
			t.Errorf("%s: %+v, %v", c.name, got, err)
		}
		var ve *VerifyError
		if !c.ok && (!errors.As(err, &ve) || ve.File != "checkpoint" || !errors.Is(err, ErrModified)) {
			t.Errorf("%s: %+v, %v; want the checkpoint file modified", c.name, got, err)
		}
	}
}
