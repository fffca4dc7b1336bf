package resptest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func startTwo(t *testing.T) (string, string) {
	t.Helper()
	return StartRedis(t), StartRedis(t)
}

// fakeTB records failures instead of failing the real test. Fatal calls
// end the goroutine, as testing.T does: run the code under test in record.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	errs   []string
	fatal  bool
	failed bool
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
	f.failed = true
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.fatal = true
	runtime.Goexit()
}

func (f *fakeTB) Error(args ...any) { f.Errorf("%s", fmt.Sprint(args...)) }
func (f *fakeTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }
func (f *fakeTB) Fail()             { f.Errorf("Fail") }
func (f *fakeTB) FailNow()          { f.Fatalf("FailNow") }
func (f *fakeTB) Failed() bool      { return f.failed }

func record(t *testing.T, fn func(testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

const agreeScript = `
# every mode, against two redis-servers that must agree
SET k "a\r\nb"
GET k
STRLEN k
SADD s a b c d e f g h
unordered SMEMBERS s
len SRANDMEMBER s 3
SADD s2 x y z
len SPOP s2
len SPOP s2 5
DEL s2
HSET h f1 v1 f2 v2 f3 v3
unordered-pairs HGETALL h
MSET k1 1 k2 2 k3 3
unordered KEYS k*
scan SCAN 0 COUNT 1000
scan SCAN 0 MATCH k? COUNT 1000
SET ttl x PX 100000
typeonly PTTL ttl
noreply-compare TIME
SET gone x PX 50
sleep 120
EXISTS gone
GET "\x00\xff"
SET "\x00\xff" "\x01\x02"
GET "\x00\xff"
INCR k
HELLO 3
unordered HGETALL h
unordered SMEMBERS s
HELLO 2
`

func TestTwoRedisAgree(t *testing.T) {
	a, b := startTwo(t)
	RunScriptString(t, agreeScript, a, b)
}

// The same script against a redis-server configured differently must
// report the line whose reply differs, the command and both replies.
func TestMismatchDetected(t *testing.T) {
	a := StartRedis(t)
	b := StartRedis(t, "--set-max-intset-entries", "1")
	script := "SADD s 1 2 3\nOBJECT ENCODING s\nSCARD s\n"
	f := record(t, func(tb testing.TB) { RunScriptString(tb, script, a, b) })
	if f.fatal || len(f.errs) != 1 {
		t.Fatalf("want one error, got fatal=%v %q", f.fatal, f.errs)
	}
	msg := f.errs[0]
	for _, want := range []string{"inline script line 2: OBJECT ENCODING s",
		`strata: "intset"`, `redis:  "`, `"$6\r\nintset\r\n"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	t.Logf("the message:\n%s", msg)
}

// A server that answers +OK to everything differs from Redis on every
// read; the script stops after maxMismatches.
func TestMismatchAgainstFakeServer(t *testing.T) {
	fake := serveFake(t, func(cmd []byte) []byte { return []byte("+OK\r\n") })
	redis := StartRedis(t)
	script := "SET k v\n" + strings.Repeat("GET k\n", 10)
	f := record(t, func(tb testing.TB) { RunScriptString(tb, script, fake, redis) })
	if f.fatal || len(f.errs) != maxMismatches+1 {
		t.Fatalf("want %d errors, got fatal=%v %q", maxMismatches+1, f.fatal, f.errs)
	}
	if !strings.Contains(f.errs[0], "line 2: GET k") || !strings.Contains(f.errs[0], `redis:  "v"`) {
		t.Errorf("first error: %s", f.errs[0])
	}
	if !strings.Contains(f.errs[maxMismatches], "stopped after") {
		t.Errorf("last error: %s", f.errs[maxMismatches])
	}
}

// A server that hangs up mid-script ends the script with its location.
func TestServerClosesConnection(t *testing.T) {
	n := 0
	fake := serveFake(t, func(cmd []byte) []byte {
		if n++; n > 2 {
			return nil
		}
		return []byte("+OK\r\n")
	})
	redis := StartRedis(t)
	f := record(t, func(tb testing.TB) { RunScriptString(tb, "SET a b\nSET c d\nSET e f\n", fake, redis) })
	if !f.fatal || len(f.errs) != 1 || !strings.Contains(f.errs[0], "line 2: SET c d") ||
		!strings.Contains(f.errs[0], "EOF") {
		t.Fatalf("got fatal=%v %q", f.fatal, f.errs)
	}
}

func TestScriptSyntaxErrorNamesLine(t *testing.T) {
	f := record(t, func(tb testing.TB) { RunScriptString(tb, "GET a\nGET \"b\n", "127.0.0.1:1", "127.0.0.1:1") })
	if !f.fatal || !strings.Contains(f.errs[0], "inline script line 2: unbalanced quotes") {
		t.Fatalf("got %q", f.errs)
	}
}

// serveFake serves one connection at a time, answering each command with
// reply(command frame); a nil reply closes the connection.
func serveFake(t *testing.T, reply func(cmd []byte) []byte) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			for {
				cmd, err := ReadFrame(r)
				if err != nil {
					break
				}
				out := reply(cmd)
				if out == nil {
					break
				}
				c.Write(out)
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}

func TestConnInlineAndPipelining(t *testing.T) {
	c := Dial(t, StartRedis(t))
	c.SendRaw([]byte("PING\r\nSET k \"a b\"\r\n"))
	c.SendRaw(AppendCommand(AppendCommand(nil, "GET", "k"), "ECHO", "x\r\ny"))
	for _, want := range []string{"+PONG\r\n", "+OK\r\n", "$3\r\na b\r\n", "$4\r\nx\r\ny\r\n"} {
		if got := c.ReadReply(); string(got) != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"GET", "missing"}, "$-1\r\n"},
		{[]string{"SET", "e", ""}, "+OK\r\n"},
		{[]string{"GET", "e"}, "$0\r\n\r\n"},
		{[]string{"GET"}, "-ERR wrong number of arguments for 'get' command\r\n"},
		{[]string{"BLPOP", "nolist", "0.01"}, "*-1\r\n"},
		{[]string{"HELLO", "3"}, ""},
		{[]string{"GET", "missing"}, "_\r\n"},
		{[]string{"SADD", "s", "1"}, ":1\r\n"},
		{[]string{"SMEMBERS", "s"}, "~1\r\n$1\r\n1\r\n"},
		{[]string{"ZADD", "z", "1.5", "m"}, ":1\r\n"},
		{[]string{"ZSCORE", "z", "m"}, ",1.5\r\n"},
	} {
		got := c.Do(tc.args...)
		if tc.want != "" && string(got) != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
	c.SendRaw([]byte("QUIT\r\n"))
	if got := c.ReadReply(); string(got) != "+OK\r\n" {
		t.Fatalf("QUIT: %q", got)
	}
	if got, err := c.TryReadReply(); !errors.Is(err, io.EOF) {
		t.Fatalf("after QUIT: %q, %v", got, err)
	}
}

func TestStartRedisArgs(t *testing.T) {
	c := Dial(t, StartRedis(t, "--databases", "2"))
	if got := string(c.Do("SELECT", "1")); got != "+OK\r\n" {
		t.Fatalf("SELECT 1: %q", got)
	}
	if got := string(c.Do("SELECT", "2")); got != "-ERR DB index is out of range\r\n" {
		t.Fatalf("SELECT 2: %q", got)
	}
	if got := string(c.Do("CONFIG", "GET", "save")); got != "*2\r\n$4\r\nsave\r\n$0\r\n\r\n" {
		t.Fatalf("persistence: %q", got)
	}
}

// The corpus in resp/testdata must hold against Redis itself: two
// redis-servers agree on every line.
func TestCorpusSelfConsistent(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	a, b := startTwo(t)
	for _, path := range files {
		// Not in parallel: scripts share the servers, FLUSHALL between them.
		t.Run(filepath.Base(path), func(t *testing.T) {
			RunScript(t, path, a, b)
		})
	}
}
