package blob

import (
	"context"
	"fmt"
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
// localAids.free). Every deletion goes through the lane: a recycled WAL
// object's truncation and an SST's removal alike; the objects are gone
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
	for i := range 8 {
		names = append(names, SSTName(NewSSTID()))
		mustUpload(t, b, names[len(names)-1], fmt.Sprintf("sst %d", i))
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
	if c := calls.Load(); c != int64(len(names)) {
		t.Errorf("%d calls in the lane for %d deletions; want one each", c, len(names))
	}
	// Each call took at least callTime and the lane rested as long after it.
	if min := time.Duration(len(names)) * 2 * callTime; took < min {
		t.Errorf("%d deletions took %v; the lane's rests alone take %v", len(names), took, min)
	}
	for _, name := range names {
		if ok, err := b.Exists(ctx, name); ok || err != nil {
			t.Errorf("%s exists after Delete (%v)", name, err)
		}
	}
}
