package blob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"
)

// TestLocalBucketFreesOneAtATime: deletions from many goroutines (as
// garbage collection makes them) free their files' blocks one at a time,
// and the lane rests after each as long as the call took, so a burst of
// deletions cannot queue discards ahead of the WAL's fdatasyncs (see
// localAids.free). Every deletion that frees blocks goes through the lane
// (the SSTs', a WAL object's too large to recycle); a WAL object whose file
// is recycled frees none and makes no call there. The objects are gone
// afterwards.
func TestLocalBucketFreesOneAtATime(t *testing.T) {
	ctx := context.Background()
	b, err := NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const callTime = 2 * time.Millisecond
	var inside, most, calls atomic.Int64
	b.aids.freeCall = func(fn func() error) error {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		calls.Add(1)
		time.Sleep(callTime) // a slow discard
		err := fn()
		inside.Add(-1)
		return err
	}
	var names []string
	for i := range 24 {
		names = append(names, WALName(uint64(i+1)))
		mustUpload(t, b, names[len(names)-1], strings.Repeat("wal ", 2000), objstore.WithIfNotExists())
	}
	big := WALName(1000) // more blocks than a recycled file may hold
	names = append(names, big)
	mustUpload(t, b, big, strings.Repeat("w", (maxRecycledClass+1)*int(b.aids.blockSize)), objstore.WithIfNotExists())
	freeing := 1
	for i := range 15 {
		names = append(names, SSTName(NewSSTID()))
		mustUpload(t, b, names[len(names)-1], fmt.Sprintf("sst %d", i))
		freeing++
	}
	b.aids.waitIdle()
	calls.Store(0)

	start := time.Now()
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for name := range work {
				if err := b.Delete(ctx, name); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for _, name := range names {
		work <- name
	}
	close(work)
	wg.Wait()
	took := time.Since(start)

	if m := most.Load(); m != 1 {
		t.Errorf("%d block-freeing calls ran at once; want 1", m)
	}
	if c := calls.Load(); c != int64(freeing) {
		t.Errorf("%d calls in the lane for %d deletions freeing blocks; want one each", c, freeing)
	}
	if st := b.RecycleStats(); st.Recycled != 24 {
		t.Errorf("%d WAL objects' files recycled; want 24", st.Recycled)
	}
	// Each call took at least callTime and the lane rested as long after it.
	if min := time.Duration(freeing) * 2 * callTime; took < min {
		t.Errorf("%d deletions took %v; the lane's rests alone take %v", freeing, took, min)
	}
	for _, name := range names {
		if ok, err := b.Exists(ctx, name); ok || err != nil {
			t.Errorf("%s exists after Delete (%v)", name, err)
		}
	}
}

// TestLocalBucketFreesUnusedRecycledFiles: recycled files no upload took
// for the recycling age are freed, through the lane, and counted, by a
// timer that runs while any are kept; Close removes the rest without the
// lane.
func TestLocalBucketFreesUnusedRecycledFiles(t *testing.T) {
	ctx := context.Background()
	b := newLocal(t)
	dir := b.Root()
	var calls atomic.Int64
	b.aids.freeCall = func(fn func() error) error {
		calls.Add(1)
		return fn()
	}
	next := uint64(1)
	recycle := func(n int) {
		t.Helper()
		first := next
		for range n {
			mustUpload(t, b, WALName(next), strings.Repeat("w", 100), objstore.WithIfNotExists())
			next++
		}
		for id := first; id < next; id++ {
			if err := b.Delete(ctx, WALName(id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	setAge := func(d time.Duration) {
		b.aids.mu.Lock()
		b.aids.recycleAge = d
		b.aids.mu.Unlock()
	}

	// The timer frees what is left unused.
	setAge(20 * time.Millisecond)
	recycle(2)
	for deadline := time.Now().Add(10 * time.Second); b.RecycleStats().Freed < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if st := b.RecycleStats(); st.Files != 0 || st.Freed != 2 || calls.Load() != 2 {
		t.Fatalf("after the recycling age: %+v, %d calls in the lane; want both freed through it", st, calls.Load())
	}

	// Only files older than the age are freed, and the timer stays armed
	// for the others.
	setAge(time.Hour)
	recycle(6)
	b.aids.mu.Lock()
	files := b.aids.recycled.class[b.aids.blocks(100)]
	for i := range 4 {
		files[i].when = files[i].when.Add(-2 * time.Hour)
	}
	b.aids.mu.Unlock()
	b.aids.trimRecycled()
	b.aids.mu.Lock()
	armed := b.aids.trim != nil
	b.aids.mu.Unlock()
	if st := b.RecycleStats(); st.Files != 2 || st.Freed != 6 || calls.Load() != 6 || !armed {
		t.Fatalf("after a trim: %+v, %d calls in the lane, timer armed %v; want the 4 old files freed through it, 2 kept, the timer armed", st, calls.Load(), armed)
	}

	b.Close()
	if st := b.RecycleStats(); st.Files != 0 || st.Freed != 8 || calls.Load() != 6 {
		t.Fatalf("after Close: %+v, %d calls in the lane; want the 2 left removed directly", st, calls.Load())
	}
	if tmps, _ := os.ReadDir(filepath.Join(dir, tmpDirName)); len(tmps) != 0 {
		t.Fatalf("temp files left: %d", len(tmps))
	}
}
