package model

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

// ErrUnreachable reports a request to the endpoint that got no HTTP answer
// at all: nothing listens there, the name does not resolve, the TLS
// handshake failed, or no answer came in time.
var ErrUnreachable = errors.New("the endpoint did not answer")

// unreachableError is a transport failure, said in words for a person; it
// still matches what caused it with errors.Is (a cancelled context, a
// refused address).
type unreachableError struct {
	base, why string
	err       error
}

func (e *unreachableError) Error() string {
	return ErrUnreachable.Error() + ": " + e.base + ": " + e.why
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.err} }

// noAnswer wraps err, a failed request to base, as [ErrUnreachable] with
// the reason in words, unless the request was refused before any I/O (a
// URL or an address the policy refuses, too many redirects) or its context
// ended: those say so themselves.
func noAnswer(base string, err error) error {
	for _, own := range []error{netguard.ErrURL, netguard.ErrBlocked, netguard.ErrRedirects, netguard.ErrBodyTooLarge, context.Canceled} {
		if errors.Is(err, own) {
			return err
		}
	}
	return &unreachableError{base: base, why: whyNoAnswer(err), err: err}
}

// whyNoAnswer says why a request got no answer, in a few words.
func whyNoAnswer(err error) string {
	var (
		dns   *net.DNSError
		cert  *tls.CertificateVerificationError
		auth  x509.UnknownAuthorityError
		host  x509.HostnameError
		alert tls.AlertError
		ne    net.Error
	)
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "its host name does not resolve: check the spelling"
	case errors.As(err, &dns):
		return "its host name could not be looked up: check the network"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing is listening there (connection refused): start the server, or check the port"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "its host cannot be reached from this machine"
	case errors.As(err, &auth):
		return "its TLS certificate is not signed by an authority this machine trusts"
	case errors.As(err, &host):
		return "its TLS certificate is for another host name"
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"): // net/http's words, not a type
		return "it speaks plain http, not https: use http://, which is allowed to this machine only"
	case errors.As(err, &cert), errors.As(err, &alert), errors.As(err, new(tls.RecordHeaderError)):
		return "the TLS handshake failed: is it an https server?"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		// EPIPE: closed before the request was all written.
		return "the connection was closed before an answer: is it an HTTP server, and is the scheme right?"
	}
	return "the connection failed"
}

// Ping asks the endpoint for its model list (as [Client.Models] does) without
// the API key, through the client's HTTP policy, and reports whether
// anything answered: any HTTP status is an answer, since the endpoint may
// want the key. An error wraps [ErrUnreachable], with the reason in words,
// or says why the request was not sent.
func (c *Client) Ping(ctx context.Context) (err error) {
	defer func() { err = c.redactor.scrub(err) }()
	if c.cfgErr != nil {
		return c.cfgErr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+c.wire.modelsPath(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	c.wire.header(req.Header, "")
	res, err := c.http.Do(req)
	if err != nil {
		return noAnswer(c.base, err)
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, maxErrorBody))
	return res.Body.Close()
}
