package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityArgs: the TLS and protected-mode settings come from a config
// file under redis.conf's names, with Redis's defaults.
func TestSecurityArgs(t *testing.T) {
	f, err := parseServerArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.protectedMode != "yes" || f.tls.Port != 0 || f.tls.AuthClients != "yes" {
		t.Errorf("defaults: protected-mode %q tls-port %d tls-auth-clients %q", f.protectedMode, f.tls.Port, f.tls.AuthClients)
	}
	conf := filepath.Join(t.TempDir(), "strata.conf")
	os.WriteFile(conf, []byte("protected-mode no\ntls-port 6380\ntls-cert-file /c.crt\ntls-key-file \"/k.key\"\n"+
		"tls-ca-cert-file /ca.crt\ntls-auth-clients optional\nport 0\n"), 0o644)
	if f, err = parseServerArgs([]string{conf}); err != nil {
		t.Fatal(err)
	}
	if f.protectedMode != "no" || f.port != 0 || f.tls.Port != 6380 || f.tls.CertFile != "/c.crt" ||
		f.tls.KeyFile != "/k.key" || f.tls.CACertFile != "/ca.crt" || f.tls.AuthClients != "optional" {
		t.Errorf("from the file: %+v", *f)
	}
	f.port, f.tls.Port = 0, 0
	if _, err := f.listen(); err == nil || !strings.Contains(err.Error(), "not listen anywhere") {
		t.Errorf("port 0 and tls-port 0: %v", err)
	}
	if _, err := parseYesNo("protected-mode", "maybe"); err == nil {
		t.Error("protected-mode maybe accepted")
	}
}

// TestRedactWriter: secrets from the objstore config file, the AWS
// environment and requirepass are scrubbed from every write, also in the
// quoted form slog writes them in; short values are left alone.
func TestRedactWriter(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "bucket.yml")
	os.WriteFile(conf, []byte("type: S3\nconfig:\n  bucket: b\n  access_key: id-abcdefgh\n  secret_key: sk\"quoted\\secret\n"), 0o600)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret-value")
	t.Setenv("AWS_SESSION_TOKEN", "tok")
	b := bucketFlags{configFile: conf}
	var buf bytes.Buffer
	w := newRedactWriter(&buf, b.secrets("the-password"))
	for _, format := range []string{"text", "json"} {
		f := &serverFlags{logLevel: "debug", logFormat: format}
		logger, err := f.logger(w)
		if err != nil {
			t.Fatal(err)
		}
		logger.Debug("opening id-abcdefgh", "err", fmt.Errorf("denied for env-secret-value"),
			"conf", `sk"quoted\secret`, "pass", "the-password", "tok", "tok")
	}
	fmt.Fprintf(w, "strata server: %v\n", "env-secret-value")
	out := buf.String()
	for _, s := range []string{"id-abcdefgh", "env-secret-value", "quoted", "the-password"} {
		if strings.Contains(out, s) {
			t.Errorf("output shows %q:\n%s", s, out)
		}
	}
	if strings.Count(out, "[REDACTED]") != 9 || !strings.Contains(out, "tok=tok") {
		t.Errorf("want 9 redactions and the short token left alone:\n%s", out)
	}
	var plain bytes.Buffer
	if newRedactWriter(&plain, nil) != &plain {
		t.Error("a writer with no secrets should be the writer itself")
	}
}
