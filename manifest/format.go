package manifest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/oklog/ulid/v2"

	"github.com/stratakv/strata/lsm/sst"
)

// The manifest object, format version 1. Integers are little-endian when
// fixed-width; uvarint and varint (zig-zag) are those of encoding/binary and
// must be minimal, so every manifest has exactly one encoding.
//
//	+----------+-----------+------------------+------------+
//	| magic    | version   | body             | checksum   |
//	| 8 bytes  | uint16    | (per version)    | uint32     |
//	+----------+-----------+------------------+------------+
//	checksum = crc32c (Castagnoli) of magic, version and body.
//	The magic, the version field and the trailing checksum are the same in
//	every version; only the body may change.
//
//	body (version 1):
//	  id                  uvarint   the manifest's own id; equals the id in its object name
//	  writer_epoch        uvarint
//	  compactor_epoch     uvarint
//	  replay_after_wal_id uvarint
//	  next_wal_id         uvarint
//	  last_seq            uvarint
//	  clock_tick          varint
//	  next_run_id         uvarint
//	  l0_count            uvarint,  then l0_count  × sst   (newest first)
//	  run_count           uvarint,  then run_count × run   (newest first)
//
//	run:
//	  id                  uvarint
//	  sst_count           uvarint,  then sst_count × sst   (key order)
//
//	sst:
//	  ulid                16 bytes  (binary ULID)
//	  size                uvarint   object size in bytes
//	  smallest            uvarint length, then bytes
//	  largest             uvarint length, then bytes
//	  min_seq             uvarint
//	  max_seq             uvarint
//	  entries             uvarint
//	  tombstones          uvarint
//	  earliest_expiry     varint
//	  clock_tick          varint
const (
	magic = "STRATAMF" // part of the format

	// FormatVersion is the version AppendEncoded writes. Versions are only
	// ever added; Decode keeps reading every older one.
	FormatVersion = 1

	headerLen   = len(magic) + 2
	checksumLen = 4

	// minSSTLen and minRunLen are the smallest possible encodings, used to
	// reject element counts that cannot fit in the remaining bytes before
	// allocating for them.
	minSSTLen = 16 + 9
	minRunLen = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendEncoded appends the encoding of m (the current format version) to dst.
func (m *Manifest) AppendEncoded(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, magic...)
	dst = binary.LittleEndian.AppendUint16(dst, FormatVersion)
	dst = binary.AppendUvarint(dst, m.ID)
	dst = binary.AppendUvarint(dst, m.WriterEpoch)
	dst = binary.AppendUvarint(dst, m.CompactorEpoch)
	dst = binary.AppendUvarint(dst, m.ReplayAfterWALID)
	dst = binary.AppendUvarint(dst, m.NextWALID)
	dst = binary.AppendUvarint(dst, m.LastSeq)
	dst = binary.AppendVarint(dst, m.ClockTick)
	dst = binary.AppendUvarint(dst, m.NextRunID)
	dst = appendSSTs(dst, m.L0)
	dst = binary.AppendUvarint(dst, uint64(len(m.Runs)))
	for i := range m.Runs {
		dst = appendRun(dst, &m.Runs[i])
	}
	sum := crc32.Checksum(dst[start:], castagnoli)
	return binary.LittleEndian.AppendUint32(dst, sum)
}

func appendRun(dst []byte, r *Run) []byte {
	dst = binary.AppendUvarint(dst, r.ID)
	return appendSSTs(dst, r.SSTs)
}

func appendSSTs(dst []byte, ssts []SST) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ssts)))
	for i := range ssts {
		dst = appendSST(dst, &ssts[i])
	}
	return dst
}

func appendSST(dst []byte, s *SST) []byte {
	dst = append(dst, s.ID[:]...)
	dst = binary.AppendUvarint(dst, s.Size)
	dst = appendBytes(dst, s.Stats.Smallest)
	dst = appendBytes(dst, s.Stats.Largest)
	dst = binary.AppendUvarint(dst, s.Stats.MinSeq)
	dst = binary.AppendUvarint(dst, s.Stats.MaxSeq)
	dst = binary.AppendUvarint(dst, s.Stats.Entries)
	dst = binary.AppendUvarint(dst, s.Stats.Tombstones)
	dst = binary.AppendVarint(dst, s.Stats.EarliestExpiry)
	return binary.AppendVarint(dst, s.Stats.ClockTick)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// Decode decodes a manifest object. name labels errors only; the Store checks
// that the decoded id matches the object name. Every failure (bad magic,
// unknown version, bad checksum, truncation, trailing bytes, a manifest that
// breaks an invariant of Validate) wraps sst.ErrCorruption. The result owns
// its memory; b may be reused.
func Decode(b []byte, name string) (*Manifest, error) {
	if len(b) < headerLen+checksumLen {
		return nil, corruptf(name, 0, "object of %d bytes is too short", len(b))
	}
	if string(b[:len(magic)]) != magic {
		return nil, corruptf(name, 0, "bad magic %q", b[:len(magic)])
	}
	payload := b[:len(b)-checksumLen]
	want := binary.LittleEndian.Uint32(b[len(payload):])
	if got := crc32.Checksum(payload, castagnoli); got != want {
		return nil, corruptf(name, len(payload), "bad checksum %08x, want %08x", got, want)
	}
	if v := binary.LittleEndian.Uint16(b[len(magic):]); v != FormatVersion {
		return nil, corruptf(name, len(magic), "unsupported format version %d", v)
	}
	body := payload[headerLen:]
	m, rest, err := decodeBodyV1(body)
	if err != nil {
		return nil, corruptf(name, headerLen+len(body)-len(rest), "%v", err)
	}
	if len(rest) != 0 {
		return nil, corruptf(name, len(payload)-len(rest), "%d trailing bytes", len(rest))
	}
	if err := m.Validate(); err != nil {
		return nil, corruptf(name, 0, "%v", err)
	}
	return m, nil
}

func corruptf(name string, off int, format string, args ...any) error {
	return fmt.Errorf("%w: manifest %s at offset %d: %s", sst.ErrCorruption, name, off, fmt.Sprintf(format, args...))
}

// decodeBodyV1 decodes a version 1 body. On error, rest is where decoding
// stopped, so the caller can report the offset.
func decodeBodyV1(b []byte) (m *Manifest, rest []byte, err error) {
	m = &Manifest{}
	fields := []*uint64{&m.ID, &m.WriterEpoch, &m.CompactorEpoch, &m.ReplayAfterWALID, &m.NextWALID, &m.LastSeq}
	for _, f := range fields {
		if *f, b, err = decodeUvarint(b); err != nil {
			return nil, b, err
		}
	}
	if m.ClockTick, b, err = decodeVarint(b); err != nil {
		return nil, b, err
	}
	if m.NextRunID, b, err = decodeUvarint(b); err != nil {
		return nil, b, err
	}
	if m.L0, b, err = decodeSSTs(b); err != nil {
		return nil, b, err
	}
	n, b, err := decodeCount(b, minRunLen)
	if err != nil {
		return nil, b, err
	}
	if n > 0 {
		m.Runs = make([]Run, n)
	}
	for i := range m.Runs {
		if m.Runs[i], b, err = decodeRun(b); err != nil {
			return nil, b, err
		}
	}
	return m, b, nil
}

func decodeRun(b []byte) (r Run, rest []byte, err error) {
	if r.ID, b, err = decodeUvarint(b); err != nil {
		return Run{}, b, err
	}
	if r.SSTs, b, err = decodeSSTs(b); err != nil {
		return Run{}, b, err
	}
	return r, b, nil
}

func decodeSSTs(b []byte) (ssts []SST, rest []byte, err error) {
	n, b, err := decodeCount(b, minSSTLen)
	if err != nil || n == 0 {
		return nil, b, err
	}
	ssts = make([]SST, n)
	for i := range ssts {
		if ssts[i], b, err = decodeSST(b); err != nil {
			return nil, b, err
		}
	}
	return ssts, b, nil
}

func decodeSST(b []byte) (s SST, rest []byte, err error) {
	if len(b) < len(s.ID) {
		return SST{}, b, errTruncated
	}
	s.ID = ulid.ULID(b[:len(s.ID)])
	b = b[len(s.ID):]
	if s.Size, b, err = decodeUvarint(b); err != nil {
		return SST{}, b, err
	}
	st := &s.Stats
	if st.Smallest, b, err = decodeBytes(b); err != nil {
		return SST{}, b, err
	}
	if st.Largest, b, err = decodeBytes(b); err != nil {
		return SST{}, b, err
	}
	for _, f := range []*uint64{&st.MinSeq, &st.MaxSeq, &st.Entries, &st.Tombstones} {
		if *f, b, err = decodeUvarint(b); err != nil {
			return SST{}, b, err
		}
	}
	if st.EarliestExpiry, b, err = decodeVarint(b); err != nil {
		return SST{}, b, err
	}
	if st.ClockTick, b, err = decodeVarint(b); err != nil {
		return SST{}, b, err
	}
	return s, b, nil
}

var (
	errTruncated    = errors.New("truncated")
	errVarint       = errors.New("malformed varint")
	errNonMinimal   = errors.New("non-minimal varint")
	errCountTooLong = errors.New("element count exceeds remaining bytes")
)

func decodeUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	switch {
	case n == 0:
		return 0, b, errTruncated
	case n < 0:
		return 0, b, errVarint
	case n > 1 && b[n-1] == 0:
		// A zero final byte adds nothing: a shorter encoding exists.
		// Rejecting it keeps the encoding of a manifest unique.
		return 0, b, errNonMinimal
	}
	return v, b[n:], nil
}

func decodeVarint(b []byte) (int64, []byte, error) {
	u, rest, err := decodeUvarint(b)
	if err != nil {
		return 0, rest, err
	}
	// Zig-zag, as binary.Varint decodes it.
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v, rest, nil
}

// decodeCount decodes an element count and rejects counts whose elements,
// each at least minLen bytes, could not fit in what remains, so a corrupt
// count never causes a large allocation.
func decodeCount(b []byte, minLen int) (int, []byte, error) {
	n, rest, err := decodeUvarint(b)
	if err != nil {
		return 0, rest, err
	}
	if n > uint64(len(rest)/minLen) {
		return 0, b, errCountTooLong
	}
	return int(n), rest, nil
}

func decodeBytes(b []byte) ([]byte, []byte, error) {
	n, rest, err := decodeUvarint(b)
	if err != nil {
		return nil, rest, err
	}
	if n > uint64(len(rest)) {
		return nil, b, errTruncated
	}
	if n == 0 {
		return nil, rest, nil
	}
	return append([]byte(nil), rest[:n]...), rest[n:], nil
}
