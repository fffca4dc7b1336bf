package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"

	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
)

// redisCLI runs the real redis-cli against port with args and stdin.
func redisCLI(t *testing.T, port int, stdin string, args ...string) string {
	t.Helper()
	bin := blobtest.RequireCommand(t, "redis-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-p", strconv.Itoa(port)}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestRedisCLI drives a `strata server` process with the real redis-cli:
// commands read from stdin as an interactive user types them, --pipe mass
// insertion of 1M keys, --scan, --bigkeys, --stat and -r/-i, and a
// restart in between that keeps all of it.
func TestRedisCLI(t *testing.T) {
	blobtest.RequireCommand(t, "redis-cli")
	dir := t.TempDir()
	port := freePort(t)
	args := []string{"--port", strconv.Itoa(port), "--dir", filepath.Join(dir, "data")}
	srv := startChild(t, "server", nil, strataBinaryNoRace(t), append([]string{"server"}, args...)...)
	if err := srv.waitFor("ready to accept connections", 30*time.Second); err != nil {
		t.Fatal(err)
	}

	// Typed commands, one per line, as redis-cli reads them from a pipe.
	out := redisCLI(t, port, "SET greeting \"hello world\"\nGET greeting\nRPUSH l a b c\nLRANGE l 0 -1\nINCR n\nPING\n")
	if want := "OK\nhello world\n3\na\nb\nc\n1\nPONG\n"; out != want {
		t.Errorf("typed commands: got %q, want %q", out, want)
	}

	// --pipe: one million SETs in the protocol, then DBSIZE.
	const n = 1_000_000
	var proto bytes.Buffer
	for i := range n {
		k, v := "key:"+strconv.Itoa(i), "value:"+strconv.Itoa(i)
		fmt.Fprintf(&proto, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(v), v)
	}
	start := time.Now()
	out = redisCLI(t, port, proto.String(), "--pipe")
	t.Logf("--pipe of %d SETs took %v", n, time.Since(start).Round(time.Millisecond))
	if !strings.Contains(out, fmt.Sprintf("errors: 0, replies: %d", n)) {
		t.Fatalf("--pipe: %s", out)
	}
	if got := strings.TrimSpace(redisCLI(t, port, "", "DBSIZE")); got != strconv.Itoa(n+3) {
		t.Fatalf("DBSIZE after --pipe = %s, want %d", got, n+3)
	}

	// Restart: everything acknowledged is still there.
	start = time.Now()
	if code, err := srv.stop(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("stop: %d, %v\n%s", code, err, srv.tail(20))
	}
	srv = startChild(t, "server (restarted)", nil, strataBinaryNoRace(t), append([]string{"server"}, args...)...)
	if err := srv.waitFor("ready to accept connections", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %v", time.Since(start).Round(time.Millisecond))
	for _, i := range []int{0, 1, 4242, 999_999} {
		if got := strings.TrimSpace(redisCLI(t, port, "", "GET", "key:"+strconv.Itoa(i))); got != "value:"+strconv.Itoa(i) {
			t.Errorf("after restart GET key:%d = %q", i, got)
		}
	}

	// --scan with a pattern lists exactly the matching keys.
	start = time.Now()
	out = redisCLI(t, port, "", "--scan", "--pattern", "key:99999*")
	t.Logf("--scan over %d keys took %v", n, time.Since(start).Round(time.Millisecond))
	got := strings.Fields(out)
	if len(got) != 11 { // key:99999 and key:999990..key:999999
		t.Errorf("--scan --pattern key:99999* found %d keys: %v", len(got), got)
	}

	// --bigkeys names the biggest key of each type (in database 1, so it
	// does not walk the million keys with a TYPE each).
	redisCLI(t, port, "", "-n", "1", "SET", "big", strings.Repeat("x", 5000))
	redisCLI(t, port, "", "-n", "1", "SET", "small", "x")
	redisCLI(t, port, "", "-n", "1", "RPUSH", "l", "a", "b", "c")
	redisCLI(t, port, "", "-n", "1", "HSET", "h", "f1", "v", "f2", "v")
	out = redisCLI(t, port, "", "-n", "1", "--bigkeys")
	for _, want := range []string{`Biggest string found '"big"' has 5000 bytes`, `Biggest   list found '"l"' has 3 items`,
		`Biggest   hash found '"h"' has 2 fields`} {
		if !strings.Contains(out, want) {
			t.Errorf("--bigkeys output lacks %q:\n%s", want, out)
		}
	}

	// -r/-i repeat a command.
	redisCLI(t, port, "", "-r", "5", "-i", "0.01", "INCR", "counter")
	if got := strings.TrimSpace(redisCLI(t, port, "", "GET", "counter")); got != "5" {
		t.Errorf("after -r 5 INCR counter = %q", got)
	}

	// --stat prints a line per interval with the key count.
	cmd := exec.Command(blobtest.RequireCommand(t, "redis-cli"), "-p", strconv.Itoa(port), "--stat", "-i", "0.2")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	var lines []string
	for sc.Scan() && len(lines) < 4 {
		lines = append(lines, sc.Text())
	}
	if len(lines) < 4 || !strings.Contains(lines[0], "data") || !strings.Contains(strings.Join(lines, "\n"), "1000008") { // both databases
		t.Errorf("--stat output:\n%s", strings.Join(lines, "\n"))
	} else {
		t.Logf("--stat:\n%s", strings.Join(lines, "\n"))
	}
}
