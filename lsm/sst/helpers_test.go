package sst

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

var compressions = []Compression{CompressionNone, CompressionS2, CompressionZstd}

// randKey draws keys from a small alphabet with shared prefixes, so blocks
// exercise prefix compression and keys collide across versions.
func randKey(rng *rand.Rand, keySpace int) []byte {
	n := rng.IntN(keySpace)
	switch rng.IntN(4) {
	case 0:
		return fmt.Appendf(nil, "k%d", n)
	case 1:
		return fmt.Appendf(nil, "hash/%08d/field", n)
	case 2:
		return fmt.Appendf(nil, "h%05d%s", n, bytes.Repeat([]byte{'x'}, n%40))
	}
	return []byte{byte(n), byte(n >> 8), 0, byte(n % 7)}
}

func randValue(rng *rand.Rand) []byte {
	var n int
	switch rng.IntN(10) {
	case 0:
		n = 0
	case 1:
		n = 2000 + rng.IntN(9000) // larger than small blocks
	case 2:
		n = 64 + rng.IntN(400) // lengths of one and of two varint bytes
	default:
		n = rng.IntN(64)
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte('a' + rng.IntN(4)) // compressible
	}
	return v
}

func randRow(rng *rand.Rand, key []byte, seq uint64) Row {
	r := Row{Key: key, Seq: seq, Kind: KindPut, Value: randValue(rng)}
	if rng.IntN(5) == 0 {
		r.Kind, r.Value = KindDelete, nil
	}
	if rng.IntN(4) == 0 {
		r.ExpireAt = 1_700_000_000_000 + rng.Int64N(1_000_000)
	}
	return r
}

// sortedRows returns n rows in SST order with unique (key, seq), several
// versions per key.
func sortedRows(rng *rand.Rand, n, keySpace int) []Row {
	seen := map[string]bool{}
	rows := make([]Row, 0, n)
	for len(rows) < n {
		k := randKey(rng, keySpace)
		seq := rng.Uint64N(1 << 40)
		id := fmt.Sprintf("%x/%d", k, seq)
		if seen[id] {
			continue
		}
		seen[id] = true
		rows = append(rows, randRow(rng, k, seq))
	}
	slices.SortFunc(rows, func(a, b Row) int { return Compare(a.Key, a.Seq, b.Key, b.Seq) })
	return rows
}

func build(t testing.TB, rows []Row, o BuilderOptions) ([]byte, Stats) {
	t.Helper()
	b := NewBuilder(o)
	for _, r := range rows {
		if err := b.Add(r); err != nil {
			t.Fatalf("add: %v", err)
		}
	}
	b.SetClockTick(42)
	data, st, err := b.Finish()
	if err != nil {
		t.Fatalf("finish: %v", err)
	}
	return data, st
}

// expectedStats computes what the builder must report.
func expectedStats(rows []Row, ordered bool) Stats {
	var s Stats
	s.ClockTick = 42
	for i, r := range rows {
		if i == 0 {
			s.MinSeq, s.MaxSeq = r.Seq, r.Seq
			s.Smallest, s.Largest = r.Key, r.Key
		}
		s.MinSeq, s.MaxSeq = min(s.MinSeq, r.Seq), max(s.MaxSeq, r.Seq)
		s.Entries++
		if r.Kind == KindDelete {
			s.Tombstones++
		}
		if r.ExpireAt != 0 && (s.EarliestExpiry == 0 || r.ExpireAt < s.EarliestExpiry) {
			s.EarliestExpiry = r.ExpireAt
		}
		if ordered {
			s.Largest = r.Key
		} else {
			if bytes.Compare(r.Key, s.Smallest) < 0 {
				s.Smallest = r.Key
			}
			if bytes.Compare(r.Key, s.Largest) > 0 {
				s.Largest = r.Key
			}
		}
	}
	return s
}

func statsEqual(a, b Stats) bool {
	return bytes.Equal(a.Smallest, b.Smallest) && bytes.Equal(a.Largest, b.Largest) &&
		a.MinSeq == b.MinSeq && a.MaxSeq == b.MaxSeq && a.Entries == b.Entries &&
		a.Tombstones == b.Tombstones && a.EarliestExpiry == b.EarliestExpiry && a.ClockTick == b.ClockTick
}

func rowEqual(a, b Row) bool {
	return bytes.Equal(a.Key, b.Key) && a.Seq == b.Seq && a.Kind == b.Kind &&
		a.ExpireAt == b.ExpireAt && bytes.Equal(a.Value, b.Value)
}

func fmtRow(r Row) string {
	return fmt.Sprintf("(%q seq=%d %v exp=%d vlen=%d)", r.Key, r.Seq, r.Kind, r.ExpireAt, len(r.Value))
}

// modelSeek returns the index of the first model row a SeekGE(key) under
// bounds must yield, and the index past the last row within bounds.
func modelSeek(rows []Row, key, lower, upper []byte) (from, to int) {
	if lower != nil && bytes.Compare(key, lower) < 0 {
		key = lower
	}
	from, _ = slices.BinarySearchFunc(rows, key, func(r Row, k []byte) int {
		if bytes.Compare(r.Key, k) < 0 {
			return -1
		}
		return 1
	})
	to = len(rows)
	if upper != nil {
		to, _ = slices.BinarySearchFunc(rows, upper, func(r Row, k []byte) int {
			if bytes.Compare(r.Key, k) < 0 {
				return -1
			}
			return 1
		})
	}
	return from, max(from, to)
}

// countingObject records every range read from an object.
type countingObject struct {
	ObjectReader
	mu    sync.Mutex
	reads [][2]int64
}

func (o *countingObject) ReadAt(ctx context.Context, off, length int64) ([]byte, error) {
	o.mu.Lock()
	o.reads = append(o.reads, [2]int64{off, length})
	o.mu.Unlock()
	return o.ObjectReader.ReadAt(ctx, off, length)
}

func (o *countingObject) take() [][2]int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.reads
	o.reads = nil
	return r
}

func openBytes(t testing.TB, data []byte, cache *Cache) *Reader {
	t.Helper()
	r, err := OpenReader(context.Background(), BytesObject(data), "test.sst", int64(len(data)), cache)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return r
}
