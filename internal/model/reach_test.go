package model

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/testnet"
)

// TestPingAnswersWithoutTheKey: any HTTP answer, a 401 included, means the
// endpoint answered; Ping never sends the key.
func TestPingAnswersWithoutTheKey(t *testing.T) {
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.URL.Path + " " + r.Header.Get("Authorization"))
		http.Error(w, `{"error":{"message":"no key"}}`, http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	c := New(Config{BaseURL: srv.URL + "/v1", APIKey: testKey}, nil)
	if err := c.Ping(t.Context()); err != nil {
		t.Fatalf("Ping of an endpoint that answered 401: %v", err)
	}
	if got := auth.Load(); got != "/v1/models " {
		t.Errorf("Ping sent %q; want GET /v1/models without Authorization", got)
	}
}

// TestPingSaysWhyNoAnswer: a request that gets no HTTP answer is
// ErrUnreachable, with the reason in words a person can act on, never the
// transport's raw error; the same words come from Models.
func TestPingSaysWhyNoAnswer(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	closes := testnet.Listen(t)
	for _, tc := range []struct {
		name, base, want string
	}{
		{"nothing listens", "http://" + testnet.ClosedAddr(t) + "/v1", "nothing is listening there (connection refused)"},
		{"an untrusted certificate", tlsSrv.URL + "/v1", "its TLS certificate is not signed by an authority this machine trusts"},
		{"https to a plain server", "https://" + strings.TrimPrefix(plain.URL, "http://") + "/v1", "it speaks plain http, not https"},
		{"closed without an answer", "http://" + closes.Addr + "/v1", "the connection was closed before an answer"},
	} {
		c := New(Config{BaseURL: tc.base, APIKey: testKey}, nil)
		for call, err := range map[string]error{"Ping": c.Ping(t.Context()), "Models": func() error { _, err := c.Models(t.Context()); return err }()} {
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.base) ||
				strings.Contains(msg, "dial tcp") || strings.Contains(msg, "x509") {
				t.Errorf("%s, %s: %v; want ErrUnreachable naming %s and saying %q", tc.name, call, err, tc.base, tc.want)
			}
		}
	}
}

// TestClosedWhileWriting: a server that closes the connection before the
// request is all written (the write fails with EPIPE, or ECONNRESET) closed
// it before an answer, as one that closes it after: which the client sees
// depends on timing (TestPingSaysWhyNoAnswer's "closed without an answer").
func TestClosedWhileWriting(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EPIPE, syscall.ECONNRESET} {
		err := &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", errno)}
		if why := whyNoAnswer(err); !strings.Contains(why, "closed before an answer") {
			t.Errorf("%v: %q", errno, why)
		}
	}
}

// TestPingKeepsThePolicy: Ping goes through the client's netguard policy:
// a URL the policy refuses is refused before any I/O, as such, not as an
// endpoint that did not answer.
func TestPingKeepsThePolicy(t *testing.T) {
	l := testnet.Listen(t)
	hc := netguard.NewClient(netguard.Options{BlockPrivate: true})
	err := New(Config{BaseURL: "http://" + l.Addr + "/v1"}, hc).Ping(t.Context())
	if !errors.Is(err, netguard.ErrBlocked) || errors.Is(err, ErrUnreachable) {
		t.Errorf("Ping of a blocked address: %v", err)
	}
	if n := l.Accepted(); n != 0 {
		t.Errorf("%d connections reached the blocked address", n)
	}
}
