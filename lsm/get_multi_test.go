package lsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratakv/strata/blob"
)

// TestGetMulti: GetMulti agrees with Get key by key, whether a key's newest
// row is in the memtable, a frozen one or an SST, deleted, expired, empty or
// absent, and a batch is never seen in part while writers keep changing it.
func TestGetMulti(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, blob.NewMemBucket(), Options{MemtableSize: 64 << 10, BlockSize: 512, BlockCacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "k%05d", i) }
	const n = 3000
	for i := range n {
		var b Batch
		switch i % 7 {
		case 0:
			b.Delete(key(i))
		case 1:
			b.PutWithExpiry(key(i), []byte("gone"), db.Now()-1)
		case 2:
			b.Put(key(i), nil)
		default:
			b.Put(key(i), bytes.Repeat([]byte{byte(i)}, 1+i%200))
		}
		if _, err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			if err := db.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var keys [][]byte
	for i := n + 10; i >= -10; i -= 3 { // descending, some absent
		keys = append(keys, key(i))
	}
	got, err := db.GetMulti(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		want, err := db.Get(ctx, k)
		if errors.Is(err, ErrNotFound) {
			want = nil
		} else if err != nil {
			t.Fatal(err)
		} else if want == nil {
			want = []byte{}
		}
		if !bytes.Equal(got[i], want) || (got[i] == nil) != (want == nil) {
			t.Fatalf("GetMulti %s = %q, Get = %q", k, got[i], want)
		}
	}

	// A writer sets all of 200 keys to one value per batch; every GetMulti
	// meanwhile must see one value across all of them.
	db2, err := Open(ctx, blob.NewMemBucket(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	group := make([][]byte, 200)
	for i := range group {
		group[i] = fmt.Appendf(nil, "g%03d", i)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range 3000 {
			var b Batch
			for _, k := range group {
				b.Put(k, fmt.Appendf(nil, "v%d", v))
			}
			if _, err := db2.Write(ctx, &b); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for reads, writing := 0, true; writing; reads++ {
		select {
		case <-done:
			writing = false
		default:
		}
		vals, err := db2.GetMulti(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			if !bytes.Equal(vals[i], vals[0]) {
				t.Fatalf("read %d saw part of a batch: %s=%q but %s=%q", reads, group[0], vals[0], group[i], vals[i])
			}
		}
	}
}
