package sst

import (
	"bytes"
	"fmt"
)

// DecodeAll decodes a whole object held in memory, ordered (SST) or
// unordered (WAL), verifying every checksum and the row order. Rows come in
// stored order and own their memory: they never alias data.
func DecodeAll(data []byte, name string) ([]Row, Stats, error) {
	f, err := decodeObjectFooter(data, name)
	if err != nil {
		return nil, Stats{}, err
	}
	ordered := f.flags&flagUnordered == 0
	idx, rest, err := decodeBlock(data[f.index.offset:], f.index.length, maxBlockLen)
	if err != nil {
		return nil, Stats{}, corruptErr(name, int64(f.index.offset), err)
	}
	x, err := parseIndex(idx, f.index.offset, ordered)
	if err != nil {
		return nil, Stats{}, corruptErr(name, int64(f.index.offset), err)
	}
	fb, rest, err := decodeBlock(rest, f.filter.length, maxBlockLen)
	if err == nil {
		_, err = parseBloomFilter(fb)
	}
	if err != nil {
		return nil, Stats{}, corruptErr(name, int64(f.filter.offset), err)
	}
	sb, _, err := decodeBlock(rest, f.stats.length, maxBlockLen)
	if err != nil {
		return nil, Stats{}, corruptErr(name, int64(f.stats.offset), err)
	}
	stats, sb, err := decodeStats(sb)
	if err != nil || len(sb) != 0 {
		return nil, Stats{}, corruptErr(name, int64(f.stats.offset), errBadStats)
	}
	// Entries is checksummed, but bound the allocation by what data can hold.
	rows := make([]Row, 0, min(stats.Entries, uint64(len(data))/8))
	d := rowDecoder{name: name, ordered: ordered, rows: rows}
	for i := 0; i < x.n; i++ {
		if err := d.block(data, x.entry(i)); err != nil {
			return nil, Stats{}, err
		}
	}
	if uint64(len(d.rows)) != stats.Entries {
		return nil, Stats{}, corruptErr(name, int64(f.stats.offset),
			fmt.Errorf("stats count %d rows, blocks hold %d", stats.Entries, len(d.rows)))
	}
	return d.rows, stats, nil
}

// decodeObjectFooter decodes and checks the footer of a whole object.
func decodeObjectFooter(data []byte, name string) (footer, error) {
	if len(data) < footerLen {
		return footer{}, corruptErr(name, 0, errTruncated)
	}
	footerOff := int64(len(data) - footerLen)
	f, _, err := decodeFooter(data[footerOff:])
	if err != nil {
		return footer{}, corruptErr(name, footerOff, err)
	}
	if f.version != formatVersion1 {
		return footer{}, fmt.Errorf("sst: %s: unsupported format version %d", name, f.version)
	}
	if err := f.validate(int64(len(data))); err != nil {
		return footer{}, corruptErr(name, footerOff, err)
	}
	return f, nil
}

// rowDecoder accumulates the rows of DecodeAll, checking their order across
// blocks and copying them into an arena.
type rowDecoder struct {
	name    string
	ordered bool
	rows    []Row
	arena   []byte
	bi      blockIter
}

const arenaChunk = 64 << 10

// alloc returns n bytes of the arena, with its capacity clipped so appends by
// the caller cannot overwrite a neighbour.
func (d *rowDecoder) alloc(n int) []byte {
	if cap(d.arena)-len(d.arena) < n {
		d.arena = make([]byte, 0, max(n, arenaChunk))
	}
	start := len(d.arena)
	d.arena = d.arena[:start+n]
	return d.arena[start : start+n : start+n]
}

func (d *rowDecoder) block(data []byte, e indexEntry) error {
	off := int64(e.handle.offset)
	contents, _, err := decodeBlock(data[e.handle.offset:], e.handle.length, maxBlockLen)
	if err != nil {
		return corruptErr(d.name, off, err)
	}
	if err := d.bi.init(contents); err != nil {
		return corruptErr(d.name, off, err)
	}
	first := true
	for ok := d.bi.first(); ok; ok = d.bi.nextRow() {
		r := *d.bi.row()
		if first && e.compareFirstKey(r.Key) != 0 {
			return corruptErr(d.name, off, errBadIndex)
		}
		if n := len(d.rows); n > 0 && !d.inOrder(&d.rows[n-1], &r) {
			return corruptErr(d.name, off, errBadOrder)
		}
		buf := d.alloc(len(r.Key) + len(r.Value))
		k := copy(buf, r.Key)
		copy(buf[k:], r.Value)
		r.Key, r.Value = buf[:k:k], buf[k:]
		d.rows = append(d.rows, r)
		first = false
	}
	if d.bi.err != nil {
		return corruptErr(d.name, off, d.bi.err)
	}
	if first || !bytes.Equal(d.rows[len(d.rows)-1].Key, e.lastKey) {
		return corruptErr(d.name, off, errBadIndex) // empty block or index disagrees
	}
	return nil
}

func (d *rowDecoder) inOrder(prev, cur *Row) bool {
	if d.ordered {
		return Compare(prev.Key, prev.Seq, cur.Key, cur.Seq) < 0
	}
	return prev.Seq <= cur.Seq
}
