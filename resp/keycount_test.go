package resp

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stratakv/strata/resp/resptest"
)

// setCounting changes when INFO keyspace serves its last count: after a
// count that took longer than budget and found at least large keys, until
// it is spacing of its durations old.
func (ts *testServer) setCounting(budget time.Duration, spacing int, large int64) {
	k := &ts.srv.keyCount
	k.mu.Lock()
	k.budget, k.spacing, k.large = budget, spacing, large
	k.mu.Unlock()
}

// TestInfoKeyspaceLargeCount: once counting is expensive, INFO keyspace
// serves the last count (DBSIZE still counts), recounts in the background
// when the count is old, and counts afresh after a flush.
func TestInfoKeyspaceLargeCount(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	ts.setCounting(0, 1<<30, 0) // every count is expensive and never old
	keyspaceLine := func() string { return infoFields(t, c.Do("INFO", "keyspace"))["db0"] }

	do(t, c, "+OK\r\n", "SET", "a", "1")
	do(t, c, "+OK\r\n", "SET", "t", "1", "EX", "100")
	if got := keyspaceLine(); got != "keys=2,expires=1,avg_ttl=0" {
		t.Fatalf("first INFO keyspace (counts afresh): %q", got)
	}
	do(t, c, "+OK\r\n", "SET", "b", "1")
	if got := keyspaceLine(); got != "keys=2,expires=1,avg_ttl=0" {
		t.Fatalf("INFO keyspace should serve the last count: %q", got)
	}
	do(t, c, ":3\r\n", "DBSIZE")
	strata := infoFields(t, c.Do("INFO", "strata"))
	if age, err := strconv.ParseFloat(strata["keyspace_count_age_seconds"], 64); err != nil || age <= 0 {
		t.Fatalf("keyspace_count_age_seconds %q: the count served has an age", strata["keyspace_count_age_seconds"])
	}

	// An old count: INFO still answers at once with it, and a recount in
	// the background brings the new key in.
	ts.setCounting(0, 0, 0)
	deadline := time.Now().Add(10 * time.Second)
	for keyspaceLine() != "keys=3,expires=1,avg_ttl=0" {
		if time.Now().After(deadline) {
			t.Fatalf("the background recount never showed the third key: %q", keyspaceLine())
		}
		time.Sleep(5 * time.Millisecond)
	}

	// A flush voids the count, however expensive it was.
	ts.setCounting(0, 1<<30, 0)
	do(t, c, "+OK\r\n", "FLUSHALL")
	if got := keyspaceLine(); got != "" {
		t.Fatalf("INFO keyspace after FLUSHALL: db0 %q", got)
	}
	c.Do("SELECT", "2")
	do(t, c, "+OK\r\n", "SET", "x", "1")
	ts.setCounting(0, 0, 0)
	for infoFields(t, c.Do("INFO", "keyspace"))["db2"] != "keys=1,expires=0,avg_ttl=0" {
		if time.Now().After(deadline) {
			t.Fatalf("the background recount never showed db2")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ts.setCounting(0, 1<<30, 0)
	do(t, c, "+OK\r\n", "FLUSHDB")
	if f := infoFields(t, c.Do("INFO", "keyspace")); len(f) != 0 {
		t.Fatalf("INFO keyspace after FLUSHDB: %v", f)
	}
}

// TestInfoKeyspaceCountsSmallAfresh: a keyspace whose count finds fewer
// keys than countLarge is counted afresh by every INFO, however slow the
// count was.
func TestInfoKeyspaceCountsSmallAfresh(t *testing.T) {
	ts := startServer(t, Config{})
	c := resptest.Dial(t, ts.addr)
	ts.setCounting(0, 1<<30, countLarge)
	for i := 1; i <= 3; i++ {
		do(t, c, "+OK\r\n", "SET", "k"+strconv.Itoa(i), "1")
		want := "keys=" + strconv.Itoa(i) + ",expires=0,avg_ttl=0"
		if got := infoFields(t, c.Do("INFO", "keyspace"))["db0"]; got != want {
			t.Fatalf("INFO keyspace after %d SETs: %q, want %q", i, got, want)
		}
	}
}

// TestInfoKeyspaceConcurrent runs INFO from several clients while others
// write and flush, every count expensive and at once old, so that counts
// start in the background all the time; then closes the server with counts
// under way (run with -race).
func TestInfoKeyspaceConcurrent(t *testing.T) {
	ts := startServer(t, Config{})
	ts.setCounting(0, 0, 0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := resptest.Dial(t, ts.addr)
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				switch {
				case i < 2:
					infoFields(t, c.Do("INFO", "keyspace"))
				case n%200 == 199:
					do(t, c, "+OK\r\n", "FLUSHDB")
				default:
					do(t, c, "+OK\r\n", "SET", "k"+strconv.Itoa(i)+":"+strconv.Itoa(n), "v")
				}
			}
		}()
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	c := resptest.Dial(t, ts.addr)
	for range 3 {
		infoFields(t, c.Do("INFO", "keyspace")) // leaves a count running for Close
	}
}
