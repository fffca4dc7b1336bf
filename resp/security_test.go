package resp

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/resp/resptest"
)

// nonLoopbackIP returns an IPv4 address of this machine that is not on the
// loopback interface, for clients protected mode must refuse.
func nonLoopbackIP(t *testing.T) string {
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
	t.Skip("this machine has no non-loopback IPv4 address")
	return ""
}

// serveOn makes ts's server also accept on ln (until the server closes).
func serveOn(t *testing.T, ts *testServer, ln net.Listener) string {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- ts.srv.Serve(ln) }()
	t.Cleanup(func() {
		ts.close()
		if err := <-done; err != nil {
			t.Errorf("serve %s: %v", ln.Addr(), err)
		}
	})
	return ln.Addr().String()
}

// firstBytes connects to addr, sends cmd, and returns what the server
// sends until it closes the connection (an error if it does not within 5s).
func firstBytes(addr, cmd string) (string, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write([]byte(cmd))
	b, err := io.ReadAll(nc)
	return string(b), err
}

// redisDenied returns what a redis-server bound to ip sends a client from
// ip with protected mode on and no password: the text to match.
func redisDenied(t *testing.T, ip string) string {
	t.Helper()
	bin := blobtest.RequireCommand(t, "redis-server")
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(bin, "--port", port, "--bind", ip, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for range 250 {
		if got, err := firstBytes(net.JoinHostPort(ip, port), "PING\r\n"); err == nil {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not answer")
	return ""
}

// TestProtectedMode: with protected mode on and no password, a client from
// a non-loopback address gets redis-server's DENIED text and is closed;
// loopback clients are served; a password or protected-mode no lets the
// outside in. CONFIG GET/SET protected-mode behave as in Redis.
func TestProtectedMode(t *testing.T) {
	ip := nonLoopbackIP(t)
	want := redisDenied(t, ip)
	if !strings.HasPrefix(want, "-DENIED ") {
		t.Fatalf("redis-server sent %q, not DENIED", want)
	}
	ts := startServer(t, Config{ProtectedMode: true})
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	outside := serveOn(t, ts, ln)
	if got, err := firstBytes(outside, "PING\r\n"); err != nil || got != want {
		t.Fatalf("outside client got %q, %v; want redis-server's %q", got, err, want)
	}
	if got, err := firstBytes(outside, ""); err != nil || got != want {
		t.Fatalf("silent outside client got %q, %v; want the refusal at once", got, err)
	}
	local := resptest.Dial(t, ts.addr)
	do(t, local, "+PONG\r\n", "PING")
	if f := infoFields(t, local.Do("INFO", "stats")); f["rejected_connections"] != "2" {
		t.Errorf("rejected_connections = %s, want 2", f["rejected_connections"])
	}

	// The CONFIG replies, error text included, are redis-server's.
	redisAddr := resptest.StartRedis(t)
	w := newTwin(t, "loopback", ts.addr, redisAddr)
	for _, cmd := range [][]string{{"CONFIG", "GET", "protected-mode"}, {"CONFIG", "SET", "protected-mode", "maybe"},
		{"CONFIG", "SET", "protected-mode", "NO"}, {"CONFIG", "GET", "protected-mode"}} {
		w.exact(cmd...)
	}
	if got, _ := firstBytes(outside, "PING\r\nQUIT\r\n"); got != "+PONG\r\n+OK\r\n" {
		t.Fatalf("protected-mode no: outside client got %q", got)
	}
	do(t, local, "+OK\r\n", "CONFIG", "SET", "protected-mode", "yes", "requirepass", "pw")
	if got, _ := firstBytes(outside, "PING\r\nQUIT\r\n"); got != "-NOAUTH Authentication required.\r\n+OK\r\n" {
		t.Fatalf("with a password: outside client got %q, want NOAUTH", got)
	}
	if got, _ := firstBytes(outside, "AUTH pw\r\nPING\r\nQUIT\r\n"); got != "+OK\r\n+PONG\r\n+OK\r\n" {
		t.Fatalf("with a password: outside client after AUTH got %q", got)
	}
}

// TestTLS: the TLS port serves go-redis and redis-cli with a client
// certificate the CA signed; a client without one, or with one from
// another CA, is refused when tls-auth-clients is yes; a plain-text client
// on the TLS port is dropped unanswered; the plain port keeps working.
func TestTLS(t *testing.T) {
	certs := resptest.WriteCerts(t, t.TempDir())
	opts := TLSOptions{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, CACertFile: certs.CACert}
	ts, tlsAddr := startTLSServer(t, opts)
	ctx := context.Background()

	good := tlsClient(t, tlsAddr, &tls.Config{RootCAs: certs.CAPool, Certificates: []tls.Certificate{certs.Client}})
	if err := good.Set(ctx, "k", "over tls", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	plain := redis.NewClient(&redis.Options{Addr: ts.addr})
	defer plain.Close()
	if v, err := plain.Get(ctx, "k").Result(); err != nil || v != "over tls" {
		t.Fatalf("GET on the plain port: %q, %v", v, err)
	}
	other, err := tls.LoadX509KeyPair(certs.OtherCert, certs.OtherKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*tls.Config{
		"no certificate":         {RootCAs: certs.CAPool},
		"another CA's client":    {RootCAs: certs.CAPool, Certificates: []tls.Certificate{other}},
		"server not trusted yet": {Certificates: []tls.Certificate{certs.Client}},
	} {
		if err := tlsClient(t, tlsAddr, cfg).Ping(ctx).Err(); err == nil {
			t.Errorf("%s: PING over TLS succeeded", name)
		}
	}
	if got, err := firstBytes(tlsAddr, "PING\r\n"); strings.Contains(got, "PONG") || err != nil {
		t.Errorf("plain-text client on the TLS port got %q, %v; want it dropped", got, err)
	}
	c := resptest.Dial(t, ts.addr)
	do(t, c, "*2\r\n$16\r\ntls-auth-clients\r\n$3\r\nyes\r\n", "CONFIG", "GET", "tls-auth-clients")

	cli := blobtest.RequireCommand(t, "redis-cli")
	host, port, _ := net.SplitHostPort(tlsAddr)
	out, err := exec.Command(cli, "-h", host, "-p", port, "--tls", "--cacert", certs.CACert,
		"--cert", certs.ClientCert, "--key", certs.ClientKey, "GET", "k").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "over tls" {
		t.Errorf("redis-cli --tls GET k: %q, %v", out, err)
	}
	out, _ = exec.Command(cli, "-h", host, "-p", port, "--tls", "--cacert", certs.CACert, "PING").CombinedOutput()
	if strings.Contains(string(out), "PONG") {
		t.Errorf("redis-cli --tls without a client certificate got PONG")
	}
}

// TestTLSAuthClientsOptional: with tls-auth-clients optional a client may
// come without a certificate, but one it sends must be valid; with no, no
// CA is needed at all.
func TestTLSAuthClientsOptional(t *testing.T) {
	certs := resptest.WriteCerts(t, t.TempDir())
	ctx := context.Background()
	_, addr := startTLSServer(t, TLSOptions{CertFile: certs.ServerCert, KeyFile: certs.ServerKey,
		CACertFile: certs.CACert, AuthClients: "optional"})
	if err := tlsClient(t, addr, &tls.Config{RootCAs: certs.CAPool}).Ping(ctx).Err(); err != nil {
		t.Errorf("optional, no certificate: %v", err)
	}
	other, _ := tls.LoadX509KeyPair(certs.OtherCert, certs.OtherKey)
	// Go's client sends no certificate the server's CA list does not name:
	// make it send one anyway.
	sendOther := func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &other, nil }
	if tlsClient(t, addr, &tls.Config{RootCAs: certs.CAPool, GetClientCertificate: sendOther}).Ping(ctx).Err() == nil {
		t.Errorf("optional: a certificate from another CA was accepted")
	}
	_, addr = startTLSServer(t, TLSOptions{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, AuthClients: "no"})
	if err := tlsClient(t, addr, &tls.Config{RootCAs: certs.CAPool}).Ping(ctx).Err(); err != nil {
		t.Errorf("no: %v", err)
	}
}

// TestTLSOptionsErrors: settings redis-server refuses at startup, and
// unreadable files, are one-line errors naming the setting.
func TestTLSOptionsErrors(t *testing.T) {
	certs := resptest.WriteCerts(t, t.TempDir())
	for _, tc := range []struct {
		o    TLSOptions
		want string
	}{
		{TLSOptions{Port: 1, CertFile: certs.ServerCert, KeyFile: certs.ServerKey}, "tls-ca-cert-file must be given"},
		{TLSOptions{Port: 1, KeyFile: certs.ServerKey, AuthClients: "no"}, "tls-port needs tls-cert-file and tls-key-file"},
		{TLSOptions{Port: 1, CertFile: "/nonexistent.crt", KeyFile: certs.ServerKey, AuthClients: "no"}, "/nonexistent.crt"},
		{TLSOptions{Port: 1, CertFile: certs.ServerCert, KeyFile: certs.ClientKey, AuthClients: "no"}, "private key does not match"},
		{TLSOptions{Port: 1, CertFile: certs.ServerCert, KeyFile: certs.ServerKey, CACertFile: certs.ServerKey}, "holds no PEM certificate"},
		{TLSOptions{AuthClients: "sometimes"}, "tls-auth-clients must be yes, no or optional"},
	} {
		_, err := tc.o.Config()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line containing %q", tc.o, err, tc.want)
		}
	}
}

func startTLSServer(t *testing.T, o TLSOptions) (*testServer, string) {
	t.Helper()
	ts := startServer(t, Config{TLS: o})
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ts, serveOn(t, ts, tls.NewListener(ln, cfg))
}

func tlsClient(t *testing.T, addr string, cfg *tls.Config) *redis.Client {
	if cfg.ServerName == "" {
		cfg.ServerName = "localhost"
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: cfg, MaxRetries: -1, DialTimeout: 5 * time.Second})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}
