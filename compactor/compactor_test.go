package compactor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/lsmtest"
	"github.com/stratakv/strata/manifest"
)

func TestMain(m *testing.M) { blobtest.Main(m) }

// testOptions make a compactor eager: tiny triggers and outputs, a short GC
// minimum age (still far above any read of the model test).
func testOptions() compactor.Options {
	return compactor.Options{
		Scheduler:     compactor.SchedulerOptions{L0Trigger: 2, MinMergeWidth: 2, MaxRuns: 4},
		TargetSSTSize: 64 << 10,
		PollInterval:  5 * time.Millisecond,
		GC:            compactor.GCOptions{MinAge: 2 * time.Second, KeepManifests: 3},
		GCInterval:    20 * time.Millisecond,
	}
}

// checkReferenced fails t if the latest manifest references a missing SST.
func checkReferenced(t testing.TB, bkt objstore.Bucket) {
	t.Helper()
	ctx := context.Background()
	m, err := manifest.NewStore(bkt).Latest(ctx)
	if err != nil {
		t.Errorf("latest manifest: %v", err)
		return
	}
	for _, s := range m.AllSSTs() {
		if ok, err := bkt.Exists(ctx, blob.SSTName(s.ID)); err != nil || !ok {
			t.Errorf("manifest %d references %s, which is gone (%v)", m.ID, blob.SSTName(s.ID), err)
		}
	}
}

// inProcess runs a compactor beside the engine: compaction rounds and a GC
// pass after each, checking after every pass that nothing referenced was
// deleted.
type inProcess struct {
	cancel context.CancelFunc
	done   chan struct{}
	jobs   int
}

func startInProcess(t testing.TB, bkt objstore.Bucket) *inProcess {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := compactor.Open(ctx, bkt, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	p := &inProcess{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			did, err := c.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				t.Errorf("compaction: %v", err)
				return
			}
			if did {
				p.jobs++
			}
			if _, err := c.CollectGarbage(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("gc: %v", err)
				return
			}
			checkReferenced(t, bkt)
			if !did {
				time.Sleep(2 * time.Millisecond)
			}
		}
	}()
	return p
}

func (p *inProcess) stop() { p.cancel(); <-p.done }

// TestModelWithCompactor runs the engine's model test while a compactor and
// garbage collector work on the same bucket in the same process.
func TestModelWithCompactor(t *testing.T) {
	for _, tc := range []struct {
		name string
		bkt  func(t *testing.T) objstore.Bucket
	}{
		{"mem", func(*testing.T) objstore.Bucket { return blob.NewMemBucket() }},
		{"local", func(t *testing.T) objstore.Bucket {
			b, err := blob.NewLocalBucket(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bkt := tc.bkt(t)
			var p *inProcess
			jobs := 0
			lsmtest.Run(t, bkt, lsmtest.Config{
				Ops:         min(lsmtest.Ops(), 2500),
				AfterOpen:   func(*lsm.DB) { p = startInProcess(t, bkt) },
				BeforeClose: func(*lsm.DB) { p.stop(); jobs += p.jobs },
			})
			if jobs == 0 {
				t.Fatal("no compaction ran; the test proves nothing")
			}
			t.Logf("%d compactions ran under the model test", jobs)
		})
	}
}

const childDirEnv = "STRATA_COMPACTOR_CHILD_DIR"

// TestCompactorChild is the separate compactor process of
// TestModelWithCompactorProcess: it runs until SIGTERM.
func TestCompactorChild(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("run by TestModelWithCompactorProcess")
	}
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	c, err := compactor.Open(ctx, bkt, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("compactor-jobs %d\n", c.Stats().Jobs)
}

// TestModelWithCompactorProcess runs the model test while a compactor in a
// second process works on the same local bucket.
func TestModelWithCompactorProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	var cmd *exec.Cmd
	var out syncBuffer
	lsmtest.Run(t, bkt, lsmtest.Config{
		Ops: min(lsmtest.Ops(), 2500),
		AfterOpen: func(*lsm.DB) {
			if cmd != nil {
				return
			}
			cmd = exec.Command(os.Args[0], "-test.run=^TestCompactorChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		},
	})
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("compactor process: %v\n%s", err, out.String())
	}
	checkReferenced(t, bkt)
	var jobs int
	if _, err := fmt.Sscanf(lastLine(out.String(), "compactor-jobs"), "compactor-jobs %d", &jobs); err != nil || jobs == 0 {
		t.Fatalf("the compactor process compacted nothing (%v):\n%s", err, out.String())
	}
	t.Logf("the compactor process ran %d compactions under the model test", jobs)
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// lastLine returns the last line of s that starts with prefix.
func lastLine(s, prefix string) string {
	var found string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			found = line
		}
	}
	return found
}

// TestTwoCompactors: opening a second compactor fences the first; exactly
// one publishes, the other reports ErrFenced and stops.
func TestTwoCompactors(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db := openWithL0(t, bkt, 4)
	defer db.Close()
	c1, err := compactor.Open(ctx, bkt, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	c2, err := compactor.Open(ctx, bkt, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var did1, did2 bool
	var err1, err2 error
	wg.Add(2)
	go func() { defer wg.Done(); did1, err1 = c1.RunOnce(ctx) }()
	go func() { defer wg.Done(); did2, err2 = c2.RunOnce(ctx) }()
	wg.Wait()
	if did1 || !errors.Is(err1, compactor.ErrFenced) {
		t.Fatalf("fenced compactor: did=%v err=%v, want ErrFenced and nothing published", did1, err1)
	}
	if !did2 || err2 != nil {
		t.Fatalf("newer compactor: did=%v err=%v, want a published job", did2, err2)
	}
	if err := c1.Run(ctx); !errors.Is(err, compactor.ErrFenced) {
		t.Fatalf("fenced compactor Run = %v, want ErrFenced", err)
	}
}

// openWithL0 opens an engine on bkt and flushes n L0 SSTs of distinct keys.
func openWithL0(t *testing.T, bkt objstore.Bucket, n int) *lsm.DB {
	t.Helper()
	ctx := context.Background()
	db, err := lsm.Open(ctx, bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var b lsm.Batch
		for j := range 100 {
			b.Put(fmt.Appendf(nil, "k%02d-%03d", i, j), []byte("v"))
		}
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestFencedGCStops: the garbage collector of a fenced compactor deletes
// nothing, so it cannot take the outputs of the newer compactor's job.
func TestFencedGCStops(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db := openWithL0(t, bkt, 2)
	defer db.Close()
	c1, err := compactor.Open(ctx, bkt, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compactor.Open(ctx, bkt, testOptions()); err != nil {
		t.Fatal(err)
	}
	if st, err := c1.CollectGarbage(ctx); !errors.Is(err, compactor.ErrFenced) || st.SSTsDeleted+st.WALDeleted+st.ManifestsDeleted != 0 {
		t.Fatalf("fenced GC pass: %+v, %v; want ErrFenced and nothing deleted", st, err)
	}
}
