package wal

import (
	"context"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
)

// HeaderLen is the size of a WAL object's header. A fence object is exactly
// this long; a batch object is longer (its body is a non-empty SST). (An
// object of the first version has a header of 21 bytes.)
const HeaderLen = headerLen

// MayBeFence reports whether an object of size bytes may be a fence: a
// fence is exactly a header long, of either version. Any other object
// is not one, whatever its bytes.
func MayBeFence(size int64) bool { return size == headerLen || size == headerLenV1 }

// Header is what a WAL object's header says about it.
type Header struct {
	// Epoch is the writer epoch of the writer that stored the object.
	Epoch uint64
	// Fence reports a fence object: a new writer's claim on the id, with no
	// rows. A batch object holds rows.
	Fence bool
	// ID is the id the object records, its own; 0 for an object of the
	// first version, which does not record it.
	ID uint64
}

// DecodeHeader decodes the header of a WAL object from data, which is the
// whole object or at least its first HeaderLen+1 bytes: the byte past the
// header is what tells a fence (which has none) from a batch object, so a
// header-only object is a fence only if its header says so, and a fence
// header followed by more bytes is corruption, and so is a header recording
// another id than name's, when name is a WAL object's. The error wraps
// sst.ErrCorruption.
func DecodeHeader(data []byte, name string) (Header, error) {
	h, _, err := decodeHeader(data, name)
	if err != nil {
		return Header{}, err
	}
	return Header{Epoch: h.epoch, Fence: h.kind == kindFence, ID: h.id}, nil
}

// ReadHeader reads the header of WAL object name with one ranged read of
// HeaderLen+1 bytes, without fetching the body. The error is the bucket's
// (check bkt.IsObjNotFoundErr) or wraps sst.ErrCorruption.
func ReadHeader(ctx context.Context, bkt objstore.BucketReader, name string) (Header, error) {
	data, err := blob.ReadRange(ctx, bkt, name, 0, HeaderLen+1)
	if err != nil {
		return Header{}, err
	}
	return DecodeHeader(data, name)
}
