package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startServer runs `strata server` with args and waits until it is ready.
func startServer(t *testing.T, name string, args ...string) *child {
	t.Helper()
	c := startChild(t, name, nil, strataBinary(t), append([]string{"server"}, args...)...)
	if err := c.waitFor("ready to accept connections", 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, c.tail(20))
	}
	return c
}

func newClient(t *testing.T, port int) *redis.Client {
	t.Helper()
	return newClientWith(t, clientOptions(port))
}

// clientOptions are newClient's: the server at port, no maintenance
// notifications (a Redis Cloud feature strata does not speak).
func clientOptions(port int) *redis.Options {
	return &redis.Options{
		Addr:                     "127.0.0.1:" + strconv.Itoa(port),
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

// newClientWith opens a client closed at the test's end.
func newClientWith(t *testing.T, o *redis.Options) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestServerProcessRestart: writes acknowledged by a `strata server`
// process survive SIGTERM (a graceful shutdown that exits 0 and flushes
// the engine) and a restart on the same directory.
func TestServerProcessRestart(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	args := []string{"--port", strconv.Itoa(port), "--dir", dir}
	srv := startServer(t, "server", args...)
	ctx := context.Background()
	rdb := newClient(t, port)
	const n = 500
	for i := range n {
		if err := rdb.Set(ctx, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i), 0).Err(); err != nil {
			t.Fatalf("SET k%d: %v", i, err)
		}
	}
	code, err := srv.stop(30 * time.Second)
	if err != nil || code != 0 {
		t.Fatalf("SIGTERM: exit %d, %v\n%s", code, err, srv.tail(20))
	}
	if len(logLines(srv.out.String(), "engine closed; bye")) != 1 {
		t.Errorf("no clean engine close logged:\n%s", srv.tail(20))
	}
	rdb.Close()

	startServer(t, "server (restarted)", args...)
	rdb = newClient(t, port)
	for i := range n {
		v, err := rdb.Get(ctx, fmt.Sprintf("k%d", i)).Result()
		if err != nil || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("after restart GET k%d = %q, %v", i, v, err)
		}
	}
}

// TestServerPortTaken: a second server on a taken port exits 1 with one
// line that says so.
func TestServerPortTaken(t *testing.T) {
	port := freePort(t)
	startServer(t, "first", "--port", strconv.Itoa(port), "--dir", t.TempDir())
	second := startChild(t, "second", nil, strataBinary(t), "server", "--port", strconv.Itoa(port), "--dir", t.TempDir())
	select {
	case <-second.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("second server did not exit")
	}
	out := strings.TrimSpace(second.out.String())
	if code := second.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if strings.Count(out, "\n") != 0 || !strings.Contains(out, "cannot listen on 127.0.0.1:"+strconv.Itoa(port)) ||
		!strings.Contains(out, "address already in use") {
		t.Errorf("want one line about the taken port, got:\n%s", out)
	}
}

// TestServerBucketUnreachable: an object store that cannot be reached is
// reported in one line, promptly, with a non-zero exit.
func TestServerBucketUnreachable(t *testing.T) {
	dead := freePort(t) // nothing listens there
	c := startChild(t, "server", []string{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=y"}, strataBinary(t),
		"server", "--port", strconv.Itoa(freePort(t)),
		"--bucket", fmt.Sprintf("s3://bkt/p?endpoint=127.0.0.1:%d&insecure=true", dead))
	select {
	case <-c.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("server did not give up on an unreachable bucket within 60s")
	}
	if code := c.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("exit code 0 for an unreachable bucket")
	}
	var errLines []string
	for _, l := range strings.Split(c.out.String(), "\n") {
		if strings.HasPrefix(l, "strata server:") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "connection refused") {
		t.Errorf("want one 'strata server:' line naming the failure, got:\n%s", c.out.String())
	}
}

// TestServerConfigFile: `strata server FILE --port P` reads settings from
// the file, as redis-server does, and flags override them.
func TestServerConfigFile(t *testing.T) {
	dir := t.TempDir()
	filePort, flagPort := freePort(t), freePort(t)
	conf := filepath.Join(dir, "strata.conf")
	body := fmt.Sprintf("# test config\nport %d\ndir %s\nrequirepass \"s3cret\"\nappendfsync everysec\n", filePort, filepath.Join(dir, "data"))
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	startServer(t, "server", conf, "--port", strconv.Itoa(flagPort))
	ctx := context.Background()
	rdb := newClient(t, flagPort)
	if err := rdb.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("PING without AUTH: %v, want NOAUTH (requirepass from the file)", err)
	}
	o := clientOptions(flagPort)
	o.Password = "s3cret"
	authed := newClientWith(t, o)
	got, err := authed.ConfigGet(ctx, "appendfsync").Result()
	if err != nil || got["appendfsync"] != "everysec" {
		t.Fatalf("CONFIG GET appendfsync = %v, %v; want everysec from the file", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Errorf("dir from the file not used: %v", err)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(filePort), time.Second); err == nil {
		c.Close()
		t.Errorf("listening on the file's port %d; the flag --port %d should win", filePort, flagPort)
	}
}
