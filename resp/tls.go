package resp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSOptions are redis-server's TLS settings, under its names. The server
// serves TLS on a port of its own: the caller wraps that port's listener
// with the Config it builds (tls.NewListener) and hands it to Serve, as it
// does the plain port.
type TLSOptions struct {
	// Port is tls-port; 0 means no TLS port.
	Port int
	// CertFile and KeyFile are the server's certificate (with its chain)
	// and private key, PEM.
	CertFile, KeyFile string
	// CACertFile holds the CAs that client certificates must chain to.
	CACertFile string
	// AuthClients is tls-auth-clients: "yes" (the default: a client
	// without a certificate the CA signed is refused), "optional" (a
	// certificate is checked if sent) or "no".
	AuthClients string
}

func (o *TLSOptions) ensureDefaults() {
	if o.AuthClients == "" {
		o.AuthClients = "yes"
	}
}

// Validate reports settings that cannot work together, as redis-server
// refuses them at startup.
func (o TLSOptions) Validate() error {
	o.ensureDefaults()
	switch o.AuthClients {
	case "yes", "no", "optional":
	default:
		return fmt.Errorf("tls-auth-clients must be yes, no or optional, not %q", o.AuthClients)
	}
	if o.Port == 0 {
		return nil
	}
	if o.CertFile == "" || o.KeyFile == "" {
		return errors.New("tls-port needs tls-cert-file and tls-key-file")
	}
	// Redis's rule: verifying clients needs someone to verify them against;
	// silently accepting every client instead would defeat the setting.
	if o.AuthClients != "no" && o.CACertFile == "" {
		return errors.New("tls-ca-cert-file must be given when tls-auth-clients is yes or optional (the default is yes; set it to no to accept clients without certificates)")
	}
	return nil
}

// Config loads the certificate, key and CA files into a server TLS
// configuration. Its errors are one line naming the file at fault.
func (o TLSOptions) Config() (*tls.Config, error) {
	o.ensureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot load tls-cert-file %s / tls-key-file %s: %v", o.CertFile, o.KeyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.CACertFile != "" {
		pem, err := os.ReadFile(o.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read tls-ca-cert-file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls-ca-cert-file %s holds no PEM certificate", o.CACertFile)
		}
		cfg.ClientCAs = pool
	}
	switch o.AuthClients {
	case "yes":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		cfg.ClientAuth = tls.NoClientCert
	}
	return cfg, nil
}
