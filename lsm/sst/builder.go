package sst

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Defaults for BuilderOptions.
const (
	DefaultBlockSize       = 4096
	DefaultRestartInterval = 16
	// DefaultBloomBitsPerKey gives about a 1% false-positive rate. It is not
	// applied by EnsureDefaults, because 0 means "no filter".
	DefaultBloomBitsPerKey = 10

	maxBlockSizeOption = 64 << 20
	maxBitsPerKey      = 64
)

// BuilderOptions configure a Builder.
type BuilderOptions struct {
	// BlockSize is the decoded size at which a data block is cut (default
	// 4096). A block holds at least one row, so a large row makes a larger
	// block.
	BlockSize int
	// RestartInterval is the number of rows between full keys in a block
	// (default 16): a seek scans at most this many rows after its binary
	// search.
	RestartInterval int
	// BloomBitsPerKey sizes the bloom filter over distinct user keys; 0 means
	// no filter. Ignored for unordered objects, which are never probed.
	BloomBitsPerKey int
	// Compression applies to data, index and stats blocks.
	Compression Compression
	// Unordered builds a WAL object: rows stay in append order and only their
	// seqs must not decrease. Such objects are read with DecodeAll.
	Unordered bool
	// Prefix is copied in front of the object that Finish returns, which
	// spares the caller a copy of the whole object to put a header before
	// it (the WAL's). Offsets inside the object do not count it.
	Prefix []byte
	// SizeHint is the expected size of the object, if known: the output is
	// allocated once at about that size instead of growing append by
	// append, each growth a copy of everything written so far.
	SizeHint int
	// Buf, if its capacity holds the prefix and SizeHint, is the memory the
	// object is built in (what it held is overwritten): a writer that makes
	// one object after another reuses the last one's, instead of touching
	// fresh memory for each (a page fault each 4 KiB, dear in a VM).
	Buf []byte
	// Pacer, if set, tells the builder when clients are active, so that it
	// steps aside for them (see Pacer). Nil: it yields the cheap way.
	Pacer *Pacer
}

// EnsureDefaults fills zero fields with their defaults.
func (o *BuilderOptions) EnsureDefaults() {
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.RestartInterval == 0 {
		o.RestartInterval = DefaultRestartInterval
	}
}

// Validate reports options that cannot build an object.
func (o BuilderOptions) Validate() error {
	switch {
	case o.BlockSize < 1 || o.BlockSize > maxBlockSizeOption:
		return fmt.Errorf("sst: block size %d out of range [1, %d]", o.BlockSize, maxBlockSizeOption)
	case o.RestartInterval < 1:
		return fmt.Errorf("sst: restart interval %d must be positive", o.RestartInterval)
	case o.BloomBitsPerKey < 0 || o.BloomBitsPerKey > maxBitsPerKey:
		return fmt.Errorf("sst: bloom bits per key %d out of range [0, %d]", o.BloomBitsPerKey, maxBitsPerKey)
	case o.Compression > CompressionZstd:
		return fmt.Errorf("sst: unknown compression %d", o.Compression)
	}
	return nil
}

var errFinished = errors.New("sst: builder already finished")

// maxRowLen bounds len(Key)+len(Value) so that any row fits in a block of its
// own (maxBlockLen) with its encoding overhead and restart array.
const maxRowLen = maxBlockLen - 2*maxEntryOverhead

// Builder writes one SST or WAL object in memory. It is not safe for
// concurrent use.
type Builder struct {
	o   BuilderOptions
	err error // sticky: bad options or finished

	out      []byte // Prefix, then the finished data blocks
	base     int    // len(Prefix): where the object starts in out
	block    blockWriter
	firstKey []byte // first key of the current block
	index    []byte // index entries so far
	idxOffs  []uint32
	hashes   []uint64 // bloom hashes of distinct keys
	scratch  []byte   // compression output, reused

	stats   Stats
	lastKey []byte
	lastSeq uint64
	yield   Yielder
}

// NewBuilder returns a builder; zero options take their defaults. Invalid
// options make Add and Finish fail.
func NewBuilder(o BuilderOptions) *Builder {
	o.EnsureDefaults()
	b := &Builder{o: o, err: o.Validate(), base: len(o.Prefix), yield: o.Pacer.Yielder()}
	if o.Unordered {
		b.o.BloomBitsPerKey = 0
	}
	switch need := len(o.Prefix) + max(o.SizeHint, 0); {
	case need > 0 && cap(o.Buf) >= need:
		b.out = append(o.Buf[:0], o.Prefix...)
	case need > 0:
		b.out = append(make([]byte, 0, need), o.Prefix...)
	}
	b.o.Prefix, b.o.Buf = nil, nil // out holds them
	// A block's buffer is made once at the size a block is cut at (less
	// for an object expected to be smaller, and at most 64 KiB up front),
	// rather than grown from empty by doubling: a copy per growth, in
	// every WAL object and SST.
	if b.err == nil && (o.SizeHint > 0 || !o.Unordered) {
		size := min(o.BlockSize, 64<<10)
		if o.SizeHint > 0 {
			size = min(size, o.SizeHint)
		}
		b.block.buf = make([]byte, 0, size+maxEntryOverhead)
	}
	return b
}

// written is the object's size so far, in finished blocks: the offset of
// the next block.
func (b *Builder) written() int { return len(b.out) - b.base }

// Add appends a row. In ordered mode rows must be strictly increasing by
// (Key asc, Seq desc); in unordered mode Seq must not decrease. A rejected
// row is not added and the builder stays usable. The row is copied.
func (b *Builder) Add(r Row) error {
	if b.err != nil {
		return b.err
	}
	shared, err := b.check(r)
	if err != nil {
		return err
	}
	// Cut early rather than let a large row push a block past maxBlockLen.
	if b.block.entries > 0 && b.block.size()+len(r.Key)+len(r.Value)+maxEntryOverhead > maxBlockLen {
		b.flushBlock()
	}
	if b.block.entries == 0 {
		b.firstKey = append(b.firstKey[:0], r.Key...)
	}
	b.block.add(r, shared, b.o.RestartInterval)
	// A row whose key is all shared with the row before it, and sorts
	// after it, is a version of the same key: the filter has it already.
	if b.o.BloomBitsPerKey > 0 && (b.stats.Entries == 0 || shared < len(r.Key)) {
		b.hashes = append(b.hashes, bloomHash(r.Key))
	}
	b.addStats(r)
	b.lastKey = append(b.lastKey[:0], r.Key...)
	b.lastSeq = r.Seq
	if b.block.size() >= b.o.BlockSize {
		b.flushBlock()
	}
	if b.stats.Entries%yieldRows == 0 {
		b.yield.Yield()
	}
	return nil
}

// yieldRows is how many rows a Builder adds between two yields of the
// processor. A builder runs in the background (a memtable flush, a
// compaction, a WAL object of a second of writes under everysec) for tens
// or hundreds of milliseconds of CPU; without yielding, the Go scheduler lets
// it run 10 ms at a time before preempting it, and every client goroutine
// queued behind it on that processor waits as long: a p99 of 13 ms for
// pipelined SETs on one core. Yielding every 256 rows (some 50 µs of work)
// lets the waiting goroutines run in between, and costs a few hundred ns
// each time; how it yields is the Pacer's choice.
const yieldRows = 256

// check refuses a row that cannot follow the rows added so far, and
// returns how many leading bytes its key shares with the last row's: one
// pass over the two keys decides their order, whether they are the same
// user key (one filter entry) and the block's prefix compression.
func (b *Builder) check(r Row) (shared int, err error) {
	if r.Kind != KindPut && r.Kind != KindDelete {
		return 0, fmt.Errorf("sst: invalid row kind %d", r.Kind)
	}
	if len(r.Key)+len(r.Value) > maxRowLen {
		return 0, fmt.Errorf("sst: row of %d bytes exceeds the limit of %d", len(r.Key)+len(r.Value), maxRowLen)
	}
	if b.stats.Entries == 0 {
		return 0, nil
	}
	shared = commonPrefix(b.lastKey, r.Key)
	if b.o.Unordered {
		if r.Seq < b.lastSeq {
			return 0, fmt.Errorf("sst: seq %d after seq %d in an unordered object", r.Seq, b.lastSeq)
		}
		return shared, nil
	}
	var after bool
	switch last := b.lastKey; {
	case shared < len(last) && shared < len(r.Key):
		after = r.Key[shared] > last[shared]
	case shared == len(last) && shared == len(r.Key): // the same user key
		after = r.Seq < b.lastSeq
	default: // one key is a prefix of the other: the shorter sorts first
		after = shared == len(last)
	}
	if !after {
		return 0, fmt.Errorf("sst: row (%q, seq %d) not after (%q, seq %d)",
			shortKey(r.Key), r.Seq, shortKey(b.lastKey), b.lastSeq)
	}
	return shared, nil
}

// shortKey keeps error messages bounded for large keys.
func shortKey(k []byte) []byte {
	if len(k) > 64 {
		return k[:64]
	}
	return k
}

func (b *Builder) addStats(r Row) {
	s := &b.stats
	if s.Entries == 0 {
		s.MinSeq, s.MaxSeq = r.Seq, r.Seq
		s.Smallest = append([]byte(nil), r.Key...)
		if b.o.Unordered {
			s.Largest = append([]byte(nil), r.Key...)
		}
	}
	s.MinSeq, s.MaxSeq = min(s.MinSeq, r.Seq), max(s.MaxSeq, r.Seq)
	s.Entries++
	if r.Kind == KindDelete {
		s.Tombstones++
	}
	if r.ExpireAt != 0 && (s.EarliestExpiry == 0 || r.ExpireAt < s.EarliestExpiry) {
		s.EarliestExpiry = r.ExpireAt
	}
	if b.o.Unordered { // ordered objects take Smallest/Largest from the ends
		if bytes.Compare(r.Key, s.Smallest) < 0 {
			s.Smallest = append(s.Smallest[:0], r.Key...)
		}
		if bytes.Compare(r.Key, s.Largest) > 0 {
			s.Largest = append(s.Largest[:0], r.Key...)
		}
	}
}

// SetClockTick records the engine clock's tick (ms) at the newest write of
// the object's rows in Stats.ClockTick. The largest value set wins, so
// callers may report the tick of each batch as it is added.
func (b *Builder) SetClockTick(ms int64) {
	if ms > b.stats.ClockTick {
		b.stats.ClockTick = ms
	}
}

// EstimatedSize is roughly the size Finish would return now.
func (b *Builder) EstimatedSize() int {
	return b.written() + b.block.size() + trailerLen + len(b.index) + 4*len(b.idxOffs) + 4 + trailerLen +
		len(b.hashes)*b.o.BloomBitsPerKey/8 + 1 + trailerLen +
		len(b.stats.Smallest) + len(b.lastKey) + 6*binary.MaxVarintLen64 + trailerLen + footerLen
}

// flushBlock writes the current block and its index entry.
func (b *Builder) flushBlock() {
	h := blockHandle{offset: uint64(b.written())}
	b.out, b.scratch = appendBlock(b.out, b.block.finish(), b.o.Compression, b.scratch)
	h.length = uint64(b.written()) - h.offset - trailerLen
	b.idxOffs = append(b.idxOffs, uint32(len(b.index)))
	b.index = appendIndexEntry(b.index, b.firstKey, b.lastKey, h)
	b.block.reset()
}

// Finish writes the index, filter and stats blocks and the footer, and
// returns Prefix followed by the whole object, and its stats. The builder
// cannot be used again.
func (b *Builder) Finish() ([]byte, Stats, error) {
	if b.err != nil {
		return nil, Stats{}, b.err
	}
	b.err = errFinished
	if b.block.entries > 0 {
		b.flushBlock()
	}
	if len(b.index)+4*len(b.idxOffs)+4 > maxBlockLen {
		return nil, Stats{}, fmt.Errorf("sst: index of %d blocks is too large", len(b.idxOffs))
	}
	if !b.o.Unordered && b.stats.Entries > 0 {
		b.stats.Largest = append([]byte(nil), b.lastKey...)
	}
	var f footer
	f.version = formatVersion1
	if b.o.Unordered {
		f.flags |= flagUnordered
	}

	idx := b.index
	for _, off := range b.idxOffs {
		idx = binary.LittleEndian.AppendUint32(idx, off)
	}
	idx = binary.LittleEndian.AppendUint32(idx, uint32(len(b.idxOffs)))
	f.index.offset = uint64(b.written())
	b.out, b.scratch = appendBlock(b.out, idx, b.o.Compression, b.scratch)
	f.index.length = uint64(b.written()) - f.index.offset - trailerLen

	// A bloom filter is incompressible: never spend time trying.
	f.filter.offset = uint64(b.written())
	b.out = appendBloomFilter(b.out, b.hashes, b.o.BloomBitsPerKey, &b.yield)
	f.filter.length = uint64(b.written()) - f.filter.offset
	b.out = appendTrailer(b.out, b.out[b.base+int(f.filter.offset):], CompressionNone)

	f.stats.offset = uint64(b.written())
	b.out, b.scratch = appendBlock(b.out, appendStats(nil, b.stats), b.o.Compression, b.scratch)
	f.stats.length = uint64(b.written()) - f.stats.offset - trailerLen

	out := appendFooter(b.out, f)
	b.out, b.index, b.hashes, b.scratch = nil, nil, nil, nil
	return out, b.stats, nil
}
