package resp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/resp/resptest"
)

func do(t *testing.T, c *resptest.Conn, want string, args ...string) {
	t.Helper()
	if got := c.Do(args...); string(got) != want {
		t.Fatalf("%q: got %q, want %q", args, got, want)
	}
}

func TestAuth(t *testing.T) {
	ts := startServer(t, Config{RequirePass: "s3cret"})
	c := resptest.Dial(t, ts.addr)
	do(t, c, "-NOAUTH Authentication required.\r\n", "GET", "a")
	do(t, c, "-ERR unknown command 'FOO', with args beginning with: 'x' \r\n", "FOO", "x") // before NOAUTH, as in Redis
	do(t, c, "-NOAUTH Authentication required.\r\n", "MULTI")
	do(t, c, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "nope")
	do(t, c, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "bob", "s3cret")
	do(t, c, "-NOPROTO unsupported protocol version\r\n", "HELLO", "3", "AUTH", "default", "s3cret")
	// HELLO 3 AUTH authenticates before it is refused, as in Redis.
	do(t, c, "$0\r\n\r\n", "CLIENT", "LIST", "ID", "0")
	do(t, c, "+RESET\r\n", "RESET")
	do(t, c, "-NOAUTH Authentication required.\r\n", "GET", "a")
	do(t, c, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n", "HELLO", "2")
	if got := c.Do("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "me"); !bytes.HasPrefix(got, []byte("*14\r\n$6\r\nserver\r\n")) {
		t.Fatalf("HELLO 2 AUTH: %q", got)
	}
	do(t, c, "$2\r\nme\r\n", "CLIENT", "GETNAME")
	do(t, c, "+RESET\r\n", "RESET")
	do(t, c, "+OK\r\n", "AUTH", "default", "s3cret")
	do(t, c, "$-1\r\n", "GET", "a")
	do(t, c, "+OK\r\n", "AUTH", "s3cret")
	// EXEC refused for NOAUTH aborts with Redis's EXECABORT text.
	c2 := resptest.Dial(t, ts.addr)
	do(t, c2, "-EXECABORT Transaction discarded because of: NOAUTH Authentication required.\r\n", "EXEC")
	do(t, c2, "+OK\r\n", "QUIT")

	// go-redis with a password.
	rdb := redis.NewClient(&redis.Options{Addr: ts.addr, Password: "s3cret"})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	bad := redis.NewClient(&redis.Options{Addr: ts.addr, Password: "wrong", MaxRetries: -1})
	defer bad.Close()
	if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
	// CONFIG SET requirepass applies to new connections.
	do(t, c, "+OK\r\n", "CONFIG", "SET", "requirepass", "")
	c3 := resptest.Dial(t, ts.addr)
	do(t, c3, "$1\r\nv\r\n", "GET", "k")
}

// infoFields parses INFO's reply into its k:v fields, checking every line.
func infoFields(t *testing.T, reply []byte) map[string]string {
	t.Helper()
	body := reply[bytes.Index(reply, []byte("\r\n"))+2 : len(reply)-2]
	m := map[string]string{}
	for _, line := range strings.Split(string(body), "\r\n") {
		if line == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" {
			t.Fatalf("INFO line %q is not k:v", line)
		}
		m[k] = v
	}
	return m
}

func TestInfo(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	f := infoFields(t, c.Do("INFO"))
	for _, k := range []string{"redis_version", "connected_clients", "used_memory", "total_commands_processed", "role"} {
		if f[k] == "" {
			t.Errorf("INFO has no %s", k)
		}
	}
	if _, ok := f["db0"]; ok {
		t.Fatalf("db0 in an empty keyspace")
	}
	do(t, c, "+OK\r\n", "SET", "a", "1")
	c.Do("SELECT", "3")
	do(t, c, "+OK\r\n", "SET", "b", "1")
	f = infoFields(t, c.Do("INFO", "keyspace"))
	if f["db0"] != "keys=1,expires=0,avg_ttl=0" || f["db3"] != "keys=1,expires=0,avg_ttl=0" || len(f) != 2 {
		t.Fatalf("INFO keyspace: %v", f)
	}
	f = infoFields(t, c.Do("INFO", "commandstats"))
	if !strings.HasPrefix(f["cmdstat_set"], "calls=2,") {
		t.Fatalf("commandstats: %v", f)
	}
	do(t, c, "+OK\r\n", "CONFIG", "RESETSTAT")
	f = infoFields(t, c.Do("INFO", "commandstats"))
	if _, ok := f["cmdstat_set"]; ok {
		t.Fatalf("commandstats after RESETSTAT: %v", f)
	}
	for _, sec := range []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "all", "everything", "default", "STRATA"} {
		infoFields(t, c.Do("INFO", sec))
	}
	// The strata section has the engine's figures: two durable SETs went
	// to the WAL, each acknowledged object is one group of batches.
	f = infoFields(t, c.Do("INFO", "strata"))
	objects, _ := strconv.Atoi(f["wal_objects"])
	batches, _ := strconv.Atoi(f["wal_batches"])
	perObject, _ := strconv.ParseFloat(f["wal_object_batches_avg"], 64)
	puts, _ := strconv.Atoi(f["wal_put_seconds_count"])
	if objects < 1 || batches < 2 || perObject < 1 || puts != objects || f["lsm_last_seq"] == "" {
		t.Fatalf("INFO strata: %v", f)
	}
}

func TestCommandIntrospection(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	n, _ := strconv.Atoi(strings.Trim(string(c.Do("COMMAND", "COUNT")), ":\r\n"))
	if n != len(commandList) || n < 20 {
		t.Fatalf("COMMAND COUNT %d", n)
	}
	got := string(c.Do("COMMAND", "INFO", "get", "nosuch"))
	if !strings.HasPrefix(got, "*2\r\n*10\r\n$3\r\nget\r\n:2\r\n") || !strings.HasSuffix(got, "$-1\r\n") {
		t.Fatalf("COMMAND INFO: %q", got)
	}
	got = string(c.Do("COMMAND", "DOCS", "set"))
	if !strings.HasPrefix(got, "*2\r\n$3\r\nset\r\n") {
		t.Fatalf("COMMAND DOCS: %q", got)
	}
	do(t, c, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "COMMAND", "GETKEYS", "WATCH", "a", "b")
	if got := c.Do("COMMAND"); !bytes.HasPrefix(got, []byte(fmt.Sprintf("*%d\r\n", n))) {
		t.Fatalf("COMMAND: %.40q", got)
	}
	do(t, c, "+OK\r\n", "SET", "n", "123")
	do(t, c, "$3\r\nint\r\n", "OBJECT", "ENCODING", "n")
	if got := c.Do("MEMORY", "USAGE", "n"); got[0] != ':' {
		t.Fatalf("MEMORY USAGE: %q", got)
	}
}

func TestSlowlog(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	do(t, c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "0")
	do(t, c, "+OK\r\n", "SLOWLOG", "RESET")
	do(t, c, "+OK\r\n", "CLIENT", "SETNAME", "slowpoke")
	do(t, c, "+OK\r\n", "SET", "a", strings.Repeat("x", 200))
	c.Do("GET", "a")
	if got := string(c.Do("SLOWLOG", "LEN")); got != ":4\r\n" { // SLOWLOG RESET, CLIENT, SET, GET
		t.Fatalf("SLOWLOG LEN %q", got)
	}
	got := c.Do("SLOWLOG", "GET", "2")
	// Newest first: SLOWLOG LEN, then GET a.
	if !bytes.HasPrefix(got, []byte("*2\r\n*6\r\n")) || !bytes.Contains(got, []byte("$7\r\nSLOWLOG\r\n$3\r\nLEN\r\n")) ||
		!bytes.Contains(got, []byte("$3\r\nGET\r\n$1\r\na\r\n")) || !bytes.Contains(got, []byte("$8\r\nslowpoke\r\n")) {
		t.Fatalf("SLOWLOG GET 2: %q", got)
	}
	got = c.Do("SLOWLOG", "GET", "-1")
	if !bytes.Contains(got, []byte("... (72 more bytes)")) {
		t.Fatalf("long argument not cut: %q", got)
	}
	do(t, c, "+OK\r\n", "SLOWLOG", "RESET")
	do(t, c, ":1\r\n", "SLOWLOG", "LEN") // the RESET itself
	do(t, c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "-1")
	do(t, c, "+OK\r\n", "SLOWLOG", "RESET")
	c.Do("GET", "a")
	do(t, c, ":0\r\n", "SLOWLOG", "LEN")
}

func TestMonitor(t *testing.T) {
	ts := startServer(t, Config{})
	m := resptest.Dial(t, ts.addr)
	do(t, m, "+OK\r\n", "MONITOR")
	c := resptest.Dial(t, ts.addr)
	c.Do("SELECT", "2")
	c.Do("SET", "k", "a \"q\"\n")
	c.Do("NOSUCH") // refused: not shown, as in Redis
	c.Do("CONFIG", "GET", "maxclients")
	c.Do("MULTI")
	c.Do("GET", "k")
	c.Do("EXEC")
	var lines []string
	for range 5 {
		lines = append(lines, string(m.ReadReply()))
	}
	for i, want := range []string{`] "SELECT" "2"` + "\r\n", `] "SET" "k" "a \"q\"\n"` + "\r\n", `] "MULTI"` + "\r\n", `] "GET" "k"` + "\r\n", `] "EXEC"` + "\r\n"} {
		if !strings.HasPrefix(lines[i], "+") || !strings.HasSuffix(lines[i], want) {
			t.Fatalf("monitor line %d: %q, want suffix %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[1], " [2 127.0.0.1:") {
		t.Fatalf("monitor line without db and address: %q", lines[1])
	}
}

func TestClientCommands(t *testing.T) {
	ts := startServer(t, Config{})
	a := resptest.Dial(t, ts.addr)
	b := resptest.Dial(t, ts.addr)
	do(t, a, "+OK\r\n", "CLIENT", "SETNAME", "alice")
	idB := strings.Trim(string(b.Do("CLIENT", "ID")), ":\r\n")
	list := string(a.Do("CLIENT", "LIST"))
	if strings.Count(list, " addr=") != 2 || !strings.Contains(list, "name=alice") || !strings.Contains(list, "id="+idB+" ") {
		t.Fatalf("CLIENT LIST: %q", list)
	}
	info := string(a.Do("CLIENT", "INFO"))
	if !strings.Contains(info, "name=alice") || !strings.Contains(info, "cmd=client") {
		t.Fatalf("CLIENT INFO: %q", info)
	}
	do(t, a, ":1\r\n", "CLIENT", "KILL", "ID", idB)
	if _, err := b.TryDo("PING"); err == nil {
		t.Fatal("killed client still served")
	}
	do(t, a, ":0\r\n", "CLIENT", "KILL", "ID", idB)
	// Killing oneself replies first.
	do(t, a, "+OK\r\n", "CLIENT", "KILL", strings.Split(strings.Split(info, "addr=")[1], " ")[0])
	if _, err := a.TryReadReply(); err == nil {
		t.Fatal("self-killed client still open")
	}
}

func TestSaveAndFlush(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	do(t, c, "+OK\r\n", "SET", "a", "1")
	before := c.Do("LASTSAVE")
	do(t, c, "+OK\r\n", "SAVE")
	do(t, c, "+Background saving started\r\n", "BGSAVE")
	if after := c.Do("LASTSAVE"); bytes.Compare(after, before) < 0 {
		t.Fatalf("LASTSAVE went back: %q %q", before, after)
	}
	ts.restart()
	c = resptest.Dial(t, ts.addr)
	do(t, c, "$1\r\n1\r\n", "GET", "a")
	do(t, c, "+OK\r\n", "FLUSHALL", "ASYNC")
	ts.restart()
	c = resptest.Dial(t, ts.addr)
	do(t, c, ":0\r\n", "DBSIZE")
}

// TestWatchOtherClient: a watched key changed by another client makes EXEC
// reply a null array and run nothing; untouched, EXEC runs.
func TestWatchOtherClient(t *testing.T) {
	ts := startServer(t, Config{})
	a := resptest.Dial(t, ts.addr)
	b := resptest.Dial(t, ts.addr)
	do(t, a, "+OK\r\n", "WATCH", "k")
	do(t, b, "+OK\r\n", "SET", "k", "b")
	do(t, a, "+OK\r\n", "MULTI")
	do(t, a, "+QUEUED\r\n", "SET", "k", "a")
	do(t, a, "*-1\r\n", "EXEC")
	do(t, a, "$1\r\nb\r\n", "GET", "k")
	// Untouched (another key written). Keys sharing a lock stripe abort
	// each other's watches (keyspace.Stamp), so the other key is one that
	// does not share k's in this process.
	other := keyWhere(t, "other", func(o string) bool { return !ts.srv.store.SharesStamp(0, []byte("k"), 0, []byte(o)) })
	do(t, a, "+OK\r\n", "WATCH", "k")
	do(t, b, "+OK\r\n", "SET", other, "b")
	do(t, a, "+OK\r\n", "MULTI")
	do(t, a, "+QUEUED\r\n", "SET", "k", "a")
	do(t, a, "*1\r\n+OK\r\n", "EXEC")
	// Changed by another client inside its own transaction.
	do(t, a, "+OK\r\n", "WATCH", "k")
	b.Do("MULTI")
	b.Do("SET", "k", "c")
	do(t, b, "*1\r\n+OK\r\n", "EXEC")
	a.Do("MULTI")
	a.Do("GET", "k")
	do(t, a, "*-1\r\n", "EXEC")
	// Flushed by another client.
	do(t, a, "+OK\r\n", "WATCH", "k")
	do(t, b, "+OK\r\n", "FLUSHDB")
	a.Do("MULTI")
	a.Do("GET", "k")
	do(t, a, "*-1\r\n", "EXEC")
	// Watched in db 0, written in db 1: no abort (a key whose stripes in
	// the two databases differ, as above).
	w := keyWhere(t, "w", func(w string) bool { return !ts.srv.store.SharesStamp(0, []byte(w), 1, []byte(w)) })
	do(t, a, "+OK\r\n", "WATCH", w)
	b.Do("SELECT", "1")
	do(t, b, "+OK\r\n", "SET", w, "x")
	a.Do("MULTI")
	a.Do("GET", w)
	do(t, a, "*1\r\n$-1\r\n", "EXEC")
}

// keyWhere returns the first of base, base1, base2, ... that ok accepts.
func keyWhere(t *testing.T, base string, ok func(string) bool) string {
	t.Helper()
	for i := range 100 {
		k := base
		if i > 0 {
			k = fmt.Sprint(base, i)
		}
		if ok(k) {
			return k
		}
	}
	t.Fatalf("no key from %q up satisfies the test's condition", base)
	return ""
}

// TestWatchRace: check-and-set increments with WATCH from many clients
// never lose an update: every EXEC that succeeded is counted.
func TestWatchRace(t *testing.T) {
	ts := startServer(t, Config{AppendFsync: "everysec"})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: ts.addr, PoolSize: 16})
	defer rdb.Close()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				err := rdb.Watch(ctx, func(tx *redis.Tx) error {
					n, err := tx.Get(ctx, "ctr").Int()
					if err != nil && err != redis.Nil {
						return err
					}
					_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Set(ctx, "ctr", n+1, 0)
						return nil
					})
					return err
				}, "ctr")
				if err == nil {
					ok.Add(1)
				} else if err != redis.TxFailedErr {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n, _ := rdb.Get(ctx, "ctr").Int64()
	if n != ok.Load() || n == 0 {
		t.Fatalf("counter %d, successful transactions %d", n, ok.Load())
	}
}

// TestExecAtomic: readers never see half of a transaction.
func TestExecAtomic(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: ts.addr, PoolSize: 8})
	defer rdb.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				vals, err := rdb.MGet(ctx, "a", "b").Result()
				if err != nil {
					// MGET may not be in the table yet (another group):
					// read both keys in one MULTI instead.
					var ga, gb *redis.StringCmd
					_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
						ga, gb = p.Get(ctx, "a"), p.Get(ctx, "b")
						return nil
					})
					if err != nil && err != redis.Nil {
						t.Error(err)
						return
					}
					vals = []any{ga.Val(), gb.Val()}
				}
				if fmt.Sprint(vals[0]) != fmt.Sprint(vals[1]) {
					t.Errorf("partial transaction seen: a=%v b=%v", vals[0], vals[1])
					return
				}
				reads.Add(1)
			}
		}()
	}
	for i := range 200 {
		v := strconv.Itoa(i)
		if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "a", v, 0)
			p.Set(ctx, "b", v, 0)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if reads.Load() == 0 {
		t.Fatal("no reads")
	}
	// EXEC's writes survive a restart right after it.
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 20 {
			p.Set(ctx, "t"+strconv.Itoa(i), i, 0)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ts.restart()
	c := resptest.Dial(t, ts.addr)
	for i := range 20 {
		do(t, c, fmt.Sprintf("$%d\r\n%d\r\n", len(strconv.Itoa(i)), i), "GET", "t"+strconv.Itoa(i))
	}
}

// TestExecRuntimeError: WRONGTYPE inside EXEC fails that command only.
func TestExecRuntimeError(t *testing.T) {
	ts := startServer(t, Config{})
	if _, err := ts.srv.store.LPush(context.Background(), 0, []byte("list"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	c := resptest.Dial(t, ts.addr)
	c.Do("MULTI")
	c.Do("SET", "a", "1")
	c.Do("GET", "list")
	c.Do("SET", "b", "2")
	do(t, c, "*3\r\n+OK\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n+OK\r\n", "EXEC")
	do(t, c, "$1\r\n2\r\n", "GET", "b")
}

// startHeldWrite starts a server on a gateBucket, makes one durable write,
// then closes the gate and sends SET a 1, whose WAL upload the gate holds.
func startHeldWrite(t *testing.T) (*testServer, *gateBucket, *resptest.Conn) {
	t.Helper()
	gate := &gateBucket{Bucket: blob.NewMemBucket()}
	ts := startServer(t, Config{}, gate)
	t.Cleanup(gate.release)
	c := resptest.Dial(t, ts.addr)
	do(t, c, "+OK\r\n", "SET", "warm", "up")
	gate.hold()
	c.SendRaw(resptest.AppendCommand(nil, "SET", "a", "1"))
	return ts, gate, c
}

// gateBucket holds every Upload while closed, to hold WAL flushes.
type gateBucket struct {
	objstore.Bucket
	mu     sync.Mutex
	closed bool
	open   chan struct{}
}

func (g *gateBucket) hold() {
	g.mu.Lock()
	g.closed, g.open = true, make(chan struct{})
	g.mu.Unlock()
}

func (g *gateBucket) release() {
	g.mu.Lock()
	if g.closed {
		g.closed = false
		close(g.open)
	}
	g.mu.Unlock()
}

func (g *gateBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	g.mu.Lock()
	closed, open := g.closed, g.open
	g.mu.Unlock()
	if closed {
		select {
		case <-open:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.Bucket.Upload(ctx, name, r, opts...)
}

// TestDurableReply: under appendfsync always a write's reply waits for the
// WAL upload; under everysec it does not.
func TestDurableReply(t *testing.T) {
	ts, gate, c := startHeldWrite(t)
	c.SetTimeout(300 * time.Millisecond)
	if got, err := c.TryReadReply(); err == nil {
		t.Fatalf("reply before the WAL upload: %q", got)
	}
	// A read from another client is served meanwhile.
	r := resptest.Dial(t, ts.addr)
	do(t, r, "$2\r\nup\r\n", "GET", "warm")
	gate.release()
	c.SetTimeout(5 * time.Second)
	expectReply(t, c, "+OK\r\n") // once the upload went through
	do(t, r, "$1\r\n1\r\n", "GET", "a")

	// everysec: at once, even with uploads held.
	do(t, r, "+OK\r\n", "CONFIG", "SET", "appendfsync", "everysec")
	gate.hold()
	e := resptest.Dial(t, ts.addr)
	e.SetTimeout(2 * time.Second)
	start := time.Now()
	do(t, e, "+OK\r\n", "SET", "b", "2")
	if d := time.Since(start); d > time.Second {
		t.Fatalf("everysec reply took %v", d)
	}
	gate.release()
}

// TestFencedWriteFails: when the durable wait fails (another writer took
// the bucket), the client gets an error, never +OK.
func TestFencedWriteFails(t *testing.T) {
	bkt := blob.NewMemBucket()
	ts := startServer(t, Config{}, bkt)
	c := resptest.Dial(t, ts.addr)
	do(t, c, "+OK\r\n", "SET", "a", "1")
	ctx := context.Background()
	db2, err := lsm.Open(ctx, bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for i := range 3 {
		got := string(c.Do("SET", "a", strconv.Itoa(i)))
		if got == "+OK\r\n" {
			t.Fatalf("write acknowledged after fencing: %q", got)
		}
		if !strings.HasPrefix(got, "-ERR strata: fenced") {
			t.Fatalf("fenced write: %q", got)
		}
	}
	// A pipeline: the read before the write keeps its reply.
	c.SendRaw(append(resptest.AppendCommand(nil, "PING"), resptest.AppendCommand(nil, "SET", "a", "x")...))
	expectReply(t, c, "+PONG\r\n")
	if got := c.ReadReply(); !bytes.HasPrefix(got, []byte("-ERR strata: fenced")) {
		t.Fatalf("pipelined fenced write: %q", got)
	}
	expectFencedOwnerSees(t, ts, db2, "a", "1")
}

// expectFencedOwnerSees checks that db2, which fenced ts's server, reads
// want at key, then closes the fenced server.
func expectFencedOwnerSees(t *testing.T, ts *testServer, db2 *lsm.DB, key, want string) {
	t.Helper()
	ctx := context.Background()
	st, err := keyspace.Open(ctx, db2, keyspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := st.Get(ctx, 0, []byte(key)); string(v) != want {
		t.Fatalf("new owner sees %q at %s, want %q", v, key, want)
	}
	ts.srv.Close(ctx)
	ts.db.Close()
	ts.srv = nil
}

// TestExecStoreErrorAppliesNothing: when the store fails a command inside
// EXEC (here a read of an SST the bucket will not serve), no command of the
// transaction is applied and EXEC answers the error. Redis applies the
// other commands of a transaction after a command's own error (WRONGTYPE),
// and that stays so; but a block half applied because the store could not
// be read is one the client can neither retry nor trust (found by the
// chaos outage run: a MULTI whose ZADD failed kept its SET and INCR).
func TestExecStoreErrorAppliesNothing(t *testing.T) {
	var (
		fb *blob.FaultBucket
		ts *testServer
		c  *resptest.Conn
	)
	// The setup needs z's data block uncached. A lookup of another key (the
	// store's open reads a system row per database, SET reads s) can pass
	// the SST's bloom filter falsely and load the block: about 1 run in
	// 100, as z's element keys hold its version, new each run. Then the
	// setup is repeated on a fresh bucket.
	for attempt := 0; ; attempt++ {
		fb = blob.NewFaultBucket(blob.NewMemBucket(), blob.FaultConfig{})
		ts = startServer(t, Config{}, fb)
		c = resptest.Dial(t, ts.addr)
		do(t, c, ":1\r\n", "ZADD", "z", "1", "m1")
		if err := ts.db.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		ts.restart() // z is only in an SST now, and no cache holds it
		c = resptest.Dial(t, ts.addr)
		do(t, c, "+OK\r\n", "SET", "s", "old") // in the memtable
		if ts.db.Metrics().BlockCache.Misses == 0 {
			break
		}
		if attempt == 10 {
			t.Fatal("every setup loaded z's data block before the faults")
		}
		ts.close()
	}
	fb.SetConfig(blob.FaultConfig{ErrorRate: map[string]float64{objstore.OpGet: 1, objstore.OpGetRange: 1}})

	do(t, c, "+OK\r\n", "MULTI")
	do(t, c, "+QUEUED\r\n", "SET", "s", "new")
	do(t, c, "+QUEUED\r\n", "INCR", "n")
	do(t, c, "+QUEUED\r\n", "ZADD", "z", "2", "m2")
	got := string(c.Do("EXEC"))
	if !strings.HasPrefix(got, "-ERR ") {
		t.Fatalf("EXEC with a failed store read = %q, want an error reply", got)
	}
	if fb.Injected() == 0 {
		t.Fatal("no fault was injected: the test read nothing from the bucket")
	}
	fb.SetConfig(blob.FaultConfig{})
	do(t, c, "$3\r\nold\r\n", "GET", "s")
	do(t, c, "$-1\r\n", "GET", "n")
	do(t, c, "*2\r\n$2\r\nm1\r\n$1\r\n1\r\n", "ZRANGE", "z", "0", "-1", "WITHSCORES")

	// A command's own error inside EXEC keeps Redis's behaviour: the
	// others are applied.
	do(t, c, "+OK\r\n", "MULTI")
	do(t, c, "+QUEUED\r\n", "SET", "s", "new")
	do(t, c, "+QUEUED\r\n", "INCR", "z")
	do(t, c, "*2\r\n+OK\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "EXEC")
	do(t, c, "$3\r\nnew\r\n", "GET", "s")
}

// TestGracefulClose: Close lets in-flight pipelines finish and reply,
// disconnects everyone, and a restart keeps every acknowledged write.
func TestGracefulClose(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: ts.addr, PoolSize: 8, MaxRetries: -1})
	var acked sync.Map
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				k := fmt.Sprintf("w%d-%d", w, i)
				if err := rdb.Set(ctx, k, k, 0).Err(); err != nil {
					return
				}
				acked.Store(k, true)
			}
		}()
	}
	idle := resptest.Dial(t, ts.addr)
	time.Sleep(200 * time.Millisecond)
	addr := ts.addr
	ts.close()
	wg.Wait()
	rdb.Close()
	if _, err := idle.TryReadReply(); err == nil {
		t.Fatal("idle client not disconnected")
	}
	ts.open(addr)
	c := resptest.Dial(t, ts.addr)
	n := 0
	acked.Range(func(k, _ any) bool {
		key := k.(string)
		do(t, c, fmt.Sprintf("$%d\r\n%s\r\n", len(key), key), "GET", key)
		n++
		return true
	})
	if n == 0 {
		t.Fatal("nothing acknowledged")
	}
}

// TestRequestsMarkPacerBusy: a client's requests tell the server's Pacer
// the foreground is busy, which is what makes background builds step aside
// (sst.Pacer); a connection that has sent nothing does not.
func TestRequestsMarkPacerBusy(t *testing.T) {
	p := new(sst.Pacer)
	ts := startServer(t, Config{Pacer: p})
	c := resptest.Dial(t, ts.addr)
	if p.Busy(time.Now()) {
		t.Fatal("the Pacer is busy before any request")
	}
	do(t, c, "+PONG\r\n", "PING")
	if !p.Busy(time.Now()) {
		t.Fatal("the Pacer is not busy right after a request")
	}
}
