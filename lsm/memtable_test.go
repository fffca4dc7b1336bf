package lsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakv/strata/lsm/sst"
)

// TestMemtableModel adds rows with repeated keys, out-of-order seqs, empty
// and large values and deletes, and checks point reads at several read seqs,
// the full iteration and each() against a plain model.
func TestMemtableModel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	m := newMemtable()
	var model []sst.Row // every version added
	seq := uint64(100)
	for i := 0; i < 20000; i++ {
		key := fmt.Appendf(nil, "k%04d", rnd.IntN(3000))
		r := sst.Row{Key: key, Kind: sst.KindPut, ExpireAt: rnd.Int64N(3)}
		switch x := rnd.IntN(100); {
		case x < 10:
			r.Kind = sst.KindDelete
		case x < 12:
			r.Value = bytes.Repeat([]byte{byte(i)}, arenaMaxChunk/4+rnd.IntN(1000)) // a chunk of its own
		case x < 14:
			r.Value = bytes.Repeat([]byte{byte(i)}, rnd.IntN(arenaMaxChunk/4-100)) // up to the largest shared chunk
		case x < 15:
			r.Value = []byte{}
		default:
			r.Value = fmt.Appendf(nil, "v%d-%s", i, bytes.Repeat([]byte("x"), rnd.IntN(300)))
		}
		seq++
		r.Seq = seq
		if rnd.IntN(20) == 0 {
			r.Seq = uint64(rnd.IntN(100)) + 1 // older than everything: replay order
		}
		if slices.ContainsFunc(model, func(o sst.Row) bool { return bytes.Equal(o.Key, r.Key) && o.Seq == r.Seq }) {
			continue
		}
		m.add(r)
		model = append(model, r.Clone())
		key[0] = 'X' // the memtable holds its own copy
	}
	slices.SortFunc(model, func(a, b sst.Row) int { return sst.Compare(a.Key, a.Seq, b.Key, b.Seq) })
	if got := m.entries.Load(); got != int64(len(model)) {
		t.Fatalf("entries = %d, want %d", got, len(model))
	}

	same := func(a, b sst.Row) bool {
		return bytes.Equal(a.Key, b.Key) && a.Seq == b.Seq && a.Kind == b.Kind && a.ExpireAt == b.ExpireAt &&
			bytes.Equal(a.Value, b.Value) && (a.Kind != sst.KindPut || a.Value != nil)
	}
	it := m.newIter(nil, nil)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(model) || !same(*it.Row(), model[i]) {
			t.Fatalf("iteration row %d = %+v, want %+v", i, *it.Row(), model[i])
		}
		i++
	}
	if i != len(model) {
		t.Fatalf("iteration yielded %d rows, want %d", i, len(model))
	}

	var newest []sst.Row
	for i, r := range model {
		if i == 0 || !bytes.Equal(model[i-1].Key, r.Key) {
			newest = append(newest, r)
		}
	}
	i = 0
	m.each(func(r sst.Row) error {
		if !same(r, newest[i]) {
			t.Fatalf("each row %d = %+v, want %+v", i, r, newest[i])
		}
		i++
		return nil
	})
	if i != len(newest) {
		t.Fatalf("each yielded %d rows, want %d", i, len(newest))
	}
	i = 0
	it = m.newIter(nil, nil)
	for ok := it.First(); ok; ok = it.SkipKey(it.Row().Key) {
		if i >= len(newest) || !same(*it.Row(), newest[i]) {
			t.Fatalf("SkipKey walk row %d = %+v, want %+v", i, *it.Row(), newest[i])
		}
		i++
	}
	if i != len(newest) {
		t.Fatalf("SkipKey walk yielded %d rows, want %d", i, len(newest))
	}

	for _, readSeq := range []uint64{50, 5000, 15000, 1 << 62} {
		for k := 0; k < 3000; k += 7 {
			key := fmt.Appendf(nil, "k%04d", k)
			want, found := sst.Row{}, false
			for _, r := range model {
				if bytes.Equal(r.Key, key) && r.Seq <= readSeq {
					want, found = r, true
					break
				}
			}
			got, ok := m.get(key, readSeq)
			if ok != found || (ok && !same(got, want)) {
				t.Fatalf("get(%s, %d) = %+v %v, want %+v %v", key, readSeq, got, ok, want, found)
			}
		}
	}

	it = m.newIter([]byte("k0100"), []byte("k0200"))
	for ok := it.SeekGE([]byte("k0150")); ok; ok = it.Next() {
		if k := it.Row().Key; bytes.Compare(k, []byte("k0150")) < 0 || bytes.Compare(k, []byte("k0200")) >= 0 {
			t.Fatalf("bounded iteration yielded %s", k)
		}
	}
}

// TestMemtableConcurrent: one writer adds while readers iterate, warm,
// get and seek.
// Every key a reader was told is published must be found at its seq, and
// iteration must stay sorted. Run with -race, it also checks that every
// arena read is ordered after the store that published it.
func TestMemtableConcurrent(t *testing.T) {
	m := newMemtable()
	var published atomic.Uint64
	const n = 30000
	keyOf := func(i uint64) []byte { return fmt.Appendf(nil, "key-%08d", i*7919%n) }
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(r), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := published.Load()
				if p > 0 {
					i := rnd.Uint64N(p) + 1
					// Warming reads what the writer is publishing (keys
					// past p, and the index it grows) and must change
					// nothing get returns.
					m.warm([][]byte{keyOf(i), keyOf(p + 1), keyOf(p + 2), []byte("absent")})
					row, ok := m.get(keyOf(i), p)
					if !ok || row.Seq < i || !bytes.Equal(row.Value, keyOf(row.Seq)) {
						t.Errorf("get(%s) at %d = %+v, %v", keyOf(i), p, row, ok)
						return
					}
					// A seek reads the links' annotations the writer
					// is storing; a published key is found.
					if n := m.seekGE(keyOf(i)); n == 0 || !bytes.Equal(m.key(n), keyOf(i)) {
						t.Errorf("seekGE(%s) at %d found another node", keyOf(i), p)
						return
					}
				}
				it := m.newIter(nil, nil)
				var prev []byte
				for ok, c := it.First(), 0; ok && c < 500; ok, c = it.Next(), c+1 {
					if prev != nil && bytes.Compare(prev, it.Row().Key) > 0 {
						t.Errorf("iteration out of order: %s after %s", it.Row().Key, prev)
						return
					}
					prev = it.Row().Key
				}
			}
		}()
	}
	for i := uint64(1); i <= 2*n; i++ { // the second half overwrites
		m.add(sst.Row{Key: keyOf(i), Seq: i, Kind: sst.KindPut, Value: keyOf(i)})
		published.Store(i)
	}
	close(stop)
	wg.Wait()
}

func BenchmarkMemtableAdd(b *testing.B) {
	for _, mode := range []string{"new", "new-1M", "front", "overwrite"} {
		b.Run(mode, func(b *testing.B) {
			// new-1M fills memtables of a million keys, as a 64 MB one of
			// small rows holds: its nodes do not fit in the CPU's caches.
			// front adds each key in front of the one before, as LPUSH
			// adds a list's rows.
			keys := make([][]byte, 1<<16)
			if mode == "new-1M" {
				keys = make([][]byte, 1<<20)
			}
			for i := range keys {
				if mode == "front" {
					keys[i] = binary.BigEndian.AppendUint64([]byte("l\x00\x00\x00\x06mylist\x00\x00\x00\x01"), uint64(len(keys)-i))
				} else {
					keys[i] = fmt.Appendf(nil, "h\x00\x00\x00\x05myzset\x00\x00\x00\x01member:%012d", rand.Uint64N(1e12))
				}
			}
			value := make([]byte, 16)
			m := newMemtable()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if mode != "overwrite" && i%len(keys) == 0 {
					m = newMemtable()
				}
				m.add(sst.Row{Key: keys[i%len(keys)], Seq: uint64(i + 1), Kind: sst.KindPut, Value: value})
			}
		})
	}
}

// BenchmarkMemtableGetWhileAdding measures point reads of present keys on
// one goroutine while another adds rows, as the server's readers do while
// the writer fills the memtable: what the two share (cache lines the writer
// dirties on every add) shows up as the reader's cost.
func BenchmarkMemtableGetWhileAdding(b *testing.B) {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "h\x00\x00\x00\x06myhash\x00\x00\x00\x01field:%012d", rand.Uint64N(1e12))
	}
	value := make([]byte, 16)
	m := newMemtable()
	for i, k := range keys {
		m.add(sst.Row{Key: k, Seq: uint64(i + 1), Kind: sst.KindPut, Value: value})
	}
	seq := atomic.Uint64{}
	seq.Store(uint64(len(keys)))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the writer: overwrites, as a steady write load does
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			m.add(sst.Row{Key: keys[i%len(keys)], Seq: seq.Add(1), Kind: sst.KindPut, Value: value})
		}
	}()
	for i := 0; b.Loop(); i++ {
		if _, ok := m.get(keys[(i*7919)%len(keys)], seq.Load()); !ok {
			b.Fatal("key not found")
		}
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
}

// BenchmarkMemtableGetPipelined measures point reads of present keys in
// groups of WarmKeys, as a pipeline of GETs makes them, in a memtable larger
// than the CPU's caches: read one after another, and warmed as a group first.
func BenchmarkMemtableGetPipelined(b *testing.B) {
	keys := make([][]byte, 1<<20)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "m\x00\x00\x00\x00key:%012d", rand.Uint64N(1e12))
	}
	value := make([]byte, 16)
	m := newMemtable()
	for i, k := range keys {
		m.add(sst.Row{Key: k, Seq: uint64(i + 1), Kind: sst.KindPut, Value: value})
	}
	for _, warmed := range []bool{false, true} {
		b.Run(fmt.Sprintf("warmed=%v", warmed), func(b *testing.B) {
			group := make([][]byte, WarmKeys)
			for i := 0; b.Loop(); i++ {
				for j := range group {
					group[j] = keys[rand.IntN(len(keys))]
				}
				if warmed {
					m.warm(group)
				}
				for _, k := range group {
					if _, ok := m.get(k, math.MaxUint64); !ok {
						b.Fatal("key not found")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*WarmKeys), "ns/get")
		})
	}
}

// BenchmarkMemtableFill fills a memtable with a million new keys and
// reports, besides the mean, the longest single add: what a writer (and
// every client queued behind the commit lock) waits when the hash index
// grows.
func BenchmarkMemtableFill(b *testing.B) {
	keys := make([][]byte, 1<<20)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "h\x00\x00\x00\x05myzset\x00\x00\x00\x01member:%012d", rand.Uint64N(1e12))
	}
	value := make([]byte, 16)
	var longest time.Duration
	for b.Loop() {
		m := newMemtable()
		for i, k := range keys {
			start := time.Now()
			m.add(sst.Row{Key: k, Seq: uint64(i + 1), Kind: sst.KindPut, Value: value})
			longest = max(longest, time.Since(start))
		}
	}
	b.ReportMetric(float64(longest.Microseconds()), "max-us/add")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/add")
}

// TestMemIndexGrowth: while the hash index moves the slots of the table it
// replaced, and after, every key added is found, at its node, whatever
// table holds its slot; large offsets (a chunk of its own, later chunks)
// survive the slot packing.
func TestMemIndexGrowth(t *testing.T) {
	m := newMemtable()
	var keys [][]byte
	check := func(when string) {
		t.Helper()
		for i, k := range keys {
			r, ok := m.get(k, 1<<62)
			if !ok || r.Seq != uint64(i+1) {
				t.Fatalf("%s: get(%s) = %+v %v, want seq %d", when, k, r, ok, i+1)
			}
		}
	}
	sawMigration := false
	for i := 0; len(keys) < 40000; i++ {
		k := fmt.Appendf(nil, "key-%06d", i*7919%100000)
		value := []byte("v")
		if i%5000 == 0 {
			value = bytes.Repeat([]byte("x"), arenaMaxChunk/4+1) // a chunk of its own
		}
		m.add(sst.Row{Key: k, Seq: uint64(len(keys) + 1), Kind: sst.KindPut, Value: value})
		keys = append(keys, k)
		if m.index.Load().old.Load() != nil && i%997 == 0 {
			sawMigration = true
			check(fmt.Sprintf("migrating, %d keys", len(keys)))
		}
	}
	if !sawMigration {
		t.Fatal("no check ran while the index was moving slots")
	}
	check("at the end")
	if _, ok := m.get([]byte("key-absent"), 1<<62); ok {
		t.Fatal("an absent key was found")
	}
}

// TestMemtablePrefixOrder adds keys chosen to put the links' prefix
// annotations to the test (see link): keys over a four-byte alphabet, so
// that keys share prefixes, are prefixes of one another, and agree on the
// byte after their common prefix; the empty key; runs of keys each added
// in front of the one before or after it (linked from the splice), alone,
// taking turns and among random keys; and keys that share a prefix of
// about linkNoPrefix bytes, whose links carry no annotation.
// Iteration must yield them in order, seekGE must land where a binary
// search of the sorted keys does, for keys present and absent, and every
// link's annotation must be what its two keys give.
func TestMemtablePrefixOrder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	longEvery := 8
	if raceEnabled { // comparing long keys is slow under -race
		longEvery = 64
	}
	alphabet := []byte{0x00, 0x01, 'a', 0xff}
	randomKey := func() []byte {
		k := make([]byte, rnd.IntN(10))
		for i := range k {
			k[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		if rnd.IntN(longEvery) == 0 { // a long shared prefix, near the annotation's limit
			long := bytes.Repeat([]byte{'p'}, linkNoPrefix-3+rnd.IntN(6))
			k = append(long, k...)
		}
		return k
	}
	m := newMemtable()
	seen := map[string]bool{}
	var model [][]byte
	add := func(k []byte) {
		if seen[string(k)] {
			return
		}
		seen[string(k)] = true
		model = append(model, k)
		m.add(sst.Row{Key: k, Seq: uint64(len(model)), Kind: sst.KindPut, Value: []byte("v")})
	}
	for len(model) < 1500 {
		add(randomKey())
		if len(model) == 700 {
			add([]byte{})
		}
	}
	for i := range 300 { // each in front of the last, as LPUSH adds a list's rows
		add(fmt.Appendf(nil, "a\x01list%05d", 99999-i))
	}
	for i := range 300 { // each after the last, as RPUSH does
		add(fmt.Appendf(nil, "b\x01list%05d", i))
	}
	for i := range 300 { // two runs taking turns, and random keys among them
		add(fmt.Appendf(nil, "c\x01list%05d", i))
		add(fmt.Appendf(nil, "c\x02list%05d", 99999-i))
		if i%3 == 0 {
			add(randomKey())
		}
	}
	slices.SortFunc(model, bytes.Compare)

	i := 0
	for n := m.nextAt(m.head, 0); n != 0; n = m.nextAt(n, 0) {
		if i >= len(model) || !bytes.Equal(m.key(n), model[i]) {
			t.Fatalf("node %d has key %.20q..., want %.20q...", i, m.key(n), model[i])
		}
		i++
	}
	if i != len(model) {
		t.Fatalf("level 0 holds %d keys, want %d", i, len(model))
	}

	var tails [4]int // links by what their tail says
	for level := 0; level < int(m.height.Load()); level++ {
		var prev []byte // the head's key
		for x := m.head; ; {
			l := m.linkAt(x, level)
			if l == 0 {
				break
			}
			y := m.key(slotNode(l))
			if bytes.Compare(prev, y) >= 0 && x != m.head {
				t.Fatalf("level %d: %.20q... links to %.20q...", level, prev, y)
			}
			_, lcp := compareFrom(prev, y, 0)
			d, b := int(l>>linkPrefixShift)&linkNoPrefix, byte(l>>linkByteShift)
			tail, next := (l>>linkTailShift)&3, byte(l>>linkNextShift)
			switch {
			case d == linkNoPrefix:
				if lcp < linkNoPrefix && len(y) > 0 {
					t.Fatalf("level %d: link to %.20q... has no annotation, lcp %d", level, y, lcp)
				}
			case d != lcp || b != y[lcp]:
				t.Fatalf("level %d: link to %.20q... says lcp %d byte %#x, want %d %#x", level, y, d, b, lcp, y[lcp])
			case tail == tailNext && (lcp+1 >= len(y) || next != y[lcp+1]):
				t.Fatalf("level %d: link to %.20q... (lcp %d) says the next byte is %#x", level, y, lcp, next)
			case tail == tailEnds && len(y) != lcp+1:
				t.Fatalf("level %d: link to %.20q... (lcp %d) says it ends after its byte at the lcp", level, y, lcp)
			case tail == 3:
				t.Fatalf("level %d: link to %.20q... has tail 3", level, y)
			}
			tails[tail]++
			x, prev = slotNode(l), y
		}
	}
	if tails[tailNext] == 0 || tails[tailEnds] == 0 || tails[tailUnknown] == 0 {
		t.Fatalf("links by tail (unknown, next, ends): %v; want each kind", tails[:3])
	}

	probes := slices.Clone(model)
	for range 1500 {
		probes = append(probes, randomKey())
	}
	for _, p := range probes {
		want, _ := slices.BinarySearchFunc(model, p, bytes.Compare)
		n := m.seekGE(p)
		switch {
		case want == len(model) && n != 0:
			t.Fatalf("seekGE(%.20q...) = %.20q..., want the end", p, m.key(n))
		case want < len(model) && (n == 0 || !bytes.Equal(m.key(n), model[want])):
			t.Fatalf("seekGE(%.20q...) = node %d, want %.20q...", p, n, model[want])
		}
	}
}

func TestCompareFrom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		a := make([]byte, rnd.IntN(24))
		for i := range a {
			a[i] = byte(rnd.IntN(3))
		}
		b := slices.Clone(a[:rnd.IntN(len(a)+1)])
		for range rnd.IntN(20) {
			b = append(b, byte(rnd.IntN(3)))
		}
		_, lcp := compareFrom(a, b, 0)
		from := rnd.IntN(lcp + 1) // any length both are known to share
		got, gotLCP := compareFrom(a, b, from)
		if got != bytes.Compare(a, b) || gotLCP != lcp || !bytes.Equal(a[:lcp], b[:lcp]) ||
			(lcp < len(a) && lcp < len(b) && a[lcp] == b[lcp]) {
			t.Fatalf("compareFrom(%v, %v, %d) = %d, %d; bytes.Compare says %d", a, b, from, got, gotLCP, bytes.Compare(a, b))
		}
	}
}
