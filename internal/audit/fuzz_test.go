package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzVerify feeds Verify arbitrary log, head and checkpoint files (an
// empty checkpoint: none). It must never panic, and a log it accepts must be
// exactly the records ReadAll returns, written back, and the incomplete last
// line it reports, if any. What it accepts, a start, reading from the
// checkpoint, accepts too, finding the same end of the log.
func FuzzVerify(f *testing.F) {
	r := goldenRecord
	r.Seq, r.Prev = 1, ""
	r.Hash = hashRecord(r)
	r2 := Record{Seq: 2, Time: goldenTime, Event: Event{Action: "tool.call"}, Prev: r.Hash}
	r2.Hash = hashRecord(r2)
	two := appendLine(appendLine(nil, r), r2)
	f.Add(appendLine(nil, r), appendHead(nil, 1, r.Hash), []byte(nil))
	f.Add(appendLine(nil, r), appendHead(nil, 0, ""), []byte(nil))
	f.Add(append(appendLine(nil, r), `{"seq":2,`...), appendHead(nil, 1, r.Hash), []byte(nil))
	f.Add([]byte(goldenLine), []byte(`{"seq":7,"hash":"x"}`+"\n"), []byte(nil))
	f.Add([]byte("{}\n"), []byte(nil), []byte(nil))
	f.Add(two, appendHead(nil, 2, r2.Hash), appendCheckpoint(nil, checkpoint{1, 0, r.Hash}))
	f.Add(two, appendHead(nil, 2, r2.Hash), appendCheckpoint(nil, checkpoint{2, int64(len(two)) - int64(len(appendLine(nil, r2))), r2.Hash}))
	f.Add(two, appendHead(nil, 1, r.Hash), appendCheckpoint(nil, checkpoint{2, 5, r2.Hash}))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, log, head, cp []byte) {
		path := filepath.Join(dir, "audit.jsonl")
		if err := os.WriteFile(path, log, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".head", head, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(path + ".checkpoint")
		if len(cp) > 0 {
			if err := os.WriteFile(path+".checkpoint", cp, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		full, ferr := verify(path, false, nil)
		start, serr := verify(path, true, nil)
		if ferr == nil && (serr != nil || start.lastSeq != full.lastSeq || start.lastHash != full.lastHash ||
			start.size != full.size || start.torn != full.torn || start.headSeq != full.headSeq) {
			t.Fatalf("the whole log verifies (%+v), but not from its checkpoint: %+v, %v", full, start, serr)
		}
		rep, err := Inspect(path)
		recs, rerr := ReadAll(path)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("Inspect: %v; ReadAll: %v", err, rerr)
		}
		if err != nil {
			return
		}
		var back []byte
		for _, r := range recs {
			back = appendLine(back, r)
		}
		tail := log[min(len(back), len(log)):]
		if rep.Records != len(recs) || !bytes.HasPrefix(log, back) || len(tail) != rep.Torn || bytes.IndexByte(tail, '\n') >= 0 {
			t.Fatalf("accepted log is not its records written back: %q (%+v)", log, rep)
		}
		if rep.Beyond > rep.Records || rep.Head+uint64(rep.Beyond) != uint64(rep.Records) {
			t.Fatalf("report %+v does not add up", rep)
		}
	})
}
