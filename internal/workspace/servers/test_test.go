package servers

import (
	"crypto/x509"
	"testing"
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
