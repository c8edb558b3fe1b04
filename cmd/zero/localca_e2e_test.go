package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"image"
	"image/png"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ownCA makes a CA and a certificate it signs for 127.0.0.1: a TLS server
// with it is trusted through that CA alone.
func ownCA(t *testing.T) (tls.Certificate, *x509.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zero test local CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}, ca
}

// TestLocalCAIcon: zero serve --local-ca trusts the CA for the allowed local
// origins' icons as for their servers. An HTTP server at one allowed origin
// declares its icon at another, whose certificate only its own CA signs.
// With that CA in the --local-ca file, the server's Test keeps the icon as
// its logo; with the server's certificate alone, the Test passes and the
// icon is not fetched.
func TestLocalCAIcon(t *testing.T) {
	var icon bytes.Buffer
	png.Encode(&icon, image.NewRGBA(image.Rect(0, 0, 16, 16)))
	var fetched atomic.Int32
	icons := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "image/png")
		w.Write(icon.Bytes())
	}))
	cert, iconCA := ownCA(t)
	icons.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	icons.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	icons.StartTLS()
	t.Cleanup(icons.Close)

	server := mcp.NewServer(&mcp.Implementation{Name: "iconic", Version: "0", Icons: []mcp.Icon{{Source: icons.URL + "/logo.png"}}}, nil)
	server.AddTool(&mcp.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	remote := httptest.NewTLSServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(remote.Close)

	caFile := func(name string, certs ...*x509.Certificate) string {
		var b bytes.Buffer
		for _, c := range certs {
			pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name string
		ca   string
		logo bool
	}{
		{"with the icon's CA", caFile("both.pem", remote.Certificate(), iconCA), true},
		{"with the server's alone", caFile("server.pem", remote.Certificate()), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fetched.Store(0)
			p := startServe(t, []string{"ZERO_ALLOWED_LOCAL_ORIGINS=" + remote.URL + "," + icons.URL}, "--local-ca", tc.ca)
			browser, headers := owner(t, p, p.link)
			s := wsAdd(t, p, browser, headers, map[string]any{"name": "iconic", "kind": "http", "url": remote.URL + "/mcp"}, nil)
			if got := strings.HasPrefix(s.Logo, "data:image/png;base64,"); got != tc.logo || (fetched.Load() > 0) != tc.logo {
				t.Errorf("logo %.40q after %d requests for the icon; want a logo: %v", s.Logo, fetched.Load(), tc.logo)
			}
			stopServe(t, p)
		})
	}
}
