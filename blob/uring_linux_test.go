package blob

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/thanos-io/objstore"
	"golang.org/x/sys/unix"
)

// ringOrSkip returns a new ring, or skips where the kernel refuses io_uring.
func ringOrSkip(t *testing.T) *syncRing {
	t.Helper()
	r, err := setupSyncRing()
	if err != nil {
		t.Skipf("io_uring unavailable here: %v", err)
	}
	t.Cleanup(r.close)
	return r
}

func TestSyncRingFdatasync(t *testing.T) {
	r := ringOrSkip(t)
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Many requests through one ring, from several goroutines at once:
	// each gets its own completion, none is lost or taken by another.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if _, err := f.WriteAt([]byte{byte(g), byte(i)}, int64(2*(g*50+i))); err != nil {
					t.Error(err)
					return
				}
				if err := r.fdatasync(f); err != nil {
					t.Errorf("fdatasync %d/%d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if r.broken {
		t.Fatal("ring gave up on fdatasync that should succeed")
	}
}

// A completion that does not come within the ring's wait ends the wait
// with errRingStalled instead of parking the caller for good.
func TestSyncRingWaitIsBounded(t *testing.T) {
	r := ringOrSkip(t)
	r.wait = 30 * time.Millisecond
	start := time.Now()
	// Nothing is in flight, so no completion will come.
	if _, err := r.await(); !errors.Is(err, errRingStalled) {
		t.Fatalf("await with nothing in flight: %v, want errRingStalled", err)
	}
	if took := time.Since(start); took < r.wait {
		t.Fatalf("await gave up after %v, before its wait of %v", took, r.wait)
	}
}

// An overdue completion does not fail the sync: the file is synced by the
// system call, the ring is given up, and no new rings are made.
func TestSyncRingOverdueFallsBack(t *testing.T) {
	was := noRing.Load()
	defer noRing.Store(was)
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dirty := bytes.Repeat([]byte{7}, 1<<20)
	// A wait of 1 ns is over before the io-wq worker syncs a megabyte, so
	// the ring's completion is overdue; the loop only guards against a
	// kernel that completes the request before run looks.
	for try := 0; ; try++ {
		r := ringOrSkip(t)
		r.wait = time.Nanosecond
		if _, err := f.WriteAt(dirty, 0); err != nil {
			t.Fatal(err)
		}
		if err := r.fdatasync(f); err != nil {
			t.Fatalf("fdatasync with an overdue completion: %v", err)
		}
		if r.broken {
			if !noRing.Load() {
				t.Fatal("an overdue completion did not stop new rings")
			}
			if _, err := newSyncRing(); !errors.Is(err, errNoRing) {
				t.Fatalf("new ring after an overdue completion: %v, want errNoRing", err)
			}
			// The given-up ring syncs by the system call from now on.
			if err := r.fdatasync(f); err != nil {
				t.Fatal(err)
			}
			return
		}
		if try == 20 {
			t.Fatal("20 syncs of a dirty megabyte all completed within 1 ns of their submission")
		}
	}
}

// The request's own result reaches the caller: an fdatasync the kernel
// refuses fails, through the ring, with the kernel's error.
func TestSyncRingReturnsTheKernelsError(t *testing.T) {
	r := ringOrSkip(t)
	p, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	defer w.Close()
	if err := r.fdatasync(p); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("fdatasync of a pipe through the ring: %v, want EINVAL", err)
	}
	if r.broken {
		t.Fatal("an fdatasync error broke the ring")
	}
	// The ring goes on working after a failed request.
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := r.fdatasync(f); err != nil {
		t.Fatal(err)
	}
}

// The journal syncs through a ring where the kernel has io_uring, and
// through fdatasync(2) where it does not, with the same results.
func TestJournalWithAndWithoutRing(t *testing.T) {
	if _, err := setupSyncRing(); err != nil {
		t.Skipf("io_uring unavailable here: %v", err)
	}
	for _, ring := range []bool{true, false} {
		t.Run(map[bool]string{true: "ring", false: "fdatasync"}[ring], func(t *testing.T) {
			was := noRing.Load()
			noRing.Store(!ring)
			defer noRing.Store(was)
			dir := t.TempDir()
			b := openJournaled(t, dir, 1<<20)
			for _, f := range []*journalFile{b.journal.active, b.journal.spare} {
				if (f.ring != nil) != ring {
					t.Fatalf("journal file %s: ring %v, want %v", f.path, f.ring != nil, ring)
				}
			}
			for i := range 10 {
				mustUpload(t, b, fmt.Sprintf("wal/%d", i), string(journalBody(i)), objstore.WithIfNotExists())
			}
			st := b.JournalStats()
			if st.Journaled != 10 || st.Syncs == 0 || st.Err != nil {
				t.Fatalf("journal stats %+v: want 10 journaled, synced", st)
			}
			// A crash leaves the records for the next open; it replays them.
			crash(b)
			b2, err := NewLocalBucket(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer b2.Close()
			if st := b2.JournalStats(); st.Replayed != 10 {
				t.Fatalf("replay stats %+v: want 10 replayed", st)
			}
			for i := range 10 {
				if got := mustGet(t, b2, fmt.Sprintf("wal/%d", i)); got != string(journalBody(i)) {
					t.Fatalf("wal/%d: %d bytes after replay", i, len(got))
				}
			}
		})
	}
}
