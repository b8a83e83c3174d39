package loadgen

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/api/client"
)

// Deployment is how loadtest reaches another deployment; the zero value is the bundled one.
type Deployment struct {
	// Header is added to every request lacking it; "Host" sets the host.
	Header http.Header
	// TLS configures HTTPS connections; nil: Go's defaults. TLSFiles.Config builds one.
	TLS *tls.Config
	// Product, when not 0, is the product run buys instead of creating one (see product).
	Product int64
	// Tokens, if set, gives the bearer token of each buyer's requests.
	Tokens *Tokens
}

// TLSFiles are -tls-ca, -tls-cert, -tls-key and -tls-server-name.
type TLSFiles struct {
	CA, Cert, Key, ServerName string
}

// Config returns f's TLS configuration, nil when f is empty; the CA replaces the system's roots.
func (f TLSFiles) Config() (*tls.Config, error) {
	if f == (TLSFiles{}) {
		return nil, nil
	}
	c := &tls.Config{ServerName: f.ServerName, MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("-tls-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-tls-ca %s: no PEM certificate in it", f.CA)
		}
	}
	switch {
	case (f.Cert == "") != (f.Key == ""):
		return nil, errors.New("-tls-cert and -tls-key: a client certificate needs both, or neither")
	case f.Cert != "":
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("-tls-cert %s, -tls-key %s: %w", f.Cert, f.Key, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// ParseHeader reads "Name: value"; its errors never repeat the value.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		return "", "", errors.New("want 'Name: value', and found no colon")
	case !isToken(name):
		return "", "", errors.New("the name before the colon is not a header name (letters, digits and !#$%&'*+-.^_`|~)")
	case !isFieldValue(value):
		return "", "", fmt.Errorf("the value of %s holds a control character", name)
	}
	if slices.Contains([]string{"Content-Length", "Transfer-Encoding", "Connection"}, http.CanonicalHeaderKey(name)) {
		return "", "", fmt.Errorf("%s is written by the HTTP client itself", http.CanonicalHeaderKey(name))
	}
	return http.CanonicalHeaderKey(name), value, nil
}

// isToken reports whether s is an HTTP token (RFC 9110, 5.6.2), as a header's name must be.
func isToken(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return s != ""
}

// isFieldValue reports whether s may be a header's value: no control character but tab.
func isFieldValue(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}

// HTTPClient returns a client with d's headers and TLS, keeping up to conns idle connections
// per host; wrap, if not nil, wraps its transport.
func (d Deployment) HTTPClient(conns int, timeout time.Duration, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	var rt http.RoundTripper = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     d.TLS.Clone(),
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
	}
	if wrap != nil {
		rt = wrap(rt)
	}
	if len(d.Header) > 0 {
		rt = headerTransport{header: d.Header, next: rt}
	}
	return &http.Client{Timeout: timeout, Transport: rt}
}

// apiClient returns the typed client of the API at base, sending through d's HTTP client
// with the admin token on the admin routes.
func (d Deployment) apiClient(base, adminToken string) *client.Client {
	opts := &client.Options{AdminToken: adminToken, HTTPClient: d.HTTPClient(0, client.DefaultTimeout, nil)}
	if d.Tokens != nil {
		opts.BuyerToken = d.Tokens.Token
	}
	return client.New(base, opts)
}

// attackClient is the client of an attack's purchases, with conns idle connections per host
// as vegeta's attacker would keep; history, when not nil, records each request's buyer
// (-check). It replaces the attacker's own client: vegeta lets a caller wrap nothing.
func (d Deployment) attackClient(conns int, timeout time.Duration, history *purchaseLog) *http.Client {
	var wrap func(http.RoundTripper) http.RoundTripper
	if history != nil {
		wrap = func(next http.RoundTripper) http.RoundTripper { return recordingTransport{log: history, next: next} }
	}
	return d.HTTPClient(conns, timeout, wrap)
}

// headerTransport adds header to each request that does not carry the name already.
type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not change its request
	for name, values := range t.header {
		switch {
		case name == "Host":
			req.Host = values[0]
		case len(req.Header.Values(name)) == 0:
			req.Header[name] = values
		}
	}
	return t.next.RoundTrip(req)
}

// handshakeFailed reports whether err is a TLS handshake that failed for good: the
// server's certificate not verified, or the server refusing ours (an alert such as
// "certificate required").
func handshakeFailed(err error) bool {
	var verify *tls.CertificateVerificationError
	var op *net.OpError // crypto/tls reports the peer's alert as a "remote error"
	return errors.As(err, &verify) || errors.As(err, &op) && op.Op == "remote error"
}

// describe says, in one line for the report, what d changes; empty for the zero value.
func (d Deployment) describe() string {
	var parts []string
	if len(d.Header) > 0 {
		names := make([]string, 0, len(d.Header))
		for n := range d.Header {
			names = append(names, n)
		}
		slices.Sort(names)
		parts = append(parts, "headers "+strings.Join(names, ", ")+" (values not shown)")
	}
	if c := d.TLS; c != nil {
		tlsDesc := "client TLS:"
		if c.RootCAs != nil {
			tlsDesc += " own CA"
		} else {
			tlsDesc += " system roots"
		}
		if len(c.Certificates) > 0 {
			tlsDesc += ", client certificate"
		}
		if c.ServerName != "" {
			tlsDesc += ", server name " + c.ServerName
		}
		parts = append(parts, tlsDesc)
	}
	return strings.Join(parts, "; ")
}
