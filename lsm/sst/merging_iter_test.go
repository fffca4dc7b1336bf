package sst

import (
	"bytes"
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
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		runs := seed%2 == 1
		keySpace := 1 + rng.IntN(40)
		if runs {
			keySpace = 1 + rng.IntN(1000)
		}
		all := sortedRows(rng, 1+rng.IntN(300), keySpace)
		nChildren := 1 + rng.IntN(9) // up to 4 heap levels
		// Rows go to random children, or in runs of up to 40 keys to one
		// child, as a collection's keys lie in memtables and SSTs: a run
		// is what keeps the top below its heap children for many steps.
		// (An older version goes to another child now and then.)
		parts := make([][]Row, nChildren)
		run, left := 0, 0
		for j, r := range all {
			i := rng.IntN(nChildren)
			if runs {
				if j == 0 || !bytes.Equal(r.Key, all[j-1].Key) {
					if left == 0 {
						run, left = rng.IntN(nChildren), 1+rng.IntN(40)
					}
					left--
				}
				if rng.IntN(8) != 0 {
					i = run
				}
			}
			parts[i] = append(parts[i], r)
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
		at := 0
		ok := m.First()
		for ok {
			if got := *m.Row(); !rowEqual(got, all[at]) {
				t.Fatalf("seed %d: at %d got %s, want %s", seed, at, fmtRow(got), fmtRow(all[at]))
			}
			switch r := rng.IntN(30); {
			case r == 0:
				target := all[min(at+rng.IntN(20), len(all)-1)].Key
				at, _ = slices.BinarySearchFunc(all, target, func(r Row, k []byte) int { return bytes.Compare(r.Key, k) })
				ok = m.SeekGE(target)
			case r < 10:
				at++
				ok = m.Next()
			default:
				key := bytes.Clone(all[at].Key)
				for at < len(all) && bytes.Equal(all[at].Key, key) {
					at++
				}
				ok = SkipKey(m, key)
			}
		}
		if at != len(all) {
			t.Fatalf("seed %d: the merge ended at row %d of %d", seed, at, len(all))
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
