package manifest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/lsm/sst"
)

// newRand returns a seeded generator and logs the seed so a failure can be
// replayed.
func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// randU64 favours the edges of the range, where varint bugs live.
func randU64(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return r.Uint64N(128)
	case 1:
		return math.MaxUint64 - r.Uint64N(3)
	default:
		return r.Uint64() >> r.UintN(64)
	}
}

func randI64(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return []int64{math.MinInt64, math.MaxInt64, -1, 1}[r.IntN(4)]
	default:
		return int64(r.Uint64()) >> r.UintN(64)
	}
}

func randULID(r *rand.Rand) ulid.ULID {
	var id ulid.ULID
	binary.LittleEndian.PutUint64(id[:8], r.Uint64())
	binary.LittleEndian.PutUint64(id[8:], r.Uint64())
	return id
}

func randKey(r *rand.Rand) []byte {
	k := make([]byte, r.IntN(12))
	for i := range k {
		k[i] = byte(r.IntN(4)) // a small alphabet makes shared prefixes likely
	}
	if len(k) == 0 {
		return nil
	}
	return k
}

// randSorted returns n distinct keys in ascending order (fewer if the
// alphabet runs out of distinct ones).
func randSorted(r *rand.Rand, n int) [][]byte {
	var keys [][]byte
	for range 4 * n {
		keys = append(keys, randKey(r))
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}

func randSST(r *rand.Rand, smallest, largest []byte, maxSeq uint64) SST {
	minSeq := maxSeq
	if maxSeq > 0 {
		minSeq = maxSeq - r.Uint64N(maxSeq)
	}
	return SST{
		ID:   randULID(r),
		Size: randU64(r),
		Stats: sst.Stats{
			Smallest: smallest, Largest: largest,
			MinSeq: minSeq, MaxSeq: maxSeq,
			Entries: randU64(r), Tombstones: randU64(r),
			EarliestExpiry: randI64(r), ClockTick: randI64(r),
		},
	}
}

// randManifest returns a random manifest that passes Validate.
func randManifest(r *rand.Rand) *Manifest {
	m := &Manifest{
		ID: randU64(r), WriterEpoch: randU64(r), CompactorEpoch: randU64(r),
		ReplayAfterWALID: randU64(r), NextWALID: randU64(r), LastSeq: randU64(r),
		ClockTick: randI64(r), NextRunID: randU64(r),
	}
	seq := m.LastSeq
	for range r.IntN(6) {
		if seq > 0 {
			seq -= r.Uint64N(min(seq, 1000) + 1)
		}
		a, b := randKey(r), randKey(r)
		if bytes.Compare(a, b) > 0 {
			a, b = b, a
		}
		m.L0 = append(m.L0, randSST(r, a, b, seq))
	}
	if m.NextRunID == 0 {
		return m
	}
	ids := map[uint64]bool{}
	for range r.IntN(4) {
		id := m.NextRunID - 1 - r.Uint64N(min(m.NextRunID, 1000))
		if ids[id] {
			continue
		}
		ids[id] = true
		run := Run{ID: id}
		keys := randSorted(r, 2*r.IntN(5))
		for j := 0; j+1 < len(keys); j += 2 {
			run.SSTs = append(run.SSTs, randSST(r, keys[j], keys[j+1], r.Uint64N(m.LastSeq/2+1)))
		}
		m.Runs = append(m.Runs, run)
	}
	return m
}

// reframe wraps body in a valid header and checksum, so tests can reach the
// body decoder with bytes of their choosing.
func reframe(version uint16, body []byte) []byte {
	b := append([]byte(magic), 0, 0)
	binary.LittleEndian.PutUint16(b[len(magic):], version)
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// bodyOf returns the body of an encoded manifest.
func bodyOf(enc []byte) []byte {
	return slices.Clone(enc[headerLen : len(enc)-checksumLen])
}

// countingBucket counts operations and can make every upload lose its
// create-if-absent race.
type countingBucket struct {
	objstore.Bucket
	gets, iters, uploads atomic.Int64
	alwaysConflict       bool
}

var errTestConflict = errors.New("test: condition not met")

func (b *countingBucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	b.gets.Add(1)
	return b.Bucket.Get(ctx, name)
}

func (b *countingBucket) Iter(ctx context.Context, dir string, f func(string) error, opts ...objstore.IterOption) error {
	b.iters.Add(1)
	return b.Bucket.Iter(ctx, dir, f, opts...)
}

func (b *countingBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	b.uploads.Add(1)
	if b.alwaysConflict {
		return errTestConflict
	}
	return b.Bucket.Upload(ctx, name, r, opts...)
}

func (b *countingBucket) IsConditionNotMetErr(err error) bool {
	return err == errTestConflict || b.Bucket.IsConditionNotMetErr(err)
}
