package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/workspace"
)

func serversCommand() *Command {
	return &Command{
		Name:      "servers",
		UsageLine: "servers list|preview|add [flags]",
		Short:     "list, preview and add the workspace's servers, with a token",
		Long: `Servers talks to a running zero serve with a bearer token, which the owner
creates on the Tokens page (http://127.0.0.1:7077/tokens) and saves in a
file only they can read, mode 0600 ($ZERO_HOME/cli-token unless
--token-file names another).

Add saves the server unapproved and disabled, and prints the link where the
owner approves it in the browser: approval is never done with a token.
Secret values are not taken here; the owner sets them in the browser
session, with the edit route (PUT /api/servers/{id}), which approves too.
`,
		Subcommands: []*Command{serversListCommand(), serversPreviewCommand(), serversAddCommand()},
	}
}

// apiFlags are the flags of every command that calls a running
// workspace: where it is, and the token's file.
type apiFlags struct {
	addr, tokenFile string
	defaultFile     string // the token's file in $ZERO_HOME without --token-file
	page            string // the workspace's page that makes such a token
	// formerFile is the file in $ZERO_HOME an older zero read this token
	// from, if it was another.
	formerFile string
}

// defineAPIFlags defines the flags of a zero servers subcommand, which
// reads the CLI's token.
func defineAPIFlags(fs *flag.FlagSet) *apiFlags {
	return defineTokenFlags(fs, &apiFlags{defaultFile: workspace.CLITokenFile, page: "the Tokens page, %s/tokens"})
}

func defineTokenFlags(fs *flag.FlagSet, a *apiFlags) *apiFlags {
	fs.StringVar(&a.addr, "addr", workspace.DefaultAddr, "the workspace's address `ADDR`, on loopback")
	fs.StringVar(&a.tokenFile, "token-file", "", "the `FILE` holding the bearer token, mode 0600 (default $ZERO_HOME/"+a.defaultFile+")")
	return a
}

// client checks the address and reads the token: the last step before
// anything is sent.
func (a *apiFlags) client() (*apiClient, error) {
	if _, err := localhttp.CheckAddr(a.addr, false); err != nil {
		return nil, usagef("--addr: %v", err)
	}
	c := &apiClient{
		base:      "http://" + a.addr,
		tokenFile: a.tokenFile,
		// The workspace is on loopback: no private-network block; a minute
		// bounds a whole exchange.
		http: netguard.NewClient(netguard.Options{Timeout: time.Minute, MaxBody: 16 << 20}),
	}
	page := fmt.Sprintf(a.page, c.base)
	if c.tokenFile == "" {
		home, err := zeroHome()
		if err != nil {
			return nil, usagef("%v", err)
		}
		c.tokenFile = filepath.Join(home, a.defaultFile)
		if err := a.moved(c.tokenFile, home, page); err != nil {
			return nil, usagef("%v", err)
		}
	}
	var err error
	if c.token, err = readToken(c.tokenFile, page); err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}

// moved says what to do when the default token file is missing but the
// file an older zero read in its place is there: it is another command's
// now, and is never read in its place, since it may hold a token for more
// servers.
func (a *apiFlags) moved(file, home, page string) error {
	if a.formerFile == "" {
		return nil
	}
	former := filepath.Join(home, a.formerFile)
	if _, err := os.Lstat(file); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Lstat(former); err != nil {
		return nil
	}
	return fmt.Errorf("no token file %s; %s is the CLI's token now, and is not read in its place: "+
		"if the token there was made for this client, move it (mv %s %s); else create a token on %s and save it with the command shown there",
		file, former, former, file, page)
}

// readToken reads a bearer token from a file only its owner may read;
// page names where such a token is made.
func readToken(path, page string) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no token file %s: create a token on %s, and save it there with mode 0600", path, page)
	}
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s may be read by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("token file %s is empty: create a token on %s, and save it there with mode 0600", path, page)
	}
	return token, nil
}

type apiClient struct {
	base, token, tokenFile string
	http                   *http.Client
}

// do calls the API. An error answer becomes an error naming the API's
// error.code and error.message; a refused token says how to get a new one.
func (a *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("is zero serve running? %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: the answer is not the JSON of a zero workspace: %w", method, path, err)
		}
		return nil
	}
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
		return fmt.Errorf("%s %s: %s, with no error code: is %s a zero workspace?", method, path, resp.Status, a.base)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("the token in %s was refused (revoked, or from another workspace): create a new one on the Tokens page, %s/tokens, and save it there with mode 0600", a.tokenFile, a.base)
	}
	return fmt.Errorf("%s %s: %d %s: %s", method, path, resp.StatusCode, e.Error.Code, e.Error.Message)
}

// sayScope writes to w that the token sees only some servers, if it is
// limited to them: what it lists is then a part of the workspace.
func (a *apiClient) sayScope(ctx context.Context, w io.Writer) error {
	var s struct {
		Scoped  bool    `json:"scoped"`
		Servers []int64 `json:"servers"`
	}
	if err := a.do(ctx, "GET", "/api/session", nil, &s); err != nil {
		return err
	}
	if !s.Scoped {
		return nil
	}
	n := fmt.Sprintf("%d servers", len(s.Servers))
	if len(s.Servers) == 1 {
		n = "1 server"
	}
	_, err := fmt.Fprintf(w, "The token in %s is limited to %s: only those are listed, and the workspace may have more. "+
		"A token for all servers, from %s/tokens, lists every one.\n", a.tokenFile, n, a.base)
	return err
}
