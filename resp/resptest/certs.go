package resptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs are PEM files of a throwaway certificate authority and of a server
// and a client certificate it signed, for TLS tests. The server
// certificate names localhost, 127.0.0.1 and ::1.
type Certs struct {
	CACert                 string // the CA's certificate
	ServerCert, ServerKey  string
	ClientCert, ClientKey  string
	CAPool                 *x509.CertPool
	Client                 tls.Certificate // ClientCert and ClientKey, loaded
	OtherCACert, OtherCert string          // a second CA and a client cert it signed: trusted by no server
	OtherKey               string
}

// WriteCerts creates Certs in dir. Keys are ECDSA P-256: quick to make.
func WriteCerts(t testing.TB, dir string) Certs {
	t.Helper()
	c := Certs{
		CACert: filepath.Join(dir, "ca.crt"), ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey: filepath.Join(dir, "server.key"), ClientCert: filepath.Join(dir, "client.crt"),
		ClientKey: filepath.Join(dir, "client.key"), OtherCACert: filepath.Join(dir, "other-ca.crt"),
		OtherCert: filepath.Join(dir, "other.crt"), OtherKey: filepath.Join(dir, "other.key"),
	}
	ca, caKey := newCert(t, "Strata Test CA", nil, nil, c.CACert, "")
	newCert(t, "localhost", ca, caKey, c.ServerCert, c.ServerKey)
	newCert(t, "client", ca, caKey, c.ClientCert, c.ClientKey)
	other, otherKey := newCert(t, "Other CA", nil, nil, c.OtherCACert, "")
	newCert(t, "stranger", other, otherKey, c.OtherCert, c.OtherKey)
	c.CAPool = x509.NewCertPool()
	c.CAPool.AddCert(ca)
	var err error
	if c.Client, err = tls.LoadX509KeyPair(c.ClientCert, c.ClientKey); err != nil {
		t.Fatal(err)
	}
	return c
}

// newCert makes a certificate for cn, signed by parent (self-signed, as a
// CA, when parent is nil), and writes it, and its key when keyPath is set.
func newCert(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	} else {
		tmpl.DNSNames = []string{cn}
		if cn == "localhost" {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certPath, "CERTIFICATE", der)
	if keyPath != "" {
		kb, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, keyPath, "EC PRIVATE KEY", kb)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
