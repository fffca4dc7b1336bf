package wal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratakv/strata/lsm/sst"
)

// modelKey is row i's key in TestRowQueueModel: its number, now and then
// padded to a size that fills a good part of a chunk's key copies or does
// not fit in them at all, so that chunks hold a mix of copied keys and keys
// left where they were.
func modelKey(i int) []byte {
	k := []byte(fmt.Sprint(i))
	switch {
	case i%97 == 0:
		k = append(k, bytes.Repeat([]byte{byte(i)}, chunkKeyBytes*3/4)...)
	case i%89 == 0:
		k = append(k, bytes.Repeat([]byte{byte(i)}, chunkKeyBytes/3)...)
	}
	return k
}

// TestRowQueueModel pushes and takes rows in random amounts, keeps several
// taken objects outstanding and releases them in random order: every taken
// object must keep exactly its rows, in order, until it is released, while
// the queue reuses the released chunks. (An object sharing a chunk, or a
// chunk's key copies, with the queue or with another object would see its
// rows cleared or overwritten.)
func TestRowQueueModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q rowQueue
	next, taken := 0, 0 // row numbers pushed and taken so far
	type out struct {
		t        takenRows
		first, n int
	}
	var outstanding []out
	check := func(o out) {
		t.Helper()
		i := o.first
		for _, s := range o.t.segs {
			for _, r := range s {
				if !bytes.Equal(r.Key, modelKey(i)) || r.Seq != uint64(i) {
					t.Fatalf("taken row %d reads %.20q (%d bytes) seq %d", i, r.Key, len(r.Key), r.Seq)
				}
				i++
			}
		}
		if i-o.first != o.n {
			t.Fatalf("taken %d rows, holds %d", o.n, i-o.first)
		}
	}
	for step := 0; step < 20000; step++ {
		switch rng.IntN(3) {
		case 0, 1:
			n := rng.IntN(40) + 1 // a pipeline's or a client's batch
			if rng.IntN(4) == 0 {
				n = rng.IntN(3*chunkRows/2) + 1 // a big one, across chunks
			}
			rows := make([]sst.Row, n)
			for i := range rows {
				rows[i] = sst.Row{Key: modelKey(next), Seq: uint64(next)}
				next++
			}
			q.push(rows)
		case 2:
			if q.len() > 0 {
				n := rng.IntN(q.len()) + 1
				outstanding = append(outstanding, out{q.take(n, 0), taken, n})
				taken += n
			}
		}
		if q.len() != next-taken {
			t.Fatalf("len %d, want %d", q.len(), next-taken)
		}
		if len(outstanding) > 0 && (rng.IntN(3) == 0 || len(outstanding) > 4) {
			i := rng.IntN(len(outstanding))
			for _, o := range outstanding {
				check(o)
			}
			q.release(outstanding[i].t)
			outstanding = append(outstanding[:i], outstanding[i+1:]...)
		}
	}
	for _, o := range outstanding {
		check(o)
	}
	// What is left comes out whole and in order.
	if n := q.len(); n > 0 {
		check(out{q.take(n, 0), taken, n})
	}
	if len(q.free) > maxFreeChunks {
		t.Fatalf("%d free chunks kept, limit %d", len(q.free), maxFreeChunks)
	}
}

// TestRowQueueReleaseClears: released chunks hold no references to the
// rows' bytes, so an idle writer pins no batch memory.
func TestRowQueueReleaseClears(t *testing.T) {
	var q rowQueue
	rows := make([]sst.Row, chunkRows+10)
	for i := range rows {
		rows[i] = sst.Row{Key: []byte("k"), Value: []byte("v"), Seq: 1}
	}
	q.push(rows)
	a := q.take(5, 0) // copied out of the first chunk
	b := q.take(q.len(), 0)
	q.release(a)
	q.release(b)
	for _, c := range q.free {
		for i := range c.rows {
			if c.rows[i].Key != nil || c.rows[i].Value != nil {
				t.Fatalf("a released chunk still points to row bytes at %d", i)
			}
		}
		if len(c.keys) != 0 {
			t.Fatalf("a released chunk holds %d bytes of key copies", len(c.keys))
		}
	}
}
