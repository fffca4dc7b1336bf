package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stratakv/strata/blob/blobtest"
)

// serverSoakPrefix is the bucket prefix of TestServerCompactorSoak.
const serverSoakPrefix = "server-soak"

// TestServerCompactorSoak runs the deployment the issue asks for against
// MinIO: a `strata server` process with in-process compaction off and a
// separate `strata compactor` process on the same bucket, under write load
// from Redis clients for STRATA_SOAK (default a minute). L0, sampled from
// INFO, must stay bounded; afterwards, and after a restart of the server,
// every acknowledged write must be there.
func TestServerCompactorSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of write load against MinIO, a server and a compactor process")
	}
	load := soakDuration(t)
	bin := strataBinary(t)
	minio := blobtest.MinIO(t)
	port := freePort(t)
	serverArgs := []string{"server", "--port", strconv.Itoa(port), "--bucket", minio.URL(serverSoakPrefix),
		"--compaction", "off", "--memtable-size", "256kb"}
	srv := startChild(t, "strata server", minio.Env(), bin, serverArgs...)
	if err := srv.waitFor("ready to accept connections", 60*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.tail(20))
	}
	comp := startChild(t, "strata compactor", minio.Env(), bin, "compactor", "--bucket", minio.URL(serverSoakPrefix),
		"--poll-interval", "100ms", "--gc-interval", "2s", "--gc-min-age", "5s", "--target-sst-size", "1048576")
	if err := comp.waitFor(`msg="compactor running"`, 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, comp.tail(20))
	}

	const writers = 8
	models := make([]*writerModel, writers)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), load)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d: %v of load from %d clients", seed, load, writers)
	for w := range writers {
		models[w] = newWriterModel(w, rand.New(rand.NewPCG(seed, uint64(w))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			rdb := newCountingClient(t, port)
			for ctx.Err() == nil {
				if err := models[w].step(context.Background(), rdb); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	maxL0, samples := sampleL0(t, ctx, port)
	wg.Wait()
	ops := 0
	for _, m := range models {
		ops += m.ops
	}
	t.Logf("%d acknowledged commands; L0 over %d samples: at most %d SSTs", ops, samples, maxL0)
	if samples == 0 {
		t.Fatal("no L0 samples from INFO")
	}
	if maxL0 > 24 {
		t.Errorf("L0 grew to %d SSTs: compaction did not keep up and backpressure did not hold it", maxL0)
	}
	rdb := newClient(t, port)
	for _, m := range models {
		m.verify(t, rdb, "after the load")
	}
	if code, err := srv.stop(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("server stop: %d, %v\n%s", code, err, srv.tail(20))
	}
	srv = startChild(t, "strata server (restarted)", minio.Env(), bin, serverArgs...)
	if err := srv.waitFor("ready to accept connections", 60*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.tail(20))
	}
	rdb = newClient(t, port)
	for _, m := range models {
		m.verify(t, rdb, "after restarting the server")
	}
	stopCompactor(t, comp).report(t)
}

// newCountingClient is a client for a model of acknowledged writes: it
// never sends a command twice. go-redis by default resends a command whose
// reply took longer than its 3 s read timeout, so a command the server ran
// once and answered late ran twice (an INCR one more than acknowledged, an
// RPUSH's element twice), which the model would report as a write the
// server invented. A slow reply here is waited for instead: this test is
// about what survives, not about latency (CI runs it beside the race
// detector and the other packages on two cores).
func newCountingClient(t *testing.T, port int) *redis.Client {
	t.Helper()
	o := clientOptions(port)
	o.MaxRetries = -1
	o.ReadTimeout, o.WriteTimeout = time.Minute, time.Minute
	return newClientWith(t, o)
}

// sampleL0 reads lsm_l0_ssts from INFO every 250ms until ctx ends.
func sampleL0(t *testing.T, ctx context.Context, port int) (maxL0, samples int) {
	rdb := newClient(t, port)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return maxL0, samples
		case <-tick.C:
		}
		info, err := rdb.Info(context.Background(), "strata").Result()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "lsm_l0_ssts:"); ok {
				n, _ := strconv.Atoi(v)
				maxL0 = max(maxL0, n)
				samples++
			}
		}
	}
}

// writerModel is what one client's acknowledged commands left behind, on
// keys no other client touches.
type writerModel struct {
	id      int
	r       *rand.Rand
	ops     int
	strs    map[string]string
	counter int64
	hash    map[string]string
	list    []string
	set     map[string]bool
}

func newWriterModel(id int, r *rand.Rand) *writerModel {
	return &writerModel{id: id, r: r, strs: map[string]string{}, hash: map[string]string{}, set: map[string]bool{}}
}

func (m *writerModel) key(kind string, i int) string { return fmt.Sprintf("w%d:%s:%d", m.id, kind, i) }

// step sends one random command and, once it is acknowledged, applies it
// to the model.
func (m *writerModel) step(ctx context.Context, rdb *redis.Client) error {
	m.ops++
	val := strconv.Itoa(m.ops) + strings.Repeat("x", m.r.IntN(200))
	switch m.r.IntN(7) {
	case 0, 1:
		k := m.key("s", m.r.IntN(500))
		if err := rdb.Set(ctx, k, val, 0).Err(); err != nil {
			return err
		}
		m.strs[k] = val
	case 2:
		k := m.key("s", m.r.IntN(500))
		if err := rdb.Del(ctx, k).Err(); err != nil {
			return err
		}
		delete(m.strs, k)
	case 3:
		n, err := rdb.Incr(ctx, m.key("c", 0)).Result()
		if err != nil {
			return err
		}
		m.counter++
		if n != m.counter {
			return fmt.Errorf("INCR = %d, want %d", n, m.counter)
		}
	case 4:
		f := "f" + strconv.Itoa(m.r.IntN(300))
		if err := rdb.HSet(ctx, m.key("h", 0), f, val).Err(); err != nil {
			return err
		}
		m.hash[f] = val
	case 5:
		if err := rdb.RPush(ctx, m.key("l", 0), val).Err(); err != nil {
			return err
		}
		m.list = append(m.list, val)
		if len(m.list) > 400 {
			if err := rdb.LTrim(ctx, m.key("l", 0), -200, -1).Err(); err != nil {
				return err
			}
			m.list = m.list[len(m.list)-200:]
		}
	case 6:
		mem := "m" + strconv.Itoa(m.r.IntN(300))
		if m.r.IntN(3) == 0 {
			if err := rdb.SRem(ctx, m.key("set", 0), mem).Err(); err != nil {
				return err
			}
			delete(m.set, mem)
		} else {
			if err := rdb.SAdd(ctx, m.key("set", 0), mem).Err(); err != nil {
				return err
			}
			m.set[mem] = true
		}
	}
	return nil
}

func (m *writerModel) verify(t *testing.T, rdb *redis.Client, when string) {
	t.Helper()
	ctx := context.Background()
	for i := range 500 {
		k := m.key("s", i)
		got, err := rdb.Get(ctx, k).Result()
		want, ok := m.strs[k]
		switch {
		case ok && (err != nil || got != want):
			t.Errorf("%s: GET %s = %.20q, %v; want %.20q", when, k, got, err, want)
		case !ok && err != redis.Nil:
			t.Errorf("%s: GET %s = %.20q, %v; want nil (deleted)", when, k, got, err)
		}
	}
	if n, _ := rdb.Get(ctx, m.key("c", 0)).Int64(); n != m.counter {
		t.Errorf("%s: counter %s = %d, want %d acknowledged INCRs", when, m.key("c", 0), n, m.counter)
	}
	h, err := rdb.HGetAll(ctx, m.key("h", 0)).Result()
	if err != nil || len(h) != len(m.hash) {
		t.Errorf("%s: HGETALL has %d fields (%v), want %d", when, len(h), err, len(m.hash))
	}
	for f, v := range m.hash {
		if h[f] != v {
			t.Errorf("%s: hash field %s = %.20q, want %.20q", when, f, h[f], v)
			break
		}
	}
	l, err := rdb.LRange(ctx, m.key("l", 0), 0, -1).Result()
	if err != nil || !slices.Equal(l, m.list) {
		t.Errorf("%s: list has %d elements (%v), want %d in order", when, len(l), err, len(m.list))
	}
	members, err := rdb.SMembers(ctx, m.key("set", 0)).Result()
	if err != nil || len(members) != len(m.set) {
		t.Errorf("%s: set has %d members (%v), want %d", when, len(members), err, len(m.set))
	}
	for _, mem := range members {
		if !m.set[mem] {
			t.Errorf("%s: set has %s, which was removed or never added", when, mem)
			break
		}
	}
}
