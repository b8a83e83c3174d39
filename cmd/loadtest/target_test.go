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
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen/fakeapi"
)

// authority is a certificate authority made for one test: it issues certificates whose
// PEM files it writes to dir.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	pem  string // the path of its own certificate
}

func newAuthority(t *testing.T, dir, name string) *authority {
	t.Helper()
	a := &authority{dir: dir}
	a.cert, a.key, a.pem = a.issue(t, name, nil, true)
	return a
}

// issue makes a certificate for cn (and dnsNames), signed by a (self-signed when a has no
// certificate yet, or when ca), writes it and its key as PEM, and returns it with its path.
func (a *authority) issue(t *testing.T, cn string, dnsNames []string, ca bool) (*x509.Certificate, *ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: ca, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	parent, signer := tmpl, key
	if a.cert != nil {
		parent, signer = a.cert, a.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(a.dir, cn+".pem")
	write := func(p, typ string, b []byte) {
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(path, "CERTIFICATE", der)
	write(filepath.Join(a.dir, cn+"-key.pem"), "EC PRIVATE KEY", keyDER)
	return cert, key, path
}

// seen is what the TLS front saw of one request.
type seen struct {
	path, ingressKey, clientCN, serverName string
}

// tlsFront serves the fake API behind HTTPS that requires a client certificate signed by
// clients, with a server certificate for seckill.test signed by servers; it records every
// request that passed the handshake.
func tlsFront(t *testing.T, servers, clients *authority) (base string, requests func() []seen) {
	t.Helper()
	_, fake := fakeapi.New(t)
	u, err := url.Parse(fake)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	var reqs []seen
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{path: r.Method + " " + r.URL.Path, ingressKey: r.Header.Get("X-Ingress-Key"), serverName: r.TLS.ServerName}
		if pc := r.TLS.PeerCertificates; len(pc) > 0 {
			s.clientCN = pc[0].Subject.CommonName
		}
		mu.Lock()
		reqs = append(reqs, s)
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	cert, key, _ := servers.issue(t, "api", []string{"seckill.test"}, false)
	pool := x509.NewCertPool()
	pool.AddCert(clients.cert)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key}},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes of the negative cases
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), reqs...)
	}
}

// runIn runs the program in this process with the direct audits off.
func runIn(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	argv := append([]string{"loadtest"}, append(args, "-database-url=", "-redis-addr=", "-progress=0", "-duration=30s")...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, argv, func(k string) string { return map[string]string{"ADMIN_TOKEN": "secret"}[k] }, &out, &errb)
	if err != nil {
		errb.WriteString("loadtest: " + err.Error())
	}
	return out.String(), errb.String(), exitCode(err)
}

// TestHeadersAndClientTLS: with -header and -tls-*, every request loadtest makes (/readyz,
// the product's creation, every purchase, the audit) reaches an HTTPS front that requires a
// client certificate, carrying the header, over a handshake that presented loadtest's client
// certificate and the server name. A wrong CA, no client certificate or no server name fail
// the handshake with the TLS error; a malformed header or half a key pair is a bad command
// line.
func TestHeadersAndClientTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	servers, clients, other := newAuthority(t, dir, "server-ca"), newAuthority(t, dir, "client-ca"), newAuthority(t, dir, "other-ca")
	_, _, clientPEM := clients.issue(t, "loadtest-client", nil, false)
	clientKey := filepath.Join(dir, "loadtest-client-key.pem")
	base, requests := tlsFront(t, servers, clients)
	tlsFlags := []string{"-tls-ca=" + servers.pem, "-tls-cert=" + clientPEM, "-tls-key=" + clientKey, "-tls-server-name=seckill.test"}
	jsonPath := filepath.Join(dir, "r.json")

	out, errOut, code := runIn(t, append([]string{"run", "-targets=" + base, "-strategy=dlock", "-stock=10", "-requests=200",
		"-workers=4", "-check", "-header=X-Ingress-Key: k-123", "-json=" + jsonPath}, tlsFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	paths := map[string]int{}
	for _, s := range requests() {
		paths[s.path]++
		if s.ingressKey != "k-123" || s.clientCN != "loadtest-client" || s.serverName != "seckill.test" {
			t.Errorf("%s: header %q, client certificate %q, server name %q", s.path, s.ingressKey, s.clientCN, s.serverName)
		}
	}
	for _, want := range []string{"GET /readyz", "POST /api/v1/products", "POST /api/v1/products/1/purchase", "GET /api/v1/products/1/audit"} {
		if paths[want] == 0 {
			t.Errorf("no %s reached the front: %v", want, paths)
		}
	}
	if got := paths["POST /api/v1/products/1/purchase"]; got != 200 {
		t.Errorf("%d purchases reached the front, want 200", got)
	}
	if !strings.Contains(out, "deployment    headers X-Ingress-Key (values not shown); client TLS: own CA, client certificate, server name seckill.test") {
		t.Errorf("the report does not say how it reached the deployment:\n%s", out)
	}
	rep := readReport(t, jsonPath)
	if flags := strings.Join(rep.Flags, " "); strings.Contains(flags, "k-123") || !strings.Contains(flags, "-header=X-Ingress-Key: REDACTED") {
		t.Errorf("JSON flags %q: want the header's name, not its value", flags)
	}

	for _, tt := range []struct {
		name  string
		flags []string
		code  int
		want  string
	}{
		{"wrong CA", []string{"-tls-ca=" + other.pem, "-tls-cert=" + clientPEM, "-tls-key=" + clientKey, "-tls-server-name=seckill.test"},
			exitHarness, "x509: certificate signed by unknown authority"},
		{"no client certificate", []string{"-tls-ca=" + servers.pem, "-tls-server-name=seckill.test"}, exitHarness, "tls: certificate required"},
		{"no server name", []string{"-tls-ca=" + servers.pem, "-tls-cert=" + clientPEM, "-tls-key=" + clientKey}, exitHarness, "x509: cannot validate certificate for 127.0.0.1"},
		{"header without a colon", append([]string{"-header=X-Ok: 1", "-header=X-Ingress-Key s3cr3t"}, tlsFlags...), exitUsage,
			"-header (the 2nd): want 'Name: value', and found no colon"},
		{"header name with a space", append([]string{"-header=X Key: s3cr3t"}, tlsFlags...), exitUsage, "is not a header name"},
		{"certificate without its key", []string{"-tls-ca=" + servers.pem, "-tls-cert=" + clientPEM}, exitUsage, "needs both, or neither"},
		{"CA file missing", []string{"-tls-ca=" + clientKey + ".missing"}, exitUsage, "-tls-ca: open"},
		{"CA file without a certificate", []string{"-tls-ca=" + clientKey}, exitUsage, "no PEM certificate in it"},
	} {
		out, errOut, code := runIn(t, append([]string{"run", "-targets=" + base, "-requests=10", "-wait=20s"}, tt.flags...)...)
		if code != tt.code || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "s3cr3t") {
			t.Errorf("%s: exit %d, want %d with %q and no header value\nstdout:\n%s\nstderr:\n%s", tt.name, code, tt.code, tt.want, out, errOut)
		}
	}
}
