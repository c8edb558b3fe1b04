package servers

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

// TestLocalCAOnlyForLocalOrigins: the local CA is trusted for the allowed
// local origins and for no other server.
func TestLocalCAOnlyForLocalOrigins(t *testing.T) {
	pool := x509.NewCertPool()
	m := &Manager{o: Options{LocalCA: pool, Policy: Policy{LocalOrigins: []string{"https://127.0.0.1:8443"}}}}
	if got := m.tlsFor("https://127.0.0.1:8443/mcp"); got == nil || got.RootCAs != pool {
		t.Errorf("an allowed local origin: %+v", got)
	}
	for _, u := range []string{"https://mcp.example.com/mcp", "https://127.0.0.1:9443/mcp", "https://127.0.0.2:8443/mcp"} {
		if got := m.tlsFor(u); got != nil {
			t.Errorf("%s gets the local CA", u)
		}
	}
}

// loopback resolves every name to 127.0.0.1.
type loopback struct{}

func (loopback) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestIconsReachedAsServers: icons are fetched as servers are reached. An
// icon at an allowed local origin whose certificate only the local CA
// signs is fetched; the same icon under a name that resolves to that
// address is another origin, and is refused at the private address.
func TestIconsReachedAsServers(t *testing.T) {
	var icon bytes.Buffer
	png.Encode(&icon, image.NewRGBA(image.Rect(0, 0, 16, 16)))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(icon.Bytes()) }))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	m := NewManager(Options{LocalCA: pool, Policy: Policy{LocalOrigins: []string{srv.URL}}, Resolver: loopback{}})
	if data, err := m.icons.Fetch(t.Context(), srv.URL+"/logo.png"); err != nil || !strings.HasPrefix(data, "data:image/png;base64,") {
		t.Errorf("the icon at the allowed local origin: %.40q, %v", data, err)
	}
	named := "https://icons.test:" + strings.TrimPrefix(srv.URL, "https://127.0.0.1:") + "/logo.png"
	if _, err := m.icons.Fetch(t.Context(), named); !errors.Is(err, netguard.ErrBlocked) {
		t.Errorf("the icon by a name resolving to the allowed address: %v, want %v", err, netguard.ErrBlocked)
	}
}
