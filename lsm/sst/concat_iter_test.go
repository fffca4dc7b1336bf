package sst

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
)

// readerParts is a sorted run of SSTs for a ConcatIter.
type readerParts struct {
	rs     []*Reader
	bounds [][2][]byte
	o      IterOptions
}

func (p *readerParts) Len() int                                { return len(p.rs) }
func (p *readerParts) Bounds(i int) (smallest, largest []byte) { return p.bounds[i][0], p.bounds[i][1] }
func (p *readerParts) Open(i int) (Iterator, error) {
	return p.rs[i].NewIter(context.Background(), p.o), nil
}

// TestSkipKeyThroughRun walks a sorted run of SSTs, its keys' versions
// spread over small blocks and restart points, mixing Next, SkipKey and
// SeekGE within bounds: each step must land where the sorted rows say.
// SkipKey compares only the bytes after the prefix a row shares with the
// row before it, and a key's versions may straddle a block or a restart
// point (where a row shares nothing); keys that are prefixes of others
// and keys of one byte more test the length check.
func TestSkipKeyThroughRun(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 11))
		rows := sortedRows(rng, 1+rng.IntN(2000), 1+rng.IntN(120))
		// Cut the rows into SSTs between keys, as a sorted run is.
		var parts readerParts
		o := BuilderOptions{BlockSize: 64 + rng.IntN(512), RestartInterval: 1 + rng.IntN(16)}
		for start := 0; start < len(rows); {
			end := min(start+1+rng.IntN(400), len(rows))
			for end < len(rows) && bytes.Equal(rows[end].Key, rows[end-1].Key) {
				end++
			}
			data, st := build(t, rows[start:end], o)
			parts.rs = append(parts.rs, openBytes(t, data, nil))
			parts.bounds = append(parts.bounds, [2][]byte{st.Smallest, st.Largest})
			start = end
		}
		// Bounds now and then.
		lo, hi := 0, len(rows)
		if rng.IntN(3) == 0 {
			lo = rng.IntN(len(rows))
			for lo > 0 && bytes.Equal(rows[lo].Key, rows[lo-1].Key) {
				lo--
			}
			parts.o.LowerBound = rows[lo].Key
		}
		if rng.IntN(3) == 0 {
			hi = lo + rng.IntN(len(rows)-lo+1)
			for hi < len(rows) && hi > lo && bytes.Equal(rows[hi].Key, rows[hi-1].Key) {
				hi++
			}
			if hi < len(rows) {
				parts.o.UpperBound = rows[hi].Key
			}
		}
		c := NewConcatIter(&parts, parts.o.LowerBound, parts.o.UpperBound)
		walkChecked(t, seed, rng, c, rows[lo:hi], 20, 6, 30)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
