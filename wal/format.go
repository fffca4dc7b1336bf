package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/stratakv/strata/lsm/sst"
)

// A WAL object is a fixed header followed, for a batch object, by an
// unordered SST holding the batches' rows in seq order:
//
//	+----------------+--------+-----------------+-------------+------------------+
//	| magic (8)      | kind   | writer epoch    | crc32c (4)  | body             |
//	| "strtwal1"     | (1)    | (8, big-endian) | of bytes    | (batch: an SST,  |
//	|                |        |                 | 0..17       |  fence: empty)   |
//	+----------------+--------+-----------------+-------------+------------------+
//
// The epoch lets replay tell debris from live objects: a writer keeps up to
// MaxInflight PUTs in flight, so after a newer writer fences it at id F a few
// of its PUTs may still land at ids above F. Every id the newer writer
// writes is above F+MaxInflight-1, and replay ignores any object whose epoch
// is below an epoch seen at a lower id. The body carries its own checksums.
const (
	objectMagic      = "strtwal1" // part of the format
	headerLen        = 8 + 1 + 8 + 4
	kindBatch   byte = 1 // part of the format
	kindFence   byte = 2 // part of the format
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type header struct {
	kind  byte
	epoch uint64
}

func appendHeader(dst []byte, h header) []byte {
	start := len(dst)
	dst = append(dst, objectMagic...)
	dst = append(dst, h.kind)
	dst = binary.BigEndian.AppendUint64(dst, h.epoch)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crcTable))
}

// decodeHeader splits a WAL object into its header and body.
func decodeHeader(b []byte, name string) (header, []byte, error) {
	if len(b) < headerLen {
		return header{}, nil, fmt.Errorf("wal: %s: object of %d bytes is shorter than its header: %w", name, len(b), sst.ErrCorruption)
	}
	if string(b[:8]) != objectMagic {
		return header{}, nil, fmt.Errorf("wal: %s: bad magic at offset 0: %w", name, sst.ErrCorruption)
	}
	if got, want := binary.BigEndian.Uint32(b[17:21]), crc32.Checksum(b[:17], crcTable); got != want {
		return header{}, nil, fmt.Errorf("wal: %s: bad header checksum at offset 17: %w", name, sst.ErrCorruption)
	}
	h := header{kind: b[8], epoch: binary.BigEndian.Uint64(b[9:17])}
	switch {
	case h.kind == kindFence && len(b) != headerLen:
		return header{}, nil, fmt.Errorf("wal: %s: fence with a body: %w", name, sst.ErrCorruption)
	case h.kind != kindFence && h.kind != kindBatch:
		return header{}, nil, fmt.Errorf("wal: %s: unknown object kind %d at offset 8: %w", name, h.kind, sst.ErrCorruption)
	}
	return h, b[headerLen:], nil
}

// encodeBatches makes a batch object of rows (whole batches, seq order).
// rowBytes is what the writer counts for them (keys, values and 16 bytes a
// row, see take), 0 if unknown: it sizes the output once (objectSizeHint).
func encodeBatches(rows []sst.Row, rowBytes int, tick int64, epoch uint64, c sst.Compression) ([]byte, error) {
	return encodeSegments([][]sst.Row{rows}, rowBytes, tick, epoch, c, nil, nil)
}

// encodeSegments makes a batch object of the rows of segs, in order,
// pacing itself with p (an everysec object holds a second of writes), in
// buf's memory if it has room (see sst.BuilderOptions.Buf).
func encodeSegments(segs [][]sst.Row, rowBytes int, tick int64, epoch uint64, c sst.Compression, p *sst.Pacer, buf []byte) ([]byte, error) {
	b := sst.NewBuilder(sst.BuilderOptions{
		Unordered:   true,
		Compression: c,
		Prefix:      appendHeader(nil, header{kind: kindBatch, epoch: epoch}),
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

// encodeFence makes a fence object for epoch.
func encodeFence(epoch uint64) []byte {
	return appendHeader(nil, header{kind: kindFence, epoch: epoch})
}

// DecodeObject decodes a whole WAL object: its writer epoch, whether it is a
// fence, and its rows. Every checksum is verified.
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
