package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/missing"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedisTLS runs the API against a redis-server of its own that speaks TLS, with a
// certificate for 127.0.0.1 from a CA the test makes. The API is the built binary, started as
// a child process: crypto/x509 reads SSL_CERT_FILE from the real environment, once per
// process, so the in-process run could not be given a CA. With SSL_CERT_FILE naming the CA,
// REDIS_ADDR=rediss://... is ready and sells; with another CA, the certificate is refused and
// /readyz says Redis is down.
func TestRedisTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, other := newTestCA(t, dir, "ca"), newTestCA(t, dir, "other-ca")
	certFile, keyFile := ca.issue(t, dir, net.IPv4(127, 0, 0, 1))
	tlsArgs := []string{"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", ca.file,
		"--tls-auth-clients", "no"}
	skipUnlessRedisTLS(t, tlsArgs)
	// The launcher PINGs the server's plain port to know it is up; the API gets the TLS port.
	_, tlsPort, _ := net.SplitHostPort(testenv.FreeAddr(t))
	const password = "tls-pw-s3cr3t"
	servers.StartRedis(t, append(tlsArgs, "--tls-port", tlsPort, "--requirepass", password)...)
	dsn := testenv.Schema(t)
	tests := []struct {
		name, roots string
		ready       bool
	}{
		{"CA trusted", ca.file, true},
		{"another CA", other.file, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := servers.LaunchAPI(t, "api", map[string]string{"DATABASE_URL": dsn, "SSL_CERT_FILE": tt.roots,
				"REDIS_ADDR": "rediss://:" + password + "@127.0.0.1:" + tlsPort, "REDIS_KEY_PREFIX": testenv.Name("tls"),
				"ADMIN_TOKEN": authToken, "LOG_LEVEL": "debug"})
			api.WaitReady("/healthz") // live: with the other CA, /readyz never answers 200
			base := api.Base
			stop := func() string { api.Stop(); return api.Log.String() }
			status, body := readyz(t, base, tt.ready)
			answers := body
			if tt.ready {
				if status != http.StatusOK {
					t.Fatalf("GET /readyz = %d %s, want 200; log:\n%s", status, body, stop())
				}
				for _, strategy := range []string{"redis", "dlock"} {
					answers += buyOnce(t, base, strategy)
				}
			} else if status != http.StatusServiceUnavailable || !strings.Contains(body, `"redis":"unavailable"`) {
				t.Fatalf("GET /readyz = %d %s, want 503 with redis unavailable; log:\n%s", status, body, stop())
			}
			logs := stop()
			if !tt.ready && !strings.Contains(logs, "certificate signed by unknown authority") {
				t.Errorf("the log does not say the certificate was refused:\n%s", logs)
			}
			if !strings.Contains(logs, "rediss://127.0.0.1:"+tlsPort) || strings.Contains(logs+answers, "s3cr3t") {
				t.Errorf("the log should name rediss://127.0.0.1:%s and no password; answers %s\nlog:\n%s", tlsPort, answers, logs)
			}
		})
	}
}

// skipUnlessRedisTLS skips the test when redis-server refuses the TLS options, as a build
// without TLS does (see missing.Skip). Told to listen nowhere, a server that takes them says so and exits.
func skipUnlessRedisTLS(t *testing.T, tlsArgs []string) {
	t.Helper()
	args := append([]string{"--port", "0", "--tls-port", "0", "--save", "", "--logfile", ""}, tlsArgs...)
	out, _ := exec.Command(servers.RedisBin(t), args...).CombinedOutput()
	if !strings.Contains(string(out), "not listen anywhere") {
		missing.Skipf(t, "redis-server refuses the TLS options (built without TLS?):\n%s", out)
	}
}

// testCA is a certificate authority of the test's own; file holds its certificate (PEM).
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

// newTestCA makes a CA valid for an hour and writes its certificate to dir/name.pem.
func newTestCA(t *testing.T, dir, name string) testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "seckill test " + name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{cert: cert, key: key, file: writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)}
}

// issue makes a server certificate for ip signed by ca, and writes it and its key to dir.
func (ca testCA) issue(t *testing.T, dir string, ip net.IP) (certFile, keyFile string) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: ip.String()}, IPAddresses: []net.IP{ip},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, filepath.Join(dir, "server.pem"), "CERTIFICATE", der),
		writePEM(t, filepath.Join(dir, "server.key"), "PRIVATE KEY", keyDER)
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// writePEM writes one PEM block to path, readable by its owner only, and returns path.
func writePEM(t *testing.T, path, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
