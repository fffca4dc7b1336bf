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
//	+----------------+--------------------+-----------+-------------------+
//	| payload        | part size (u32 LE) | flags (1) | crc32c (u32 LE)   |
//	+----------------+--------------------+-----------+-------------------+
//
// The crc32c (Castagnoli) covers payload, part size and flags. Flag bit 0
// says the part is the object's last. A part that is not the last is
// exactly part size long; the last is at most that (empty only for an empty
// object). The part size is recorded so that a cache reopened with another
// PartSize never serves a part at the wrong offset.
//
// File names: <url.PathEscape(object name)>.<idx>.part, or .end for the
// last part, so reopening learns where objects end without reading parts.
const (
	partTrailerLen = 4 + 1 + 4
	partFlagLast   = 1

	partExt    = ".part"
	partEndExt = ".end"
)

var partCRC = crc32.MakeTable(crc32.Castagnoli)

// errBadPart reports a part file that must not be served: torn, truncated,
// bit-flipped, or written with another part size.
var errBadPart = errors.New("blob: disk cache: bad part file")

// appendPart appends the part file bytes of payload to dst.
func appendPart(dst, payload []byte, partSize int64, last bool) []byte {
	start := len(dst)
	dst = append(dst, payload...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(partSize))
	var flags byte
	if last {
		flags |= partFlagLast
	}
	dst = append(dst, flags)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], partCRC))
}

// decodePart returns the payload of part file bytes b, checking them
// against the part size and the last flag its file name carries.
func decodePart(b []byte, partSize int64, last bool) ([]byte, error) {
	if len(b) < partTrailerLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than its trailer", errBadPart, len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, partCRC) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", errBadPart)
	}
	payload := body[:len(body)-5]
	size := int64(binary.LittleEndian.Uint32(body[len(payload):]))
	fileLast := body[len(body)-1]&partFlagLast != 0
	switch {
	case size != partSize:
		return nil, fmt.Errorf("%w: part size %d, want %d", errBadPart, size, partSize)
	case fileLast != last:
		return nil, fmt.Errorf("%w: last flag %v disagrees with the file name", errBadPart, fileLast)
	case int64(len(payload)) > partSize || (!last && int64(len(payload)) != partSize):
		return nil, fmt.Errorf("%w: %d payload bytes", errBadPart, len(payload))
	}
	return payload, nil
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
	b := appendPart(make([]byte, 0, len(payload)+partTrailerLen), payload, partSize, last)
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
