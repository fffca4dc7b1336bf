package sst

// The SST wire format, version 1. WAL objects use the same format with the
// "unordered" footer flag set. All fixed-width integers are little-endian;
// uvarint/varint are encoding/binary's.
//
// An object is a sequence of blocks, each followed by its trailer, then a
// fixed-size footer. Blocks are back to back: there are no gaps or padding, so
// every byte of an object is covered by a block checksum or the footer's.
//
//	+---------+---------+-----+-----------+---------+-------+---------+--------+---------+-------+---------+--------+
//	| data  0 | trailer | ... | data  n-1 | trailer | index | trailer | filter | trailer | stats | trailer | footer |
//	+---------+---------+-----+-----------+---------+-------+---------+--------+---------+-------+---------+--------+
//	^ offset 0                                      ^ footer.index.offset                         footer: last 64 bytes
//
// Block trailer (5 bytes), after the block's stored (possibly compressed) bytes:
//
//	+------------------+---------------------------------------------------+
//	| compression (1B) | crc32c (4B) over the stored bytes then the type   |
//	+------------------+---------------------------------------------------+
//
// A block handle (offset, length) names the stored bytes without the trailer.
// Compression is chosen per block: a block that does not shrink by at least
// 1/8 is stored uncompressed. The filter block is never compressed. A decoded
// block is at most maxBlockLen bytes.
//
// Data block (decoded):
//
//	+---------+-----+---------+-------------------+-----+-----------------------+------------------+
//	| entry 0 | ... | entry k | restart 0 (u32)   | ... | restart r-1 (u32)     | r (u32), r >= 1  |
//	+---------+-----+---------+-------------------+-----+-----------------------+------------------+
//
//	entry: shared uvarint | unshared uvarint | valueLen uvarint | key[shared:] (unshared bytes)
//	       | seq uvarint | kind (1B) | expireAt varint | value (valueLen bytes)
//
// An entry shares its first `shared` key bytes with the previous entry's key.
// Every restartInterval-th entry (and the first) is a restart point: shared
// is 0 and its offset is listed in the restart array, so a seek binary
// searches the restarts and then scans at most restartInterval entries.
//
// Index block (decoded), one entry per data block in object order:
//
//	+---------+-----+-------------+--------------+-----+----------------+-------+
//	| entry 0 | ... | entry n-1   | offset 0 u32 | ... | offset n-1 u32 | n u32 |
//	+---------+-----+-------------+--------------+-----+----------------+-------+
//
//	entry: lastLen uvarint | lastKey | firstShared uvarint | firstUnshared uvarint
//	       | firstKey[firstShared:] | blockOffset uvarint | blockLength uvarint
//
// lastKey/firstKey are the user keys of the block's last and first rows;
// firstKey is stored as a prefix shared with lastKey plus a suffix. In an
// ordered object the last key of block i is <= the first key of block i+1
// (equal when the versions of one key span the boundary).
//
// Filter block: a bloom filter over the distinct user keys:
//
//	+----------------------+--------+
//	| bits (m/8 bytes)     | k (1B) |     empty block = no filter
//	+----------------------+--------+
//
//	h = xxhash64(key); h1 = low 32 bits; h2 = high 32 bits
//	probe i in [0,k): x = h1 + i*h2 (mod 2^32); bit (x*m)>>32 must be set
//
// Stats block:
//
//	smallestLen uvarint | smallest | largestLen uvarint | largest | minSeq uvarint
//	| maxSeq uvarint | entries uvarint | tombstones uvarint | earliestExpiry varint
//	| clockTick varint
//
// Footer (64 bytes):
//
//	 0: index offset u64     8: index length u64
//	16: filter offset u64   24: filter length u64
//	32: stats offset u64    40: stats length u64
//	48: format version u16  50: flags u16 (bit 0: unordered)
//	52: crc32c u32 over bytes [0, 52)
//	56: magic (8 bytes)

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Compression selects how an SST's blocks are compressed. The value is
// recorded per block, so readers need no option to decode.
type Compression uint8

// Compression types are part of the format: never renumber.
const (
	CompressionNone Compression = 0
	CompressionS2   Compression = 1
	CompressionZstd Compression = 2
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionS2:
		return "s2"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// Part of the format.
const (
	formatVersion1 = 1 // the only version so far; versions are only added
	footerLen      = 64
	footerMagic    = "\x89STRATA\n" // high bit and newline catch text-mode mangling
	trailerLen     = 5
	flagUnordered  = 1 << 0
	knownFlags     = flagUnordered

	// maxBlockLen bounds a decoded block, so a damaged length can never make a
	// reader allocate without limit. The builder refuses rows that would not
	// fit in a block of their own.
	maxBlockLen = 1 << 30
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Decoding failures below the object level. Readers wrap them with the
// object name, the offset and ErrCorruption (see corruptErr).
var (
	errBadChecksum    = errors.New("bad block checksum")
	errBadCompression = errors.New("bad compression type")
	errDecompress     = errors.New("bad compressed block")
	errTruncated      = errors.New("truncated block")
	errBadVarint      = errors.New("bad varint")
	errBadEntry       = errors.New("bad block entry")
	errBadRestarts    = errors.New("bad restart array")
	errBadIndex       = errors.New("bad index block")
	errBadFilter      = errors.New("bad filter block")
	errBadStats       = errors.New("bad stats block")
	errBadMagic       = errors.New("bad magic")
	errBadFooter      = errors.New("bad footer")
	errBadOrder       = errors.New("rows out of order")
)

// corruptErr wraps a decoding failure into the project's corruption error.
func corruptErr(name string, off int64, err error) error {
	return fmt.Errorf("sst: %s: %v at offset %d: %w", name, err, off, ErrCorruption)
}

// blockHandle locates a block's stored bytes (trailer excluded).
type blockHandle struct {
	offset, length uint64
}

// end is the offset just past the block's trailer.
func (h blockHandle) end() uint64 { return h.offset + h.length + trailerLen }

func appendBlockHandle(dst []byte, h blockHandle) []byte {
	dst = binary.AppendUvarint(dst, h.offset)
	return binary.AppendUvarint(dst, h.length)
}

func decodeBlockHandle(b []byte) (blockHandle, []byte, error) {
	off, b, err := decodeUvarint(b)
	if err != nil {
		return blockHandle{}, nil, err
	}
	n, b, err := decodeUvarint(b)
	if err != nil {
		return blockHandle{}, nil, err
	}
	return blockHandle{offset: off, length: n}, b, nil
}

// decodeUvarint is binary.Uvarint with the remainder and an error.
func decodeUvarint(b []byte) (uint64, []byte, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), b[1:], nil
	}
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errBadVarint
	}
	return v, b[n:], nil
}

// uvarintAt decodes the uvarint at b[p:]: its value and the offset after
// it, or p < 0 if it is malformed or p already was. Rows decode field by
// field with it, without the slices and errors of decodeUvarint.
func uvarintAt(b []byte, p int) (uint64, int) {
	var v uint64
	for s := uint(0); uint(p) < uint(len(b)); s += 7 {
		c := b[p]
		p++
		if c < 0x80 {
			if s == 63 && c > 1 {
				break // overflows 64 bits
			}
			return v | uint64(c)<<s, p
		}
		if s == 63 {
			break
		}
		v |= uint64(c&0x7f) << s
	}
	return 0, -1
}

// varintAt is uvarintAt for a zig-zag varint.
func varintAt(b []byte, p int) (int64, int) {
	u, p := uvarintAt(b, p)
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x, p
}

func decodeVarint(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, errBadVarint
	}
	return v, b[n:], nil
}

// decodeBytes reads a uvarint length and that many bytes.
func decodeBytes(b []byte) ([]byte, []byte, error) {
	n, b, err := decodeUvarint(b)
	if err != nil {
		return nil, nil, err
	}
	if n > uint64(len(b)) {
		return nil, nil, errTruncated
	}
	return b[:n], b[n:], nil
}

// footer is the decoded fixed-size tail of an object.
type footer struct {
	index, filter, stats blockHandle
	version              uint16
	flags                uint16
}

func appendFooter(dst []byte, f footer) []byte {
	start := len(dst)
	for _, h := range [...]blockHandle{f.index, f.filter, f.stats} {
		dst = binary.LittleEndian.AppendUint64(dst, h.offset)
		dst = binary.LittleEndian.AppendUint64(dst, h.length)
	}
	dst = binary.LittleEndian.AppendUint16(dst, f.version)
	dst = binary.LittleEndian.AppendUint16(dst, f.flags)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable))
	return append(dst, footerMagic...)
}

// decodeFooter decodes the footer at the start of b (exactly footerLen bytes
// are consumed). The version is checked by the caller, which can tell an
// unknown version from damage.
func decodeFooter(b []byte) (footer, []byte, error) {
	if len(b) < footerLen {
		return footer{}, nil, errTruncated
	}
	if string(b[56:64]) != footerMagic {
		return footer{}, nil, errBadMagic
	}
	if crc32.Checksum(b[:52], crcTable) != binary.LittleEndian.Uint32(b[52:56]) {
		return footer{}, nil, errBadFooter
	}
	var f footer
	hs := [...]*blockHandle{&f.index, &f.filter, &f.stats}
	for i, h := range hs {
		h.offset = binary.LittleEndian.Uint64(b[16*i:])
		h.length = binary.LittleEndian.Uint64(b[16*i+8:])
	}
	f.version = binary.LittleEndian.Uint16(b[48:])
	f.flags = binary.LittleEndian.Uint16(b[50:])
	if f.flags&^knownFlags != 0 {
		return footer{}, nil, errBadFooter
	}
	return f, b[footerLen:], nil
}

// validate checks that the meta blocks are back to back and end at the
// footer of an object of the given size.
func (f footer) validate(size int64) error {
	if size < footerLen {
		return errTruncated
	}
	footerOff := uint64(size) - footerLen
	for _, h := range [...]blockHandle{f.index, f.filter, f.stats} {
		if h.offset > footerOff || h.length > footerOff || h.end() > footerOff {
			return errBadFooter
		}
	}
	if f.index.end() != f.filter.offset || f.filter.end() != f.stats.offset || f.stats.end() != footerOff {
		return errBadFooter
	}
	return nil
}

// Shared codecs. zstd's EncodeAll and DecodeAll are safe for concurrent use,
// and one instance keeps their (large) state pooled for the whole process.
var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

func zstdCodecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		var err error
		// Our trailer checksums the stored bytes, so zstd's own CRC is
		// redundant. Single-segment frames always carry the content size,
		// which the decoder needs to bound its output.
		zstdEnc, err = zstd.NewWriter(nil, zstd.WithEncoderCRC(false),
			zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithSingleSegment(true))
		if err != nil {
			panic(fmt.Sprintf("sst: zstd encoder: %v", err)) // options are constant
		}
		zstdDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(maxBlockLen), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			panic(fmt.Sprintf("sst: zstd decoder: %v", err))
		}
	})
	return zstdEnc, zstdDec
}

// appendBlock appends raw as a stored block plus trailer, compressed with c
// when that saves at least 1/8. scratch is reused across calls and returned.
func appendBlock(dst, raw []byte, c Compression, scratch []byte) (out, scratchOut []byte) {
	stored, typ := raw, CompressionNone
	inDst := false // stored already sits at the end of dst
	switch c {
	case CompressionS2:
		// Straight into dst where it has room (the block is not copied
		// again), else through scratch, rather than growing dst.
		n, at := s2.MaxEncodedLen(len(raw)), len(dst)
		if inDst = n > 0 && cap(dst)-at >= n; inDst {
			stored = s2.Encode(dst[at:at+n], raw)
		} else {
			if cap(scratch) < n && n > 0 {
				scratch = make([]byte, n)
			}
			scratch = s2.Encode(scratch[:cap(scratch)], raw)
			stored = scratch
		}
		typ = CompressionS2
	case CompressionZstd:
		enc, _ := zstdCodecs()
		scratch = enc.EncodeAll(raw, scratch[:0])
		stored, typ = scratch, CompressionZstd
	}
	if typ != CompressionNone && len(stored) > len(raw)-len(raw)/8 {
		stored, typ, inDst = raw, CompressionNone, false
	}
	if inDst {
		dst = dst[:len(dst)+len(stored)]
	} else {
		dst = append(dst, stored...)
	}
	return appendTrailer(dst, stored, typ), scratch
}

func appendTrailer(dst, stored []byte, typ Compression) []byte {
	dst = append(dst, byte(typ))
	return binary.LittleEndian.AppendUint32(dst, blockChecksum(stored, typ))
}

func blockChecksum(stored []byte, typ Compression) uint32 {
	t := [1]byte{byte(typ)}
	return crc32.Update(crc32.Checksum(stored, crcTable), crcTable, t[:])
}

// decodeBlock verifies the checksum of the block whose stored bytes are the
// first n bytes of b (its trailer follows) and returns the decoded contents.
// Uncompressed contents alias b. At most limit decoded bytes are accepted.
func decodeBlock(b []byte, n uint64, limit int) (contents, rest []byte, err error) {
	if n > uint64(len(b)) || uint64(len(b))-n < trailerLen {
		return nil, nil, errTruncated
	}
	stored, tr := b[:n], b[n:n+trailerLen]
	typ := Compression(tr[0])
	if blockChecksum(stored, typ) != binary.LittleEndian.Uint32(tr[1:]) {
		return nil, nil, errBadChecksum
	}
	contents, err = decompress(typ, stored, limit)
	if err != nil {
		return nil, nil, err
	}
	return contents, b[n+trailerLen:], nil
}

// decompress decodes stored bytes of type typ into a new buffer of at most
// limit bytes (uncompressed bytes are returned as is).
func decompress(typ Compression, stored []byte, limit int) ([]byte, error) {
	switch typ {
	case CompressionNone:
		if len(stored) > limit {
			return nil, errDecompress
		}
		return stored, nil
	case CompressionS2:
		n, err := s2.DecodedLen(stored)
		if err != nil || n > limit {
			return nil, errDecompress
		}
		out, err := s2.Decode(make([]byte, n), stored)
		if err != nil || len(out) != n {
			return nil, errDecompress
		}
		return out, nil
	case CompressionZstd:
		// Size the output from the frame header so a hostile header cannot
		// make us allocate more than limit; DecodeAll is capped at cap(dst).
		var h zstd.Header
		if err := h.Decode(stored); err != nil || !h.HasFCS || h.FrameContentSize > uint64(limit) {
			return nil, errDecompress
		}
		_, dec := zstdCodecs()
		want := int(h.FrameContentSize)
		out, err := dec.DecodeAll(stored, make([]byte, 0, want))
		if err != nil || len(out) != want {
			return nil, errDecompress
		}
		return out, nil
	}
	return nil, errBadCompression
}

// appendStats encodes s as a stats block.
func appendStats(dst []byte, s Stats) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s.Smallest)))
	dst = append(dst, s.Smallest...)
	dst = binary.AppendUvarint(dst, uint64(len(s.Largest)))
	dst = append(dst, s.Largest...)
	dst = binary.AppendUvarint(dst, s.MinSeq)
	dst = binary.AppendUvarint(dst, s.MaxSeq)
	dst = binary.AppendUvarint(dst, s.Entries)
	dst = binary.AppendUvarint(dst, s.Tombstones)
	dst = binary.AppendVarint(dst, s.EarliestExpiry)
	return binary.AppendVarint(dst, s.ClockTick)
}

// decodeStats decodes a stats block. The returned keys are copies, so Stats
// never pin a block.
func decodeStats(b []byte) (Stats, []byte, error) {
	var s Stats
	var smallest, largest []byte
	var err error
	if smallest, b, err = decodeBytes(b); err != nil {
		return Stats{}, nil, err
	}
	if largest, b, err = decodeBytes(b); err != nil {
		return Stats{}, nil, err
	}
	for _, p := range [...]*uint64{&s.MinSeq, &s.MaxSeq, &s.Entries, &s.Tombstones} {
		if *p, b, err = decodeUvarint(b); err != nil {
			return Stats{}, nil, err
		}
	}
	for _, p := range [...]*int64{&s.EarliestExpiry, &s.ClockTick} {
		if *p, b, err = decodeVarint(b); err != nil {
			return Stats{}, nil, err
		}
	}
	if len(smallest) > 0 {
		s.Smallest = append([]byte(nil), smallest...)
	}
	if len(largest) > 0 {
		s.Largest = append([]byte(nil), largest...)
	}
	return s, b, nil
}
