package engine

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// TestTLS: DOCKER_CERT_PATH's certificates, the server's checked with
// DOCKER_TLS_VERIFY; through TLS, the end of an exec's stdin still
// reaches the engine, which is how the container backend stops a command
// (Soft), and a server whose certificate ca.pem does not hold is refused.
func TestTLS(t *testing.T) {
	f := newFakeEngine(t)
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", srv.Certificate().Raw)
	der := clientCert(t, dir)
	t.Setenv(client.EnvOverrideCertPath, dir)
	t.Setenv(client.EnvTLSVerify, "1")
	t.Setenv(client.EnvOverrideAPIVersion, "")
	c, err := New("tcp://" + srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	start := time.Now()
	code, forced, err := Run(ctx, c, "cat", &out, &errOut, Stop{
		Soft:  func(_ string, att *client.HijackedResponse) { att.CloseWrite() },
		Hard:  func(_ string, att *client.HijackedResponse) { att.Close() },
		Grace: 10 * time.Second,
	})
	if err != nil || code != 3 || forced || out.String() != "out\n" || time.Since(start) > 5*time.Second {
		t.Errorf("code %d, forced %v, err %v, stdout %q after %s: want the exec to end with its stdin", code, forced, err, out.String(), time.Since(start))
	}

	// The server's certificate not among ca.pem's: refused, when checked.
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", der)
	c2, err := New("tcp://" + srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Ping(context.Background(), client.PingOptions{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an unknown server certificate: %v", err)
	}
}

// clientCert writes a self-signed client certificate and its key to dir
// (cert.pem, key.pem) and returns the certificate.
func clientCert(t *testing.T, dir string) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "harness"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "cert.pem"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, "key.pem"), "EC PRIVATE KEY", kb)
	return der
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
