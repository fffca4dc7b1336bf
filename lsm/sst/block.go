package sst

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// blockWriter builds one data block (format.go: "Data block").
type blockWriter struct {
	buf      []byte
	restarts []uint32
	counter  int // entries since the last restart point
	entries  int
}

// add appends r, which shares its first shared bytes with the key of the
// row added before it (the caller's to work out: the builder compares the
// two keys once for the order check, the filter and this). restartInterval
// is at least 1.
func (w *blockWriter) add(r Row, shared, restartInterval int) {
	if w.entries == 0 || w.counter >= restartInterval {
		w.restarts = append(w.restarts, uint32(len(w.buf)))
		w.counter = 0
		shared = 0
	}
	unshared := r.Key[shared:]
	if shared|len(unshared)|len(r.Value) < 0x80 { // three one-byte uvarints
		w.buf = append(w.buf, byte(shared), byte(len(unshared)), byte(len(r.Value)))
	} else {
		w.buf = binary.AppendUvarint(w.buf, uint64(shared))
		w.buf = binary.AppendUvarint(w.buf, uint64(len(unshared)))
		w.buf = binary.AppendUvarint(w.buf, uint64(len(r.Value)))
	}
	w.buf = append(w.buf, unshared...)
	w.buf = binary.AppendUvarint(w.buf, r.Seq)
	if r.ExpireAt == 0 { // most rows: its varint is one zero byte
		w.buf = append(w.buf, byte(r.Kind), 0)
	} else {
		w.buf = append(w.buf, byte(r.Kind))
		w.buf = binary.AppendVarint(w.buf, r.ExpireAt)
	}
	w.buf = append(w.buf, r.Value...)
	w.counter++
	w.entries++
}

// size is the decoded size the block would have if finished now.
func (w *blockWriter) size() int { return len(w.buf) + 4*len(w.restarts) + 4 }

// finish appends the restart array and returns the decoded block. The result
// is valid until the next reset.
func (w *blockWriter) finish() []byte {
	for _, r := range w.restarts {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, r)
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(w.restarts)))
	return w.buf
}

func (w *blockWriter) reset() {
	w.buf = w.buf[:0]
	w.restarts = w.restarts[:0]
	w.counter = 0
	w.entries = 0
}

// maxEntryOverhead bounds the bytes an entry adds besides its key and value
// (three length uvarints, seq, kind, expireAt, a restart slot).
const maxEntryOverhead = 3*binary.MaxVarintLen64 + binary.MaxVarintLen64 + 1 + binary.MaxVarintLen64 + 4

func commonPrefix(a, b []byte) int {
	i := 0
	for len(a) >= 8 && len(b) >= 8 {
		if x := binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b); x != 0 {
			return i + bits.TrailingZeros64(x)/8 // the first byte that differs
		}
		a, b, i = a[8:], b[8:], i+8
	}
	n := min(len(a), len(b))
	j := 0
	for j < n && a[j] == b[j] {
		j++
	}
	return i + j
}

// blockIter walks the rows of one decoded data block. Row slices alias the
// block (value) and the iterator's key buffer (key), so no row allocates.
// Errors are the plain decoding errors of format.go; callers add the object
// name and offset.
type blockIter struct {
	data        []byte
	restarts    int // offset of the restart array; entries live in data[:restarts]
	numRestarts int
	offset      int // offset of the current entry
	next        int // offset of the entry after the current one
	valid       bool
	err         error

	key    []byte // the current key, built from the shared prefixes
	shared int    // how many leading bytes key shares with the key before it
	cur    Row    // the current row: its Key is key, its Value aliases data
}

// init points the iterator at a block, reusing its key buffer. It validates
// only the restart array header; entries are checked as they are decoded.
func (it *blockIter) init(data []byte) error {
	*it = blockIter{key: it.key[:0]}
	if len(data) < 4 {
		return errBadRestarts
	}
	n := uint64(binary.LittleEndian.Uint32(data[len(data)-4:]))
	if n == 0 || n > uint64(len(data)-4)/4 {
		return errBadRestarts
	}
	it.data = data
	it.numRestarts = int(n)
	it.restarts = len(data) - 4 - 4*int(n)
	return nil
}

// restartOffset returns the entry offset of restart point i.
func (it *blockIter) restartOffset(i int) (int, bool) {
	off := int(binary.LittleEndian.Uint32(it.data[it.restarts+4*i:]))
	return off, off < it.restarts
}

// restartKey returns the (unshared, whole) key of restart point i without
// copying it.
func (it *blockIter) restartKey(i int) ([]byte, bool) {
	off, ok := it.restartOffset(i)
	if !ok {
		return nil, false
	}
	b := it.data[off:it.restarts]
	shared, b, err := decodeUvarint(b)
	if err != nil || shared != 0 {
		return nil, false
	}
	unshared, b, err := decodeUvarint(b)
	if err != nil {
		return nil, false
	}
	_, b, err = decodeUvarint(b) // value length
	if err != nil || unshared > uint64(len(b)) {
		return nil, false
	}
	return b[:unshared], true
}

// decodeAt decodes the entry at off into the iterator's current row. The
// previous row's key must be in it.key (for the shared prefix).
func (it *blockIter) decodeAt(off int) bool {
	if off >= it.restarts {
		it.valid = false
		return false
	}
	b := it.data[:it.restarts]
	var shared, unshared, vlen uint64
	var p int
	if h := b[off:min(off+3, len(b))]; len(h) == 3 && h[0]|h[1]|h[2] < 0x80 {
		// The usual entry: a shared and an unshared length and a value
		// length of one byte each.
		shared, unshared, vlen, p = uint64(h[0]), uint64(h[1]), uint64(h[2]), off+3
	} else {
		shared, p = uvarintAt(b, off)
		unshared, p = uvarintAt(b, p)
		vlen, p = uvarintAt(b, p)
	}
	if p < 0 || shared > uint64(len(it.key)) || unshared > uint64(len(b)-p) {
		return it.fail(errBadEntry)
	}
	it.key = append(it.key[:shared], b[p:p+int(unshared)]...)
	it.shared = int(shared)
	seq, p := uvarintAt(b, p+int(unshared))
	if p < 0 || p >= len(b) || b[p] > byte(KindPut) {
		return it.fail(errBadEntry)
	}
	kind := Kind(b[p])
	var expireAt int64
	if p+1 < len(b) && b[p+1] == 0 {
		p += 2 // no expiry: most rows
	} else if expireAt, p = varintAt(b, p+1); p < 0 {
		return it.fail(errBadEntry)
	}
	if vlen > uint64(len(b)-p) {
		return it.fail(errBadEntry)
	}
	end := p + int(vlen)
	// Field by field: a composite literal built the row aside and copied
	// it, a sixth of a row's decoding.
	r := &it.cur
	r.Key, r.Seq, r.Kind, r.ExpireAt, r.Value = it.key, seq, kind, expireAt, b[p:end:end]
	it.offset = off
	it.next = end
	it.valid = true
	return true
}

func (it *blockIter) fail(err error) bool {
	it.valid = false
	if it.err == nil {
		it.err = err
	}
	return false
}

func (it *blockIter) first() bool {
	if it.data == nil {
		return false
	}
	it.key = it.key[:0]
	return it.decodeAt(0)
}

func (it *blockIter) nextRow() bool {
	if !it.valid {
		return false
	}
	return it.decodeAt(it.next)
}

// seekGE positions at the first row whose key is >= key: the newest version
// of that key, since versions are stored newest first.
func (it *blockIter) seekGE(key []byte) bool {
	if it.data == nil {
		return false
	}
	// Find the first restart whose key is >= key; the answer lies after the
	// restart before it (a key's versions may start before that restart).
	lo, hi := 0, it.numRestarts
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, ok := it.restartKey(mid)
		if !ok {
			return it.fail(errBadRestarts)
		}
		if bytes.Compare(k, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	start := max(lo-1, 0)
	off, ok := it.restartOffset(start)
	if !ok {
		return it.fail(errBadRestarts)
	}
	it.key = it.key[:0]
	for ok := it.decodeAt(off); ok; ok = it.decodeAt(it.next) {
		if bytes.Compare(it.key, key) >= 0 {
			return true
		}
	}
	return false
}

// row returns the current row, valid until the iterator moves.
func (it *blockIter) row() *Row { return &it.cur }
