package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzVerify feeds Verify arbitrary log files. It must never panic, and a
// log it accepts must be exactly the records ReadAll returns, written back,
// and the incomplete last line it reports, if any.
func FuzzVerify(f *testing.F) {
	r := goldenRecord
	r.Seq, r.Prev = 1, ""
	r.Hash = hashRecord(r)
	f.Add(appendLine(nil, r), appendHead(nil, 1, r.Hash))
	f.Add(appendLine(nil, r), appendHead(nil, 0, ""))
	f.Add(append(appendLine(nil, r), `{"seq":2,`...), appendHead(nil, 1, r.Hash))
	f.Add([]byte(goldenLine), []byte(`{"seq":7,"hash":"x"}`+"\n"))
	f.Add([]byte("{}\n"), []byte(nil))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, log, head []byte) {
		path := filepath.Join(dir, "audit.jsonl")
		if err := os.WriteFile(path, log, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".head", head, 0o600); err != nil {
			t.Fatal(err)
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
