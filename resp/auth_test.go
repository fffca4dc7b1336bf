package resp

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stratakv/strata/resp/resptest"
)

// twin is one client connected to a Strata server and to a redis-server:
// every command goes to both, and the replies must agree.
type twin struct {
	t     *testing.T
	name  string
	conns [2]*resptest.Conn
}

func newTwin(t *testing.T, name, strataAddr, redisAddr string) *twin {
	return &twin{t: t, name: name, conns: [2]*resptest.Conn{resptest.Dial(t, strataAddr), resptest.Dial(t, redisAddr)}}
}

// do runs args on both servers and compares the replies under mode. It
// returns Strata's reply.
func (w *twin) do(mode resptest.Mode, args ...string) []byte {
	w.t.Helper()
	var r [2][]byte
	for i, c := range w.conns {
		var err error
		if r[i], err = c.TryDo(args...); err != nil {
			w.t.Fatalf("%s: %q on %s: %v", w.name, args, []string{"strata", "redis"}[i], err)
		}
	}
	if err := resptest.CompareReplies(r[0], r[1], mode); err != nil {
		w.t.Errorf("%s: %q: %v\n    strata: %q\n    redis:  %q", w.name, args, err, r[0], r[1])
	}
	return r[0]
}

func (w *twin) exact(args ...string) []byte {
	w.t.Helper()
	return w.do(resptest.Exact, args...)
}

// TestAuthLikeRedis runs AUTH, HELLO AUTH, NOAUTH refusals (plain, in
// MULTI, in pub/sub) and runtime changes of requirepass on Strata and on
// redis-server 7 side by side: every reply, errors included, must be the
// same bytes.
func TestAuthLikeRedis(t *testing.T) {
	redisAddr := resptest.StartRedis(t, "--requirepass", "pw")
	ts := startServer(t, Config{RequirePass: "pw"})
	twinOf := func(name string) *twin { return newTwin(t, name, ts.addr, redisAddr) }

	a := twinOf("unauthenticated")
	for _, cmd := range [][]string{
		{"GET", "k"}, {"SET", "k", "v"}, {"PING"}, {"ECHO", "x"}, {"SELECT", "1"}, {"CLIENT", "ID"},
		{"SUBSCRIBE", "ch"}, {"PSUBSCRIBE", "c*"}, {"UNSUBSCRIBE"}, {"PUBLISH", "ch", "m"},
		{"MULTI"}, {"SET", "k", "v"}, {"EXEC"}, {"DISCARD"}, {"WATCH", "k"}, {"CONFIG", "GET", "requirepass"},
		{"INFO"}, {"FLUSHALL"}, {"NOSUCHCMD"}, {"GET"},
		{"HELLO"}, {"HELLO", "2"}, {"HELLO", "3"}, {"HELLO", "4"}, {"HELLO", "2", "SETNAME", "x"},
		{"HELLO", "2", "AUTH", "default", "wrong"}, {"HELLO", "2", "AUTH", "bob", "pw"}, {"HELLO", "2", "AUTH", "default"},
		{"AUTH"}, {"AUTH", "a", "b", "c"}, {"AUTH", "wrong"}, {"AUTH", "bob", "pw"}, {"AUTH", "default", "wrong"},
		{"AUTH", "default", "pw"}, {"GET", "k"}, {"AUTH", "wrong"}, {"GET", "k"}, // a failed AUTH keeps the old login
		{"RESET"}, {"GET", "k"}, {"AUTH", "pw"}, {"SET", "k", "v"},
	} {
		a.exact(cmd...)
	}
	a.do(resptest.Len, "HELLO", "2", "AUTH", "default", "pw", "SETNAME", "me")
	a.exact("CLIENT", "GETNAME")

	// A subscriber and a transaction opened under the old password live on
	// after CONFIG SET requirepass, as in Redis; new clients need the new one.
	sub, tx := twinOf("subscriber"), twinOf("transaction")
	sub.exact("AUTH", "pw")
	sub.exact("SUBSCRIBE", "ch")
	tx.exact("AUTH", "default", "pw")
	tx.exact("MULTI")
	tx.exact("SET", "k", "v2")
	never := twinOf("connected before the change, never authenticated")
	a.exact("CONFIG", "SET", "requirepass", "pw2")
	tx.exact("GET", "k")
	tx.exact("EXEC")
	sub.exact("PING")
	sub.exact("UNSUBSCRIBE")
	b := twinOf("new")
	b.exact("GET", "k")
	b.exact("AUTH", "pw")
	b.exact("AUTH", "pw2")
	b.exact("GET", "k")
	never.exact("GET", "k")

	// Without a password no client needs AUTH, even one that connected
	// while a password was set; with one again, it does again.
	b.exact("CONFIG", "SET", "requirepass", "")
	for _, cmd := range [][]string{{"GET", "k"}, {"HELLO", "2", "SETNAME", "x"}, {"AUTH", "x"}, {"AUTH", "bob", "x"}} {
		never.do(resptest.Len, cmd...)
	}
	b.exact("CONFIG", "SET", "requirepass", "pw3")
	never.exact("GET", "k")
	never.exact("AUTH", "default", "x")
	never.exact("AUTH", "default", "pw3")
	never.exact("GET", "k")
	b.exact("GET", "k")
	b.exact("CONFIG", "GET", "requirepass") // shown, as Redis does
}

// TestAuthGoRedis: go-redis authenticates with Username/Password and with
// Password alone; a wrong password or user fails the connection with
// WRONGPASS.
func TestAuthGoRedis(t *testing.T) {
	ts := startServer(t, Config{RequirePass: "s3cret"})
	ctx := context.Background()
	for _, o := range []redis.Options{{Password: "s3cret"}, {Username: "default", Password: "s3cret"}} {
		o.Addr = ts.addr
		rdb := redis.NewClient(&o)
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Errorf("user %q: SET: %v", o.Username, err)
		}
		rdb.Close()
	}
	for _, o := range []redis.Options{{Password: "nope"}, {Username: "bob", Password: "s3cret"}, {}} {
		o.Addr, o.MaxRetries = ts.addr, -1
		rdb := redis.NewClient(&o)
		err := rdb.Get(ctx, "k").Err()
		want := "WRONGPASS invalid username-password pair or user is disabled."
		if o.Password == "" {
			want = "NOAUTH Authentication required."
		}
		if err == nil || err.Error() != want {
			t.Errorf("user %q password %q: GET: %v, want %s", o.Username, o.Password, err, want)
		}
		rdb.Close()
	}
}

// TestAuthRedactedInMonitorAndSlowlog: passwords in AUTH, HELLO AUTH and
// CONFIG SET requirepass show as "(redacted)" in MONITOR and SLOWLOG, as
// Redis shows them; the password itself never appears.
func TestAuthRedactedInMonitorAndSlowlog(t *testing.T) {
	ts := startServer(t, Config{})
	mon, c := resptest.Dial(t, ts.addr), resptest.Dial(t, ts.addr)
	do(t, mon, "+OK\r\n", "MONITOR")
	do(t, c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "0")
	c.Do("AUTH", "hunter2-a")
	c.Do("AUTH", "default", "hunter2-b")
	c.Do("HELLO", "2", "AUTH", "default", "hunter2-c", "SETNAME", "n")
	do(t, c, "+OK\r\n", "CONFIG", "SET", "requirepass", "hunter2-d")
	c.Do("AUTH", "hunter2-d")
	do(t, c, "+PONG\r\n", "PING") // the last line MONITOR should show
	var lines []string
	mon.SetTimeout(5 * time.Second)
	for !strings.Contains(strings.Join(lines, ""), `"PING"`) {
		line, err := mon.TryReadReply()
		if err != nil {
			t.Fatalf("MONITOR: %v after %q", err, lines)
		}
		lines = append(lines, string(line))
	}
	want := []string{`"AUTH" "(redacted)"`, `"AUTH" "(redacted)" "(redacted)"`,
		`"HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "n"`, `"AUTH" "(redacted)"`, `"PING"`}
	if len(lines) != len(want) {
		t.Fatalf("MONITOR lines %q, want %d lines ending in %q", lines, len(want), want)
	}
	for i, l := range lines {
		if !strings.HasSuffix(l, "] "+want[i]+"\r\n") {
			t.Errorf("MONITOR line %q, want it to end in %s", l, want[i])
		}
	}
	slow := c.Do("SLOWLOG", "GET", "100")
	if bytes.Contains(slow, []byte("hunter2")) || bytes.Count(slow, []byte("(redacted)")) != 7 {
		t.Errorf("SLOWLOG shows a password or misses a redaction (want 7):\n%s", resptest.Format(slow))
	}
}
