package workspace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/workspace/passkeys"
)

// ResetPasskeys removes every passkey of the workspace under home, every
// challenge pending and the setting that approvals need a passkey, and
// records passkey.reset in the audit log: the way back for an owner who
// lost their passkeys (zero login --reset-passkeys). Whoever can read home
// is its owner already. It holds home's serve lock while it works, so no
// zero serve runs on home meanwhile (one that does is an error: stop it
// first). It returns how many passkeys it removed.
func ResetPasskeys(ctx context.Context, home, databaseURL string) (int, error) {
	lock, err := lockServe(home)
	if err != nil {
		var re *RunningError
		if errors.As(err, &re) {
			return 0, fmt.Errorf("a zero serve runs on %s (pid %d): stop it, then run zero login --reset-passkeys again", home, re.PID)
		}
		return 0, err
	}
	defer lock.release()
	db, err := openStore(ctx, Options{Home: home, DatabaseURL: databaseURL})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var log *audit.Log
	if databaseURL != "" {
		log, err = audit.OpenInTable(ctx, db)
	} else {
		log, err = audit.Open(filepath.Join(home, auditFile))
	}
	if err != nil {
		return 0, fmt.Errorf("open the audit log: %w", err)
	}
	defer log.Close()
	pk, err := passkeys.New(passkeys.Options{DB: db, RPID: "localhost", RPName: "Zero", Origins: []string{"http://localhost"}})
	if err != nil {
		return 0, err
	}
	n, err := pk.Reset(ctx)
	if err != nil {
		return 0, fmt.Errorf("reset the passkeys: %w", err)
	}
	if _, err := log.Append(audit.Event{Actor: "shell", Action: "passkey.reset", Target: "passkeys",
		Detail: map[string]string{"removed": strconv.Itoa(n)}}); err != nil {
		return n, fmt.Errorf("the passkeys are reset, but the audit log refused its record: %w", err)
	}
	return n, nil
}
