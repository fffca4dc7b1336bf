package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

// A WAL object is a fixed header followed, for a batch object, by an
// unordered SST holding the batches' rows in seq order:
//
//	+------------+--------+-----------------+-----------------+-------------+-----------------+
//	| magic (8)  | kind   | writer epoch    | id (8,          | crc32c (4)  | body            |
//	| "strtwal2" | (1)    | (8, big-endian) | big-endian)     | of bytes    | (batch: an SST, |
//	|            |        |                 |                 | 0..25       |  fence: empty)  |
//	+------------+--------+-----------------+-----------------+-------------+-----------------+
//
// The epoch lets replay tell debris from live objects: a writer keeps up to
// MaxInflight PUTs in flight, so after a newer writer fences it at id F a few
// of its PUTs may still land at ids above F. Every id the newer writer
// writes is above F+MaxInflight-1, and replay ignores any object whose epoch
// is below an epoch seen at a lower id. The body carries its own checksums.
//
// The id is the object's own, which it must match: a local bucket reuses a
// deleted WAL object's file, blocks and all, for a later one (blob's
// recycling), so after a power loss the name of an object whose upload was
// never acknowledged may show an older object's bytes, whole and valid.
// Decoding refuses them, and replay takes the refusal, like any damage
// close enough to a fence, for a torn tail (see Replay). Objects of the
// first version ("strtwal1", a 21-byte header without the id) still
// decode, unchecked, so an upgrade keeps an unflushed log. The check then
// misses one case: a file that held a first-version object, recycled
// by the new version, whose overwrite a power loss cut short under a new
// name, shows bytes replay cannot tell from that name's own.
const (
	objectMagic        = "strtwal2" // part of the format
	objectMagicV1      = "strtwal1" // part of the format: still read
	headerLen          = 8 + 1 + 8 + 8 + 4
	headerLenV1        = 8 + 1 + 8 + 4
	kindBatch     byte = 1 // part of the format
	kindFence     byte = 2 // part of the format
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type header struct {
	kind  byte
	epoch uint64
	id    uint64 // the object's id; 0 in a first-version object, which does not record it
	v1    bool   // a first-version header
}

func (h header) len() int {
	if h.v1 {
		return headerLenV1
	}
	return headerLen
}

func appendHeader(dst []byte, h header) []byte {
	start := len(dst)
	if h.v1 {
		dst = append(dst, objectMagicV1...)
	} else {
		dst = append(dst, objectMagic...)
	}
	dst = append(dst, h.kind)
	dst = binary.BigEndian.AppendUint64(dst, h.epoch)
	if !h.v1 {
		dst = binary.BigEndian.AppendUint64(dst, h.id)
	}
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable))
}

// decodeHeader splits a WAL object into its header and body. name is the
// object's name: when it is a WAL object's (blob.WALName), the id the
// header records must be the name's.
func decodeHeader(b []byte, name string) (header, []byte, error) {
	var h header
	switch {
	case len(b) >= 8 && string(b[:8]) == objectMagic:
	case len(b) >= 8 && string(b[:8]) == objectMagicV1:
		h.v1 = true
	case len(b) < 8:
		return header{}, nil, fmt.Errorf("wal: %s: object of %d bytes is shorter than its header: %w", name, len(b), sst.ErrCorruption)
	default:
		return header{}, nil, fmt.Errorf("wal: %s: bad magic at offset 0: %w", name, sst.ErrCorruption)
	}
	n := h.len()
	if len(b) < n {
		return header{}, nil, fmt.Errorf("wal: %s: object of %d bytes is shorter than its header: %w", name, len(b), sst.ErrCorruption)
	}
	if got, want := binary.BigEndian.Uint32(b[n-4:n]), crc32.Checksum(b[:n-4], crcTable); got != want {
		return header{}, nil, fmt.Errorf("wal: %s: bad header checksum at offset %d: %w", name, n-4, sst.ErrCorruption)
	}
	h.kind, h.epoch = b[8], binary.BigEndian.Uint64(b[9:17])
	if !h.v1 {
		h.id = binary.BigEndian.Uint64(b[17:25])
	}
	switch {
	case h.kind == kindFence && len(b) != n:
		return header{}, nil, fmt.Errorf("wal: %s: fence with a body: %w", name, sst.ErrCorruption)
	case h.kind != kindFence && h.kind != kindBatch:
		return header{}, nil, fmt.Errorf("wal: %s: unknown object kind %d at offset 8: %w", name, h.kind, sst.ErrCorruption)
	}
	if id, ok := blob.ParseWALName(name); ok && !h.v1 && h.id != id {
		// A recycled file's old bytes under a name whose upload was not
		// acknowledged before a power loss (see above): not this object.
		return header{}, nil, fmt.Errorf("wal: %s: holds the bytes of WAL object %d: %w", name, h.id, sst.ErrCorruption)
	}
	return h, b[n:], nil
}

// encodeBatches makes batch object h.id of writer h.epoch holding rows
// (whole batches, seq order). rowBytes is what the writer counts for them
// (keys, values and 16 bytes a row, see take), 0 if unknown: it sizes the
// output once (objectSizeHint).
func encodeBatches(rows []sst.Row, rowBytes int, tick int64, h header, c sst.Compression) ([]byte, error) {
	return encodeSegments([][]sst.Row{rows}, rowBytes, tick, h, c, nil, nil)
}

// encodeSegments makes a batch object of the rows of segs, in order,
// pacing itself with p (an everysec object holds a second of writes), in
// buf's memory if it has room (see sst.BuilderOptions.Buf).
func encodeSegments(segs [][]sst.Row, rowBytes int, tick int64, h header, c sst.Compression, p *sst.Pacer, buf []byte) ([]byte, error) {
	h.kind = kindBatch
	b := sst.NewBuilder(sst.BuilderOptions{
		Unordered:   true,
		Compression: c,
		Prefix:      appendHeader(nil, h),
		SizeHint:    objectSizeHint(rowBytes, c),
		Buf:         buf,
		Pacer:       p,
	})
	for _, rows := range segs {
		for _, r := range rows {
			if err := b.Add(r); err != nil {
				return nil, err
			}
		}
	}
	b.SetClockTick(tick)
	data, _, err := b.Finish()
	return data, err
}

// objectSizeHint guesses the encoded size of rows of rowBytes: a little more
// for block trailers and the index, half as much compressed. Only the pages
// written are ever touched, and a guess too small costs one regrowth.
func objectSizeHint(rowBytes int, c sst.Compression) int {
	n := rowBytes
	if c != sst.CompressionNone {
		n /= 2
	}
	return n + n/16 + 512
}

// encodeFence makes fence object id of writer epoch.
func encodeFence(epoch, id uint64) []byte {
	return appendHeader(nil, header{kind: kindFence, epoch: epoch, id: id})
}

// DecodeObject decodes a whole WAL object: its writer epoch, whether it is a
// fence, and its rows. Every checksum is verified, and, when name is a WAL
// object's name, that the object is that one (see decodeHeader).
func DecodeObject(data []byte, name string) (epoch uint64, fence bool, rows []sst.Row, stats sst.Stats, err error) {
	h, body, err := decodeHeader(data, name)
	if err != nil {
		return 0, false, nil, sst.Stats{}, err
	}
	if h.kind == kindFence {
		return h.epoch, true, nil, sst.Stats{}, nil
	}
	rows, stats, err = sst.DecodeAll(body, name)
	return h.epoch, false, rows, stats, err
}
