package lsm

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
)

// TestIteratorReuse: iterators come from the DB's pool and go back at
// Close. Scans of different bounds, over more sorted runs than an Iterator
// holds inline (so some run iterators are allocated, some reused), each
// see exactly the live rows they should, however often the same Iterator
// is reused; a closed Iterator keeps no memtable, manifest or table; and
// with its blocks cached a scan of a memtable and three SSTs allocates
// nothing.
func TestIteratorReuse(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, blob.NewMemBucket(), Options{WALFlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	const keys = 400
	// want[i]: the value of key i, nil once deleted. Round r writes every
	// key with i%(r+2) == 0, deletes some, and is flushed to an L0 SST but
	// for the last round, which stays in the memtable.
	want := make([][]byte, keys)
	rounds := iterLevels + 3
	for r := range rounds {
		var b Batch
		for i := 0; i < keys; i++ {
			switch {
			case i%(r+2) == 0:
				v := fmt.Appendf(nil, "v%d-%d", r, i)
				b.Put(key(i), v)
				want[i] = v
			case r > 0 && i%(7*r+3) == 1:
				b.Delete(key(i))
				want[i] = nil
			}
		}
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if r < rounds-1 {
			if err := db.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := len(db.state.Load().man.L0); n <= iterLevels {
		t.Fatalf("%d L0 SSTs, want more than the %d an Iterator holds inline", n, iterLevels)
	}
	scan := func(lo, hi int) {
		t.Helper()
		it := db.NewIter(ctx, IterOptions{LowerBound: key(lo), UpperBound: key(hi)})
		i := lo
		for ok := it.First(); ok; ok = it.Next() {
			for i < hi && want[i] == nil {
				i++
			}
			if i == hi || !bytes.Equal(it.Key(), key(i)) || !bytes.Equal(it.Value(), want[i]) {
				t.Fatalf("scan [%d, %d): got %q=%q, want key %d", lo, hi, it.Key(), it.Value(), i)
			}
			i++
		}
		for i < hi && want[i] == nil {
			i++
		}
		if err := it.Close(); err != nil || i != hi {
			t.Fatalf("scan [%d, %d): stopped before key %d of %d: %v", lo, hi, i, hi, err)
		}
	}
	for n := 0; n < 300; n++ {
		lo := (n * 37) % keys
		scan(lo, min(lo+1+(n*13)%60, keys))
	}

	it := db.NewIter(ctx, IterOptions{})
	if !it.First() {
		t.Fatal("empty scan")
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	// Only this goroutine uses db, so nothing took it from the pool yet.
	if it.db != nil || it.merged != nil || it.mem.m != nil || it.nlv != 0 || it.row.Value != nil {
		t.Fatalf("a closed Iterator still refers to its DB, merge, memtable or a row: %+v", it)
	}
	for i := range it.lv {
		if l := &it.lv[i]; l.ssts != nil || l.db != nil || l.Len() != 0 {
			t.Fatalf("a closed Iterator's run iterator %d still holds its SSTs", i)
		}
	}
	for _, k := range it.kids {
		if k != nil {
			t.Fatal("a closed Iterator still holds a child iterator")
		}
	}

	if raceEnabled {
		t.Log("allocations not counted under the race detector (its sync.Pool drops items)")
		return
	}
	// Three L0 SSTs and the memtable: a DB of its own.
	db2, err := Open(ctx, blob.NewMemBucket(), Options{WALFlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for r := range 4 {
		var b Batch
		for i := 0; i < keys; i++ {
			b.Put(key(i), fmt.Appendf(nil, "v%d", r))
		}
		if _, err := db2.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if r < 3 {
			if err := db2.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	lower, upper := key(100), key(200)
	scan100 := func() {
		it := db2.NewIter(ctx, IterOptions{LowerBound: lower, UpperBound: upper})
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil || n != 100 {
			t.Fatalf("scanned %d keys, want 100: %v", n, err)
		}
	}
	scan100() // loads the blocks into the cache
	if a := testing.AllocsPerRun(100, scan100); a != 0 {
		t.Errorf("a scan of a memtable and 3 SSTs allocates %.1f times, want 0", a)
	}
}
