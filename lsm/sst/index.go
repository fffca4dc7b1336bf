package sst

import (
	"bytes"
	"encoding/binary"
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
	lo, hi := 0, x.n
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
