package sst

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sliceIter iterates rows already in order; stepOnly hides SkipKey.
type sliceIter struct {
	rows []Row
	i    int
}

func (s *sliceIter) First() bool { s.i = 0; return s.Valid() }
func (s *sliceIter) SeekGE(key []byte) bool {
	s.i, _ = slices.BinarySearchFunc(s.rows, key, func(r Row, k []byte) int { return bytes.Compare(r.Key, k) })
	return s.Valid()
}
func (s *sliceIter) Next() bool   { s.i++; return s.Valid() }
func (s *sliceIter) Valid() bool  { return s.i < len(s.rows) }
func (s *sliceIter) Row() *Row    { return &s.rows[s.i] }
func (s *sliceIter) Error() error { return nil }
func (s *sliceIter) Close() error { return nil }

// skippingSliceIter has a SkipKey of its own.
type skippingSliceIter struct{ sliceIter }

func (s *skippingSliceIter) SkipKey(key []byte) bool {
	for s.Valid() && bytes.Equal(s.rows[s.i].Key, key) {
		s.i++
	}
	return s.Valid()
}

// TestMergingIterSkipKey spreads versions of keys over children, some with
// a SkipKey and some without, and walks the merge mixing Next and SkipKey
// (and now and then a SeekGE to a key ahead):
// each step must land on the row the sorted whole has next (Next) or on the
// newest version of the next key (SkipKey).
func TestMergingIterSkipKey(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		runs, layers := seed%3 == 1, seed%3 == 2
		keySpace := 1 + rng.IntN(40)
		if runs {
			keySpace = 1 + rng.IntN(1000)
		}
		nChildren := 1 + rng.IntN(9) // up to 4 heap levels
		var all []Row
		var parts [][]Row
		if layers {
			all, parts = layeredRows(rng, 1+rng.IntN(100), nChildren)
		} else {
			all = sortedRows(rng, 1+rng.IntN(300), keySpace)
			parts = spread(rng, all, nChildren, runs)
		}
		children := make([]Iterator, nChildren)
		for i, p := range parts {
			if rng.IntN(2) == 0 {
				children[i] = &sliceIter{rows: p}
			} else {
				children[i] = &skippingSliceIter{sliceIter{rows: p}}
			}
		}
		m := NewMergingIter(children)
		walkChecked(t, seed, rng, m, all, 30, 10, 20)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// walkChecked walks it from First, checking each row against want (the
// rows in order), with a random mix of moves: out of every `of` moves
// one SeekGE to a key up to span rows ahead, nexts-1 Next and the rest
// SkipKey. It fails t unless the walk ends after want's last row.
func walkChecked(t *testing.T, seed uint64, rng *rand.Rand, it Iterator, want []Row, of, nexts, span int) {
	t.Helper()
	at := 0
	for ok := it.First(); ok; {
		if at >= len(want) {
			t.Fatalf("seed %d: row %s past the last", seed, fmtRow(*it.Row()))
		}
		if got := *it.Row(); !rowEqual(got, want[at]) {
			t.Fatalf("seed %d: at %d got %s, want %s", seed, at, fmtRow(got), fmtRow(want[at]))
		}
		switch r := rng.IntN(of); {
		case r == 0:
			target := want[min(at+rng.IntN(span), len(want)-1)].Key
			at, _ = slices.BinarySearchFunc(want, target, func(r Row, k []byte) int { return bytes.Compare(r.Key, k) })
			ok = it.SeekGE(target)
		case r < nexts:
			at++
			ok = it.Next()
		default:
			key := bytes.Clone(want[at].Key)
			for at < len(want) && bytes.Equal(want[at].Key, key) {
				at++
			}
			ok = SkipKey(it, key)
		}
	}
	if err := it.Error(); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if at != len(want) {
		t.Fatalf("seed %d: the walk ended at row %d of %d", seed, at, len(want))
	}
}

// spread deals the rows of all out to n children: at random, or (runs) in
// runs of up to 40 keys to one child, as a collection's keys lie in
// memtables and SSTs: a run is what keeps the top below its heap children
// for many steps. (An older version goes to another child now and then.)
func spread(rng *rand.Rand, all []Row, n int, runs bool) [][]Row {
	parts := make([][]Row, n)
	run, left := 0, 0
	for j, r := range all {
		i := rng.IntN(n)
		if runs {
			if j == 0 || !bytes.Equal(r.Key, all[j-1].Key) {
				if left == 0 {
					run, left = rng.IntN(n), 1+rng.IntN(40)
				}
				left--
			}
			if rng.IntN(8) != 0 {
				i = run
			}
		}
		parts[i] = append(parts[i], r)
	}
	return parts
}

// layeredRows writes keys keys over n children as a list rewritten in
// layers: most keys have a version in every child, the first child's the
// newest, so the children move past key after key in step. Now and then a
// child lacks a key, or holds a version newer than the child before it.
func layeredRows(rng *rand.Rand, keys, n int) (all []Row, parts [][]Row) {
	parts = make([][]Row, n)
	pos := 0
	for range keys {
		pos += 1 + rng.IntN(3)
		key := fmt.Appendf(nil, "l\x00list\x00%08d", pos)
		first := len(all)
		for c := range n {
			if rng.IntN(10) == 0 {
				continue
			}
			seq := uint64(1<<30 - 1000*c)
			if rng.IntN(12) == 0 {
				seq += 1500 // newer than the child before it
			}
			r := randRow(rng, key, seq)
			parts[c] = append(parts[c], r)
			all = append(all, r)
		}
		slices.SortFunc(all[first:], func(a, b Row) int { return Compare(a.Key, a.Seq, b.Key, b.Seq) })
	}
	return all, parts
}
