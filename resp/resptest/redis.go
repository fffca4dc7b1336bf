package resptest

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
)

// StartRedis starts a redis-server of the test's own on a free port of
// 127.0.0.1, without persistence, in a temporary directory, killed when the
// test ends, and returns its address. args go on its command line before
// ours: a config file, or options ("--databases", "4"). Without redis-server on PATH the test skips (fails
// under CI=true).
func StartRedis(t testing.TB, args ...string) string {
	t.Helper()
	bin := blobtest.RequireCommand(t, "redis-server")
	var lastErr error
	for range 3 { // the free port may be taken before the server binds it
		addr, err := tryStartRedis(t, bin, args)
		if err == nil {
			return addr
		}
		lastErr = err
	}
	t.Fatalf("resptest: redis-server: %v", lastErr)
	return ""
}

func tryStartRedis(t testing.TB, bin string, args []string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	// The caller's args come first, as a config file must; the options
	// after them win, so the port, the directory and persistence stay ours.
	argv := append(append([]string{}, args...), "--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no")
	var out bytes.Buffer // written by exec's copier until Wait returns
	cmd := exec.Command(bin, argv...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	addr := "127.0.0.1:" + port
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return "", fmt.Errorf("exited at start: %s", out.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			t.Cleanup(stop)
			return addr, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return "", fmt.Errorf("not listening on %s after 10s: %s", addr, out.String())
}
