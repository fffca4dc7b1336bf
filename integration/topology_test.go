package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stratakv/strata/blob/blobtest"
)

// topologyPrefix is the bucket prefix of TestTopology.
const topologyPrefix = "topology"

// TestTopology runs the docker-compose topology (issue 6) as processes on
// this machine: MinIO, `strata server --compaction off` and `strata
// compactor` on one bucket. Clients keep writing while each process is
// stopped and started again in turn: the server (SIGTERM, then a new
// process on the same port), the compactor, and MinIO. Every acknowledged
// write must be there at the end, and again after a last server restart.
// STRATA_SOAK (a duration) lengthens each pause between restarts.
func TestTopology(t *testing.T) {
	if testing.Short() {
		t.Skip("MinIO, a server and a compactor process, each restarted under write load")
	}
	blobtest.RequireCommand(t, "redis-cli")
	pause := 2 * time.Second
	if os.Getenv("STRATA_SOAK") != "" {
		pause = soakDuration(t) / 4
	}
	topo := newTopology(t)

	seed := uint64(time.Now().UnixNano())
	const writers = 4
	t.Logf("seed %d: %d writers, %v between restarts", seed, writers, pause)
	ws := make([]*topoWriter, writers)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = newTopoWriter(t, i, topo.port, rand.New(rand.NewPCG(seed, uint64(i))))
		wg.Add(1)
		go func() { defer wg.Done(); ws[i].run(ctx) }()
	}
	stopWriters := sync.OnceFunc(func() { cancel(); wg.Wait() })
	defer func() { // on failure, without waiting out SET retries
		for _, w := range ws {
			w.abort.Store(true)
		}
		stopWriters()
	}()

	cliIncrs := 0
	phase := func(name string, restart func()) {
		t.Helper()
		time.Sleep(pause)
		before := ackedWrites(ws)
		start := time.Now()
		restart()
		took := time.Since(start)
		// Every writer must get writes through again, and the real
		// redis-cli too.
		waitProgress(t, ws, 90*time.Second)
		if got := strings.TrimSpace(redisCLI(t, topo.port, "", "INCR", "topology:cli:restarts")); got != strconv.Itoa(cliIncrs+1) {
			t.Fatalf("redis-cli INCR after restarting %s = %q, want %d", name, got, cliIncrs+1)
		}
		cliIncrs++
		t.Logf("restarted %s in %v; %d writes acknowledged before it, %d after recovery took %v",
			name, took.Round(time.Millisecond), before, ackedWrites(ws), time.Since(start).Round(time.Millisecond))
	}
	phase("the server", topo.restartServer)
	phase("the compactor", topo.restartCompactor)
	phase("MinIO", func() {
		topo.minio.Stop(t)
		// Down for longer than the bucket's own retries last (about 1.5s),
		// so the WAL's and the compactor's retry loops see it.
		time.Sleep(3 * time.Second)
		topo.minio.Start(t)
	})
	time.Sleep(pause)
	stopWriters()

	// The real redis-cli: a few commands typed on stdin.
	out := redisCLI(t, topo.port, "SET topology:cli:greeting \"hello world\"\nGET topology:cli:greeting\nGET topology:cli:restarts\n")
	if want := fmt.Sprintf("OK\nhello world\n%d\n", cliIncrs); out != want {
		t.Errorf("redis-cli: got %q, want %q", out, want)
	}
	rdb := newClient(t, topo.port)
	keys := 2 // the two topology:cli keys
	for _, w := range ws {
		keys += w.verify(t, rdb, "after the restarts")
	}
	if got := strings.TrimSpace(redisCLI(t, topo.port, "", "DBSIZE")); got != strconv.Itoa(keys) {
		t.Errorf("redis-cli DBSIZE = %s, want %d", got, keys)
	}
	var total topoCounts
	for _, w := range ws {
		total.add(w.counts)
	}
	t.Logf("acknowledged: %d SETs (%d retried after an error), %d INCRs, %d RPUSHes; "+
		"unacknowledged (errored, may or may not have applied): %d INCRs, %d RPUSHes",
		total.sets, total.setRetries, total.incrs, total.pushes, total.incrsLost, total.pushesLost)
	if total.sets == 0 || total.incrs == 0 || total.pushes == 0 {
		t.Errorf("some kind of write was never acknowledged: %+v", total)
	}

	// A last restart of the server: everything acknowledged is in the bucket.
	topo.restartServer()
	rdb = newClient(t, topo.port)
	for _, w := range ws {
		w.verify(t, rdb, "after a last server restart")
	}
	topo.finish()
}

// topology is the three processes of TestTopology.
type topology struct {
	t          *testing.T
	bin        string
	minio      *blobtest.MinIOServer
	port       int
	serverArgs []string
	compArgs   []string
	srv, comp  *child
	all        []*child // every process started, for their logs
}

func newTopology(t *testing.T) *topology {
	minio := blobtest.NewMinIO(t) // a MinIO of its own: it is restarted
	port := freePort(t)
	url := minio.URL(topologyPrefix)
	tp := &topology{
		t:     t,
		bin:   strataBinary(t),
		minio: minio,
		port:  port,
		// The smallest memtable and L0 trigger, so that even a slow
		// machine's load flushes SSTs and the compactors compact them.
		serverArgs: []string{"server", "--port", strconv.Itoa(port), "--bucket", url,
			"--compaction", "off", "--memtable-size", "64kb"},
		compArgs: []string{"compactor", "--bucket", url, "--poll-interval", "100ms", "--l0-trigger", "2",
			"--gc-interval", "2s", "--gc-min-age", "5s", "--target-sst-size", "1048576"},
	}
	tp.srv = tp.start("strata server", "ready to accept connections", tp.serverArgs)
	tp.comp = tp.start("strata compactor", `msg="compactor running"`, tp.compArgs)
	return tp
}

func (tp *topology) start(name, ready string, args []string) *child {
	tp.t.Helper()
	c := startChild(tp.t, fmt.Sprintf("%s #%d", name, len(tp.all)+1), tp.minio.Env(), tp.bin, args...)
	tp.all = append(tp.all, c)
	if err := c.waitFor(ready, 60*time.Second); err != nil {
		tp.t.Fatalf("%v\n%s", err, c.tail(20))
	}
	return c
}

// restartServer stops the server with SIGTERM, which must exit 0 after a
// clean engine close, and starts a new one on the same port.
func (tp *topology) restartServer() {
	tp.t.Helper()
	tp.stop(tp.srv)
	tp.srv = tp.start("strata server", "ready to accept connections", tp.serverArgs)
}

func (tp *topology) restartCompactor() {
	tp.t.Helper()
	tp.stop(tp.comp)
	tp.comp = tp.start("strata compactor", `msg="compactor running"`, tp.compArgs)
}

func (tp *topology) stop(c *child) {
	tp.t.Helper()
	if code, err := c.stop(60 * time.Second); err != nil || code != 0 {
		tp.t.Fatalf("%s: exit %d after SIGTERM, %v\n%s", c.name, code, err, c.tail(20))
	}
}

// finish stops both processes and checks every process's log: no errors,
// no races, a clean engine close per server, and compactions done.
func (tp *topology) finish() {
	t := tp.t
	t.Helper()
	tp.stop(tp.srv)
	tp.stop(tp.comp)
	compactions, warnings := 0, 0
	for _, c := range tp.all {
		out := c.out.String()
		if strings.HasPrefix(c.name, "strata server") && len(logLines(out, "engine closed; bye")) != 1 {
			t.Errorf("%s: no clean engine close logged\n%s", c.name, c.tail(20))
		}
		compactions += len(logLines(out, "compacted"))
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.Contains(line, "level=WARN"):
				warnings++
			case strings.Contains(line, "level=ERROR"), strings.Contains(line, "DATA RACE"):
				t.Errorf("%s: %s", c.name, line)
			}
		}
	}
	t.Logf("%d processes ran; %d compactions logged; %d warnings (expected while MinIO was down)",
		len(tp.all), compactions, warnings)
	if compactions == 0 {
		t.Errorf("the compactors logged no compactions")
	}
}

// topoCounts are a writer's writes by kind and outcome.
type topoCounts struct {
	sets, setRetries   int
	incrs, incrsLost   int64
	pushes, pushesLost int
}

func (c *topoCounts) add(o topoCounts) {
	c.sets += o.sets
	c.setRetries += o.setRetries
	c.incrs += o.incrs
	c.incrsLost += o.incrsLost
	c.pushes += o.pushes
	c.pushesLost += o.pushesLost
}

// topoWriter writes to keys of its own through one connection and records
// what was acknowledged. A command that errors may or may not have been
// applied (the connection can break after the server applied it): SETs are
// retried until acknowledged (idempotent, as no other SET to the key comes
// between), INCRs and RPUSHes are recorded as unacknowledged, and verify
// allows either outcome for them. go-redis' own retries are off, so an
// INCR is never sent twice behind our back.
type topoWriter struct {
	t     *testing.T
	id    int
	rdb   *redis.Client
	r     *rand.Rand
	acked atomic.Int64 // acknowledged writes, read by waitProgress
	abort atomic.Bool  // the test failed: stop retrying

	// Owned by run until it returns.
	n        int
	strs     map[string]string // key -> last acknowledged value
	lastIncr int64             // the last acknowledged INCR's reply
	pushes   []topoPush        // every RPUSH sent, in order
	counts   topoCounts
	err      error // a wrong reply, reported by verify
}

type topoPush struct {
	val   string
	acked bool
}

const topoKeys = 100 // string keys per writer

func newTopoWriter(t *testing.T, id, port int, r *rand.Rand) *topoWriter {
	o := clientOptions(port)
	o.MaxRetries = -1 // never resend: an INCR could apply twice
	o.PoolSize = 1
	// Writes wait while MinIO is down (the WAL retries its PUTs), for
	// longer than go-redis' default 3s.
	o.ReadTimeout = 60 * time.Second
	o.DialTimeout = 2 * time.Second
	rdb := newClientWith(t, o)
	return &topoWriter{t: t, id: id, rdb: rdb, r: r, strs: map[string]string{}}
}

func (w *topoWriter) key(kind string) string { return fmt.Sprintf("topo:w%d:%s", w.id, kind) }

// value is unique to this write, padded so the load fills memtables.
func (w *topoWriter) value() string {
	return fmt.Sprintf("w%d-%d-%s", w.id, w.n, strings.Repeat("x", w.r.IntN(300)))
}

func (w *topoWriter) run(ctx context.Context) {
	for ctx.Err() == nil && w.err == nil {
		w.n++
		var err error
		switch w.n % 3 {
		case 0:
			err = w.set()
		case 1:
			err = w.incr()
		case 2:
			err = w.push()
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond) // the server or MinIO is restarting
		}
	}
}

// set writes a new value to one of the writer's keys, retrying until it is
// acknowledged: retries stop only after a minute or when the test fails.
func (w *topoWriter) set() error {
	k := fmt.Sprintf("%s:%d", w.key("s"), w.r.IntN(topoKeys))
	v := w.value()
	deadline := time.Now().Add(time.Minute)
	for {
		err := w.rdb.Set(context.Background(), k, v, 0).Err()
		if err == nil {
			w.strs[k] = v
			w.counts.sets++
			w.acked.Add(1)
			return nil
		}
		if w.abort.Load() {
			return err
		}
		if time.Now().After(deadline) {
			w.err = fmt.Errorf("SET %s not acknowledged within a minute of retries: %v", k, err)
			return err
		}
		w.counts.setRetries++
		time.Sleep(50 * time.Millisecond)
	}
}

func (w *topoWriter) incr() error {
	n, err := w.rdb.Incr(context.Background(), w.key("c")).Result()
	if err != nil {
		w.counts.incrsLost++
		return err
	}
	// Unacknowledged INCRs before this one may have applied, or not.
	if lo, hi := w.counts.incrs+1, w.counts.incrs+w.counts.incrsLost+1; n < lo || n > hi || n <= w.lastIncr {
		w.err = fmt.Errorf("INCR %s = %d, want %d..%d and above the last reply %d", w.key("c"), n, lo, hi, w.lastIncr)
	}
	w.lastIncr = n
	w.counts.incrs++
	w.acked.Add(1)
	return nil
}

func (w *topoWriter) push() error {
	v := w.value()
	n, err := w.rdb.RPush(context.Background(), w.key("l"), v).Result()
	w.pushes = append(w.pushes, topoPush{val: v, acked: err == nil})
	if err != nil {
		w.counts.pushesLost++
		return err
	}
	if lo, hi := int64(w.counts.pushes+1), int64(len(w.pushes)); n < lo || n > hi {
		w.err = fmt.Errorf("RPUSH %s = %d, want %d..%d", w.key("l"), n, lo, hi)
	}
	w.counts.pushes++
	w.acked.Add(1)
	return nil
}

// verify reads back the writer's keys and returns how many exist.
// REQUIRES: run has returned.
func (w *topoWriter) verify(t *testing.T, rdb *redis.Client, when string) (keys int) {
	t.Helper()
	if w.err != nil {
		t.Errorf("writer %d: %v", w.id, w.err)
	}
	ctx := context.Background()
	for k, want := range w.strs {
		if got, err := rdb.Get(ctx, k).Result(); err != nil || got != want {
			t.Errorf("%s: GET %s = %.24q, %v; want the acknowledged %.24q", when, k, got, err, want)
		}
	}
	keys += len(w.strs)

	c, err := rdb.Get(ctx, w.key("c")).Int64()
	if errors.Is(err, redis.Nil) {
		c, err = 0, nil
	}
	if lo, hi := max(w.counts.incrs, w.lastIncr), w.counts.incrs+w.counts.incrsLost; err != nil || c < lo || c > hi {
		t.Errorf("%s: %s = %d, %v; want %d..%d (%d acknowledged INCRs, %d unacknowledged)",
			when, w.key("c"), c, err, lo, hi, w.counts.incrs, w.counts.incrsLost)
	}
	if c > 0 {
		keys++
	}

	l, err := rdb.LRange(ctx, w.key("l"), 0, -1).Result()
	if err != nil {
		t.Errorf("%s: LRANGE %s: %v", when, w.key("l"), err)
	} else if err := checkPushes(l, w.pushes); err != nil {
		t.Errorf("%s: list %s: %v", when, w.key("l"), err)
	}
	if len(l) > 0 {
		keys++
	}
	return keys
}

// checkPushes reports whether list is what the RPUSHes sent could have
// left: every acknowledged value, in the order sent, with any of the
// unacknowledged ones in their places, and nothing else.
func checkPushes(list []string, sent []topoPush) error {
	i := 0
	for _, p := range sent {
		switch {
		case i < len(list) && list[i] == p.val:
			i++
		case p.acked:
			return fmt.Errorf("acknowledged value %.24q missing or out of order at index %d of %d", p.val, i, len(list))
		}
	}
	if i < len(list) {
		return fmt.Errorf("element %d of %d, %.24q, was never sent there", i, len(list), list[i])
	}
	return nil
}

func ackedWrites(ws []*topoWriter) int64 {
	var n int64
	for _, w := range ws {
		n += w.acked.Load()
	}
	return n
}

// waitProgress waits until every writer has had a write acknowledged.
func waitProgress(t *testing.T, ws []*topoWriter, timeout time.Duration) {
	t.Helper()
	marks := make([]int64, len(ws))
	for i, w := range ws {
		marks[i] = w.acked.Load()
	}
	deadline := time.Now().Add(timeout)
	for i, w := range ws {
		for w.acked.Load() == marks[i] {
			if time.Now().After(deadline) {
				t.Fatalf("writer %d had no write acknowledged within %v", i, timeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestLocalClusterScript runs scripts/local-cluster.sh as a user would:
// start, the real redis-cli against the server it started, status, stop,
// and a second start that finds the data in MinIO's directory.
func TestLocalClusterScript(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MinIO, a server and a compactor through the script")
	}
	blobtest.RequireCommand(t, "redis-cli")
	blobtest.RequireCommand(t, "curl")
	bash := blobtest.RequireCommand(t, "bash")
	// Waits for the harness's MinIO build; the script then finds the binary
	// in $STRATA_MINIO_BIN or scripts/minio.sh's cache.
	blobtest.MinIO(t)
	script, err := filepath.Abs(filepath.Join("..", "scripts", "local-cluster.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port := freePort(t)
	env := append(os.Environ(), "STRATA_CLUSTER_DIR="+dir, "STRATA_PORT="+strconv.Itoa(port),
		"STRATA_BIN="+strataBinary(t))
	run := func(arg string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bash, script, arg)
		cmd.Env = env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("local-cluster.sh %s: %v in %v", arg, err, time.Since(start).Round(time.Millisecond))
		return string(out), err
	}
	t.Cleanup(func() {
		if out, err := run("stop"); err != nil {
			t.Errorf("cleanup: stop: %v\n%s", err, out)
		}
		killPidFiles(t, dir) // whatever stop left behind
	})

	for round := 1; round <= 2; round++ {
		out, err := run("start")
		if err != nil {
			t.Fatalf("start: %v\n%s", err, out)
		}
		if want := "connect:   redis-cli -p " + strconv.Itoa(port); !strings.Contains(out, want) {
			t.Errorf("start output lacks %q:\n%s", want, out)
		}
		if got := redisCLI(t, port, "", "PING"); got != "PONG\n" {
			t.Errorf("round %d: PING = %q", round, got)
		}
		if round == 1 {
			if got := redisCLI(t, port, "", "SET", "greeting", "hello"); got != "OK\n" {
				t.Errorf("SET = %q", got)
			}
		}
		if got := redisCLI(t, port, "", "GET", "greeting"); got != "hello\n" {
			t.Errorf("round %d: GET greeting = %q", round, got)
		}
		out, err = run("status")
		if err != nil || strings.Count(out, " running (pid ") != 3 {
			t.Errorf("status while running: %v\n%s", err, out)
		}
		if out, err := run("stop"); err != nil {
			t.Fatalf("stop: %v\n%s", err, out)
		}
		out, err = run("status")
		if err == nil || strings.Count(out, " stopped") != 3 {
			t.Errorf("status after stop: %v (want exit 1)\n%s", err, out)
		}
		log, err := os.ReadFile(filepath.Join(dir, "server.log"))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(logLines(string(log), "engine closed; bye")); n != round {
			t.Errorf("server.log has %d clean engine closes after round %d:\n%s", n, round, log)
		}
	}
}

// killPidFiles SIGKILLs the processes named by the script's pid files that
// still run the binary the script started under that name (NAME.cmd), so a
// recycled pid is left alone.
func killPidFiles(t *testing.T, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		bin, err := os.ReadFile(strings.TrimSuffix(f, ".pid") + ".cmd")
		cmdline, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || err2 != nil || !strings.HasPrefix(string(cmdline), strings.TrimSpace(string(bin))+"\x00") {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			t.Errorf("%s: pid %d was still running after stop", filepath.Base(f), pid)
		}
	}
}

// TestCheckPushes: the list check accepts exactly the lists the RPUSHes
// could have left.
func TestCheckPushes(t *testing.T) {
	sent := []topoPush{{"a", true}, {"b", false}, {"c", true}, {"d", false}}
	for _, tc := range []struct {
		list []string
		ok   bool
	}{
		{[]string{"a", "c"}, true},
		{[]string{"a", "b", "c"}, true},
		{[]string{"a", "b", "c", "d"}, true},
		{[]string{"a", "c", "d"}, true},
		{[]string{"a"}, false},           // acknowledged c lost
		{[]string{"c", "a"}, false},      // out of order
		{[]string{"a", "c", "c"}, false}, // applied twice
		{[]string{"a", "c", "e"}, false}, // never sent
		{nil, false},
	} {
		if err := checkPushes(tc.list, sent); (err == nil) != tc.ok {
			t.Errorf("checkPushes(%q) = %v, want ok=%v", tc.list, err, tc.ok)
		}
	}
}
