package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/resp/resptest"
)

// TestServerTLS: TLS settings from a config file under redis.conf's names;
// with port 0 only the TLS port listens, and go-redis and redis-cli --tls
// with a client certificate the CA signed are served there.
func TestServerTLS(t *testing.T) {
	dir := t.TempDir()
	certs := resptest.WriteCerts(t, dir)
	tlsPort := freePort(t)
	conf := filepath.Join(dir, "strata.conf")
	body := fmt.Sprintf("port 0\ntls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ndir %s\n",
		tlsPort, certs.ServerCert, certs.ServerKey, certs.CACert, filepath.Join(dir, "data"))
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "server", conf)
	if line := logLines(srv.out.String(), "ready to accept connections"); len(line) != 1 ||
		logField(line[0], "port") != "0" || logField(line[0], "tls_port") != strconv.Itoa(tlsPort) {
		t.Errorf("startup line %q, want port=0 tls_port=%d", line, tlsPort)
	}
	ctx := context.Background()
	o := clientOptions(tlsPort)
	o.MaxRetries = -1
	o.TLSConfig = &tls.Config{RootCAs: certs.CAPool, Certificates: []tls.Certificate{certs.Client}, ServerName: "localhost"}
	rdb := newClientWith(t, o)
	if err := rdb.Set(ctx, "k", "secure", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	if got, err := rdb.ConfigGet(ctx, "port").Result(); err != nil || got["port"] != "0" {
		t.Errorf("CONFIG GET port = %v, %v; want 0", got, err)
	}
	cli := blobtest.RequireCommand(t, "redis-cli")
	out, err := exec.Command(cli, "-p", strconv.Itoa(tlsPort), "--tls", "--cacert", certs.CACert,
		"--cert", certs.ClientCert, "--key", certs.ClientKey, "GET", "k").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "secure" {
		t.Errorf("redis-cli --tls GET k: %q, %v", out, err)
	}
	out, _ = exec.Command(cli, "-p", strconv.Itoa(tlsPort), "--tls", "--cacert", certs.CACert, "PING").CombinedOutput()
	if strings.Contains(string(out), "PONG") {
		t.Errorf("redis-cli --tls without a client certificate was served: %q", out)
	}
	if got, err := firstReply("127.0.0.1:"+strconv.Itoa(tlsPort), "PING\r\n"); strings.Contains(got, "PONG") {
		t.Errorf("a plain-text client on the TLS port got %q, %v", got, err)
	}
}

// TestServerTLSBadSettings: a missing certificate, or a TLS port whose
// clients cannot be verified, stops the server at startup with exit 1 and
// one line, as redis-server stops.
func TestServerTLSBadSettings(t *testing.T) {
	certs := resptest.WriteCerts(t, t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert-file", "/nonexistent/server.crt", "--tls-key-file", certs.ServerKey, "--tls-ca-cert-file", certs.CACert}, "/nonexistent/server.crt"},
		{[]string{"--tls-cert-file", certs.ServerCert, "--tls-key-file", certs.ServerKey}, "tls-ca-cert-file must be given"},
		{[]string{"--tls-cert-file", certs.ServerCert, "--tls-key-file", certs.ServerKey, "--tls-auth-clients", "sometimes"}, "tls-auth-clients must be"},
	} {
		args := append([]string{"server", "--dir", t.TempDir(), "--port", strconv.Itoa(freePort(t)),
			"--tls-port", strconv.Itoa(freePort(t))}, tc.args...)
		c := startChild(t, "server", nil, strataBinary(t), args...)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("%q: the server did not exit", tc.args)
		}
		out := strings.TrimSpace(c.out.String())
		if code := c.cmd.ProcessState.ExitCode(); code != 1 || strings.Contains(out, "\n") ||
			!strings.HasPrefix(out, "strata server: ") || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d, output %q; want exit 1 and one line naming %q", tc.args, code, out, tc.want)
		}
	}
}

// TestServerProtectedMode: bound to a non-loopback address with no
// password, `strata server` (protected mode on by default) refuses a
// client from that address with Redis's DENIED text and serves loopback;
// CONFIG SET protected-mode no, from loopback, lets the outside in.
func TestServerProtectedMode(t *testing.T) {
	ip := outsideIP(t)
	port := freePort(t)
	startServer(t, "server", "--bind", "127.0.0.1 "+ip, "--port", strconv.Itoa(port), "--dir", t.TempDir())
	outside := net.JoinHostPort(ip, strconv.Itoa(port))
	got, err := firstReply(outside, "PING\r\n")
	if err != nil || !strings.HasPrefix(got, "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user.") ||
		!strings.HasSuffix(got, "in order for the server to start accepting connections from the outside.\r\n") {
		t.Fatalf("outside client got %q, %v; want DENIED, then the connection closed", got, err)
	}
	local := newClient(t, port)
	ctx := context.Background()
	if err := local.ConfigSet(ctx, "protected-mode", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := firstReply(outside, "PING\r\nQUIT\r\n"); got != "+PONG\r\n+OK\r\n" {
		t.Errorf("with protected-mode no, outside client got %q, %v", got, err)
	}
}

// outsideIP returns an IPv4 address of this machine off the loopback
// interface; the test skips without one.
func outsideIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address on this machine")
	return ""
}

// firstReply sends cmd on a new connection to addr and returns all the
// server sends until it closes the connection or 5s pass.
func firstReply(addr, cmd string) (string, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(nc)
	return string(b), err
}
