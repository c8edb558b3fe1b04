package localhttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr        string
		allowRemote bool
		wantErr     error // nil: accepted; errAny: any error
		loopback    bool
	}{
		{"127.0.0.1:8080", false, nil, true},
		{"127.0.0.2:0", false, nil, true},
		{"[::1]:8080", false, nil, true},
		{"localhost:8080", false, nil, true},
		{"0.0.0.0:8080", false, ErrRemote, false},
		{":8080", false, ErrRemote, false},
		{"192.168.1.10:8080", false, ErrRemote, false},
		{"example.com:8080", false, ErrRemote, false},
		{"[::]:8080", false, ErrRemote, false},
		{"0.0.0.0:8080", true, nil, false},
		{"127.0.0.1", false, errAny, false},
		{"127.0.0.1:http", false, errAny, false},
		{"127.0.0.1:70000", false, errAny, false},
	}
	for _, tt := range tests {
		l, err := CheckAddr(tt.addr, tt.allowRemote)
		switch {
		case tt.wantErr == nil && err != nil:
			t.Errorf("CheckAddr(%q, %v): %v", tt.addr, tt.allowRemote, err)
		case tt.wantErr == errAny && err == nil, tt.wantErr == ErrRemote && !errors.Is(err, ErrRemote):
			t.Errorf("CheckAddr(%q, %v) error = %v, want %v", tt.addr, tt.allowRemote, err, tt.wantErr)
		case err == nil && l.Loopback != tt.loopback:
			t.Errorf("CheckAddr(%q).Loopback = %v", tt.addr, l.Loopback)
		}
	}
}

var errAny = errors.New("any error")

func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	loop, _ := CheckAddr("127.0.0.1:7000", false)
	remote, _ := CheckAddr("10.0.0.5:7000", true)
	tests := []struct {
		name   string
		listen Listen
		host   string
		origin string
		want   int
	}{
		{"loopback host", loop, "127.0.0.1:7000", "", 204},
		{"localhost host", loop, "localhost:7000", "", 204},
		{"ipv6 host", loop, "[::1]:7000", "", 204},
		{"rebinding host", loop, "evil.example:7000", "", 403},
		{"private ip host", loop, "192.168.0.2:7000", "", 403},
		{"local origin", loop, "127.0.0.1:7000", "http://localhost:3000", 204},
		{"same origin", loop, "127.0.0.1:7000", "http://127.0.0.1:7000", 204},
		{"foreign origin", loop, "127.0.0.1:7000", "https://evil.example", 403},
		{"null origin", loop, "127.0.0.1:7000", "null", 403},
		{"file origin", loop, "127.0.0.1:7000", "file://", 403},
		{"origin with path", loop, "127.0.0.1:7000", "http://localhost/x", 403},
		{"remote listen host", remote, "10.0.0.5:7000", "", 204},
		{"remote other host", remote, "evil.example:7000", "", 403},
		{"remote same origin", remote, "10.0.0.5:7000", "http://10.0.0.5:7000", 204},
		{"remote foreign origin", remote, "10.0.0.5:7000", "http://evil.example", 403},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("POST", "http://x/mcp", nil)
		req.Host = tt.host
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		rec := httptest.NewRecorder()
		Guard(tt.listen, ok).ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, rec.Code, tt.want)
		}
	}
}
