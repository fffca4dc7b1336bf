package blob

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A part file of a DiskCache holds one aligned part of an object: bytes
// [idx*PartSize, idx*PartSize+len(payload)) of the object named in the file
// name, followed by a trailer:
//
//	+---------+------------------------+-------------+-----------+-------+--------+
//	| payload | crc32c of each 16 KiB  | payload len | part size | flags | crc32c |
//	|         | chunk (u32 LE each)    | (u32 LE)    | (u32 LE)  | (1)   | (u32)  |
//	+---------+------------------------+-------------+-----------+-------+--------+
//
// Each chunk checksum (crc32c, Castagnoli) covers its 16 KiB of payload (the
// last chunk may be shorter); the final crc32c covers the chunk checksums
// and the fixed fields. So a read of one SST block checks only the chunks it
// touches: two small preads, not a read and checksum of the whole part
// (256 KiB per 4 KiB block made warm reads CPU-bound at 10k reads/s). Flag
// bit 0 says the part is the object's last. A part that is not the last is
// exactly part size long; the last is at most that (empty only for an empty
// object). The part size is recorded so that a cache reopened with another
// PartSize never serves a part at the wrong offset.
//
// File names: <url.PathEscape(object name)>.<idx>.part, or .end for the
// last part, so reopening learns where objects end without reading parts.
const (
	partChunk    = 16 << 10
	partFixedLen = 4 + 4 + 1 + 4 // payload len, part size, flags, crc
	partFlagLast = 1
	partFormat   = "v2" // recorded beside the part size: older files are removed
	partExt      = ".part"
	partEndExt   = ".end"
)

var partCRC = crc32.MakeTable(crc32.Castagnoli)

// errBadPart reports a part file that must not be served: torn, truncated,
// bit-flipped, or written with another part size.
var errBadPart = errors.New("blob: disk cache: bad part file")

func partChunks(payloadLen int64) int64 { return (payloadLen + partChunk - 1) / partChunk }

// appendPart appends the part file bytes of payload to dst.
func appendPart(dst, payload []byte, partSize int64, last bool) []byte {
	dst = append(dst, payload...)
	tail := len(dst)
	for off := 0; off < len(payload); off += partChunk {
		dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(payload[off:min(off+partChunk, len(payload))], partCRC))
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(partSize))
	var flags byte
	if last {
		flags |= partFlagLast
	}
	dst = append(dst, flags)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[tail:], partCRC))
}

// partTail is a part file's checked trailer.
type partTail struct {
	payloadLen int64
	sums       []byte // the chunk checksums
}

// decodeTail checks the trailer at the end of tail (the file's last bytes,
// at least the trailer) against the part size and the last flag the file
// name carries, and the file's size.
func decodeTail(tail []byte, fileSize, partSize int64, last bool) (partTail, error) {
	if len(tail) < partFixedLen {
		return partTail{}, fmt.Errorf("%w: %d bytes, shorter than its trailer", errBadPart, len(tail))
	}
	fixed := tail[len(tail)-partFixedLen:]
	payloadLen := int64(binary.LittleEndian.Uint32(fixed))
	size := int64(binary.LittleEndian.Uint32(fixed[4:]))
	fileLast := fixed[8]&partFlagLast != 0
	sumsLen := 4 * partChunks(payloadLen)
	switch {
	case payloadLen+sumsLen+partFixedLen != fileSize || int64(len(tail)) < sumsLen+partFixedLen:
		return partTail{}, fmt.Errorf("%w: %d bytes for a %d-byte payload", errBadPart, fileSize, payloadLen)
	case size != partSize:
		return partTail{}, fmt.Errorf("%w: part size %d, want %d", errBadPart, size, partSize)
	case fileLast != last:
		return partTail{}, fmt.Errorf("%w: last flag %v disagrees with the file name", errBadPart, fileLast)
	case payloadLen > partSize || (!last && payloadLen != partSize):
		return partTail{}, fmt.Errorf("%w: %d payload bytes", errBadPart, payloadLen)
	}
	covered := tail[int64(len(tail))-partFixedLen-sumsLen : len(tail)-4]
	if crc32.Checksum(covered, partCRC) != binary.LittleEndian.Uint32(fixed[9:]) {
		return partTail{}, fmt.Errorf("%w: trailer checksum mismatch", errBadPart)
	}
	return partTail{payloadLen: payloadLen, sums: covered[:sumsLen]}, nil
}

// checkChunks verifies data, the payload bytes from chunk first on, against
// the chunk checksums.
func (t partTail) checkChunks(data []byte, first int64) error {
	for i := int64(0); i*partChunk < int64(len(data)); i++ {
		chunk := data[i*partChunk : min((i+1)*partChunk, int64(len(data)))]
		want := binary.LittleEndian.Uint32(t.sums[4*(first+i):])
		if crc32.Checksum(chunk, partCRC) != want {
			return fmt.Errorf("%w: chunk %d checksum mismatch", errBadPart, first+i)
		}
	}
	return nil
}

// decodePart returns the payload of part file bytes b, checking them.
func decodePart(b []byte, partSize int64, last bool) ([]byte, error) {
	t, err := decodeTail(b, int64(len(b)), partSize, last)
	if err != nil {
		return nil, err
	}
	payload := b[:t.payloadLen]
	return payload, t.checkChunks(payload, 0)
}

// partFileName is the file name of part idx of object name.
func partFileName(name string, idx int64, last bool) string {
	ext := partExt
	if last {
		ext = partEndExt
	}
	return url.PathEscape(name) + "." + strconv.FormatInt(idx, 10) + ext
}

// parsePartFileName inverts partFileName.
func parsePartFileName(file string) (name string, idx int64, last bool, ok bool) {
	base, isPart := strings.CutSuffix(file, partExt)
	if !isPart {
		if base, last = strings.CutSuffix(file, partEndExt); !last {
			return "", 0, false, false
		}
	}
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 {
		return "", 0, false, false
	}
	idx, err := strconv.ParseInt(base[dot+1:], 10, 64)
	if err != nil || idx < 0 {
		return "", 0, false, false
	}
	name, err = url.PathUnescape(base[:dot])
	if err != nil || url.PathEscape(name) != base[:dot] {
		return "", 0, false, false
	}
	return name, idx, last, true
}

// writePartTemp writes a part file into dir under a temporary name and
// returns that name and the file's size. No fsync: the checksum catches a
// file torn by a crash.
func writePartTemp(dir string, payload []byte, partSize int64, last bool) (string, int64, error) {
	f, err := os.CreateTemp(dir, "part-*")
	if err != nil {
		return "", 0, err
	}
	b := appendPart(make([]byte, 0, int64(len(payload))+4*partChunks(int64(len(payload)))+partFixedLen), payload, partSize, last)
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	return f.Name(), int64(len(b)), nil
}

// readPart reads and checks the part file at dir/file.
func readPart(dir, file string, partSize int64, last bool) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	return decodePart(b, partSize, last)
}

// readPartRange reads payload bytes [lo, hi) of the part file at dir/file
// (hi clamped to the payload's end), checking only the chunks they touch
// and the trailer: two small reads instead of the whole part.
func readPartRange(dir, file string, partSize int64, last bool, lo, hi int64) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	tail := make([]byte, min(size, partFixedLen+4*partChunks(partSize)))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, err
	}
	t, err := decodeTail(tail, size, partSize, last)
	if err != nil {
		return nil, err
	}
	hi = min(hi, t.payloadLen)
	if lo >= hi {
		return []byte{}, nil
	}
	first, end := lo/partChunk, min((hi+partChunk-1)/partChunk*partChunk, t.payloadLen)
	data := make([]byte, end-first*partChunk)
	if _, err := f.ReadAt(data, first*partChunk); err != nil {
		return nil, err
	}
	if err := t.checkChunks(data, first); err != nil {
		return nil, err
	}
	return data[lo-first*partChunk : hi-first*partChunk], nil
}
