package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/oklog/ulid/v2"
	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
	"github.com/stratakv/strata/wal"
)

// ErrNotFound is wrapped when a named object does not exist.
var ErrNotFound = errors.New("inspect: object not found")

// readObject reads a whole object.
func readObject(ctx context.Context, bkt objstore.BucketReader, name string) ([]byte, error) {
	rc, err := bkt.Get(ctx, name)
	if err != nil {
		if bkt.IsObjNotFoundErr(err) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		return nil, fmt.Errorf("inspect: get %s: %w", name, err)
	}
	data, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("inspect: read %s: %w", name, err)
	}
	return data, nil
}

// SSTObjectName resolves what an operator types for an SST: its object name
// (sst/<ULID>.sst), its file name (<ULID>.sst) or its ULID.
func SSTObjectName(arg string) (string, error) {
	if _, ok := blob.ParseSSTName(arg); ok {
		return arg, nil
	}
	id, err := ulid.ParseStrict(strings.TrimSuffix(arg, ".sst"))
	if err != nil {
		return "", fmt.Errorf("inspect: %q names no SST (want sst/<ULID>.sst or a ULID)", arg)
	}
	return blob.SSTName(id), nil
}

// DumpSST prints an SST's stats and its rows, at most limit (<= 0: all),
// keys decoded per keyspace.
func DumpSST(ctx context.Context, bkt objstore.BucketReader, name string, limit int, w io.Writer) error {
	data, err := readObject(ctx, bkt, name)
	if err != nil {
		return err
	}
	rows, st, err := sst.DecodeAll(data, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sst %s  %s\n", name, FormatBytes(int64(len(data))))
	writeStats(w, st)
	writeRows(w, rows, limit)
	return nil
}

// WALObject is one WAL object as ListWAL finds it.
type WALObject struct {
	ID       uint64
	Size     int64
	Header   wal.Header
	Replayed bool  // at or below the manifest's replay_after_wal_id: its rows are in SSTs
	Err      error // the header did not read or decode
}

// ListWAL lists the WAL objects in the bucket by id, reading each header.
// m (may be nil) tells which are already in SSTs.
func ListWAL(ctx context.Context, bkt objstore.Bucket, m *manifest.Manifest) ([]WALObject, error) {
	ids, err := wal.ListIDs(ctx, bkt)
	if err != nil {
		return nil, err
	}
	out := make([]WALObject, 0, len(ids))
	for _, id := range ids {
		name := blob.WALName(id)
		o := WALObject{ID: id, Replayed: m != nil && id <= m.ReplayAfterWALID}
		a, err := bkt.Attributes(ctx, name)
		if bkt.IsObjNotFoundErr(err) {
			continue // collected since the listing
		}
		o.Size = a.Size
		if err == nil {
			o.Header, err = wal.ReadHeader(ctx, bkt, name)
		}
		o.Err = err
		out = append(out, o)
	}
	return out, nil
}

// WriteWALList prints ListWAL's objects, one line each.
func WriteWALList(w io.Writer, objs []WALObject) {
	for _, o := range objs {
		state := "pending"
		if o.Replayed {
			state = "in SSTs"
		}
		if o.Err != nil {
			fmt.Fprintf(w, "%8d  %9s  %-7s  ERROR %v\n", o.ID, FormatBytes(o.Size), state, o.Err)
			continue
		}
		kind := "batch"
		if o.Header.Fence {
			kind = "fence"
		}
		fmt.Fprintf(w, "%8d  %9s  %-7s  %s epoch=%d\n", o.ID, FormatBytes(o.Size), state, kind, o.Header.Epoch)
	}
}

// DumpWAL prints WAL object id: its header, stats and rows (at most limit,
// <= 0: all).
func DumpWAL(ctx context.Context, bkt objstore.BucketReader, id uint64, limit int, w io.Writer) error {
	name := blob.WALName(id)
	data, err := readObject(ctx, bkt, name)
	if err != nil {
		return err
	}
	epoch, fence, rows, st, err := wal.DecodeObject(data, name)
	if err != nil {
		return err
	}
	kind := "batch"
	if fence {
		kind = "fence"
	}
	fmt.Fprintf(w, "wal %d (%s)  %s  kind=%s epoch=%d\n", id, name, FormatBytes(int64(len(data))), kind, epoch)
	if fence {
		return nil
	}
	writeStats(w, st)
	writeRows(w, rows, limit)
	return nil
}
