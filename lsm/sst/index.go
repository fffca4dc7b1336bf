package sst

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
)

// indexEntry describes one data block (format.go: "Index block").
type indexEntry struct {
	lastKey     []byte
	firstShared int    // firstKey = lastKey[:firstShared] + firstSuffix
	firstSuffix []byte //
	handle      blockHandle
}

func appendIndexEntry(dst, firstKey, lastKey []byte, h blockHandle) []byte {
	shared := commonPrefix(firstKey, lastKey)
	dst = binary.AppendUvarint(dst, uint64(len(lastKey)))
	dst = append(dst, lastKey...)
	dst = binary.AppendUvarint(dst, uint64(shared))
	dst = binary.AppendUvarint(dst, uint64(len(firstKey)-shared))
	dst = append(dst, firstKey[shared:]...)
	return appendBlockHandle(dst, h)
}

func decodeIndexEntry(b []byte) (indexEntry, []byte, error) {
	var e indexEntry
	var err error
	if e.lastKey, b, err = decodeBytes(b); err != nil {
		return indexEntry{}, nil, err
	}
	shared, b, err := decodeUvarint(b)
	if err != nil {
		return indexEntry{}, nil, err
	}
	if shared > uint64(len(e.lastKey)) {
		return indexEntry{}, nil, errBadIndex
	}
	e.firstShared = int(shared)
	if e.firstSuffix, b, err = decodeBytes(b); err != nil {
		return indexEntry{}, nil, err
	}
	if e.handle, b, err = decodeBlockHandle(b); err != nil {
		return indexEntry{}, nil, err
	}
	return e, b, nil
}

// compareFirstKey compares the block's first key with key without
// materializing it.
func (e *indexEntry) compareFirstKey(key []byte) int {
	return compareConcat(e.lastKey[:e.firstShared], e.firstSuffix, key)
}

func (e *indexEntry) appendFirstKey(dst []byte) []byte {
	return append(append(dst, e.lastKey[:e.firstShared]...), e.firstSuffix...)
}

// compareConcat compares p+s with b.
func compareConcat(p, s, b []byte) int {
	if len(b) < len(p) {
		if c := bytes.Compare(p[:len(b)], b); c != 0 {
			return c
		}
		return 1
	}
	if c := bytes.Compare(p, b[:len(p)]); c != 0 {
		return c
	}
	return bytes.Compare(s, b[len(p):])
}

// indexBlock is a view of a decoded index block. Once validated by
// parseIndex, entry lookups cannot fail, so a cached index is not rechecked.
type indexBlock struct {
	entries []byte // entry region
	offsets []byte // n little-endian uint32 entry offsets
	n       int
	heads   *indexHeads // made from this index by its Reader, if large enough: search's first pass
}

// indexView reads the block's header only.
func indexView(b []byte) (indexBlock, error) {
	if len(b) < 4 {
		return indexBlock{}, errBadIndex
	}
	n := uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if n > uint64(len(b)-4)/4 {
		return indexBlock{}, errBadIndex
	}
	end := len(b) - 4 - 4*int(n)
	return indexBlock{entries: b[:end], offsets: b[end : len(b)-4], n: int(n)}, nil
}

// parseIndex validates a whole index block: entries are contiguous and
// decodable, data blocks are back to back from offset 0 up to dataEnd and, in
// an ordered object, keys never decrease.
func parseIndex(b []byte, dataEnd uint64, ordered bool) (indexBlock, error) {
	x, err := indexView(b)
	if err != nil {
		return indexBlock{}, err
	}
	var pos, next uint64
	var prevLast, first []byte
	for i := 0; i < x.n; i++ {
		if uint64(binary.LittleEndian.Uint32(x.offsets[4*i:])) != pos {
			return indexBlock{}, errBadIndex
		}
		e, rest, err := decodeIndexEntry(x.entries[pos:])
		if err != nil {
			return indexBlock{}, errBadIndex
		}
		pos = uint64(len(x.entries) - len(rest))
		h := e.handle
		if h.offset != next || h.length > dataEnd || h.end() > dataEnd {
			return indexBlock{}, errBadIndex
		}
		next = h.end()
		if ordered {
			first = e.appendFirstKey(first[:0])
			if bytes.Compare(first, e.lastKey) > 0 || (i > 0 && bytes.Compare(prevLast, first) > 0) {
				return indexBlock{}, errBadIndex
			}
			prevLast = e.lastKey
		}
	}
	if pos != uint64(len(x.entries)) || next != dataEnd {
		return indexBlock{}, errBadIndex
	}
	return x, nil
}

// entry returns entry i. REQUIRES: the block passed parseIndex, 0 <= i < n.
func (x indexBlock) entry(i int) indexEntry {
	off := binary.LittleEndian.Uint32(x.offsets[4*i:])
	e, _, err := decodeIndexEntry(x.entries[off:])
	if err != nil {
		// Unreachable for a validated block; an empty entry keeps callers
		// safe (they see a zero-length block and report corruption).
		return indexEntry{}
	}
	return e
}

// lastKey returns the last key of block i without decoding the rest.
func (x indexBlock) lastKey(i int) []byte {
	off := binary.LittleEndian.Uint32(x.offsets[4*i:])
	k, _, err := decodeBytes(x.entries[off:])
	if err != nil {
		return nil
	}
	return k
}

// search returns the first block whose last key is >= key (n if none): the
// block holding the first row with a key >= key.
func (x indexBlock) search(key []byte) int {
	if h := x.heads; h != nil {
		lo, hi := h.bounds(key)
		return x.searchIn(lo, hi, key)
	}
	return x.searchIn(0, x.n, key)
}

// searchIn is search when the answer is known to be in [lo, hi]: every
// block before lo ends below key, and block hi, if any, at or above it.
func (x indexBlock) searchIn(lo, hi int, key []byte) int {
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(x.lastKey(mid), key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// indexHeads lets an index search compare integers instead of keys. The
// index's last keys share the prefix of the first and the last of them (they
// are sorted); words holds, for each block, the 8 bytes of its last key
// after that prefix, big-endian and zero-padded, so that comparing two words
// orders the keys as comparing them would, except that equal words may hide
// different keys. A search first finds the blocks whose word equals the
// key's in this dense array (8 bytes a block, where the index spends ~40
// scattered over the block and its offset table: a binary search over a
// large index missed the CPU cache at nearly every step), and compares whole
// keys only among those, usually one.
type indexHeads struct {
	prefix []byte
	words  []uint64
}

// minHeadsBlocks is the smallest index given heads: below it a plain search
// is a handful of comparisons anyway.
const minHeadsBlocks = 16

// newIndexHeads returns the heads of a validated ordered index, or nil if it
// is too small to need them.
func newIndexHeads(x indexBlock) *indexHeads {
	if x.n < minHeadsBlocks {
		return nil
	}
	first, last := x.lastKey(0), x.lastKey(x.n-1)
	p := commonPrefix(first, last)
	h := &indexHeads{prefix: bytes.Clone(first[:p]), words: make([]uint64, x.n)}
	for i := range h.words {
		h.words[i] = headWord(x.lastKey(i)[p:])
	}
	return h
}

// headWord is the first 8 bytes of b, big-endian, zero-padded.
func headWord(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var w [8]byte
	copy(w[:], b)
	return binary.BigEndian.Uint64(w[:])
}

// bounds returns [lo, hi] for searchIn: lo is the first block whose word is
// not below key's, hi the first whose word is above it, so only the blocks
// between, whose words equal key's, need their keys compared.
func (h *indexHeads) bounds(key []byte) (lo, hi int) {
	n := len(h.words)
	p := len(h.prefix)
	if len(key) < p || !bytes.Equal(key[:p], h.prefix) {
		// Every last key starts with the prefix: key is below them all or
		// above them all.
		if bytes.Compare(key, h.prefix) < 0 {
			return 0, 0
		}
		return n, n
	}
	w := headWord(key[p:])
	lo, _ = slices.BinarySearch(h.words, w)
	if w == math.MaxUint64 {
		return lo, n
	}
	hi, _ = slices.BinarySearch(h.words[lo:], w+1)
	return lo, lo + hi
}
