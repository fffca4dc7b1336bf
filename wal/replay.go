package wal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

// ListIDs returns the ids of every WAL object in the bucket, ascending.
func ListIDs(ctx context.Context, bkt objstore.BucketReader) ([]uint64, error) {
	var ids []uint64
	err := bkt.Iter(ctx, blob.WALDir, func(name string) error {
		if id, ok := blob.ParseWALName(name); ok {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("wal: list: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// fenceMagic starts every fence object. It cannot start an SST (whose magic
// is in its footer and whose first block starts with a varint), and some
// object stores return errors for zero-length objects, so fences carry it.
// Part of the format.
const fenceMagic = "strata-wal-fence v1\n"

func isFence(data []byte) bool { return bytes.HasPrefix(data, []byte(fenceMagic)) }

// Fence claims the first free WAL id above both after and every existing
// object by writing a fence object there with create-if-absent. Once it
// returns, an older writer can store no object below the fence that is not
// already listed: its next PUT lands on a taken id and fails.
func Fence(ctx context.Context, bkt objstore.Bucket, after, epoch uint64) (uint64, error) {
	ids, err := ListIDs(ctx, bkt)
	if err != nil {
		return 0, err
	}
	id := after + 1
	if len(ids) > 0 {
		id = max(id, ids[len(ids)-1]+1)
	}
	for tries := 0; tries < 1000; tries++ {
		body := fmt.Appendf([]byte(fenceMagic), "writer epoch %d\n", epoch)
		err := bkt.Upload(ctx, blob.WALName(id), bytes.NewReader(body), objstore.WithIfNotExists())
		if err == nil {
			return id, nil
		}
		if !bkt.IsConditionNotMetErr(err) {
			return 0, fmt.Errorf("wal: write fence %d: %w", id, err)
		}
		id++
	}
	return 0, fmt.Errorf("wal: could not claim a fence id after %d", id)
}

// Object is one replayed WAL object.
type Object struct {
	ID    uint64
	Rows  []sst.Row // in seq order
	Stats sst.Stats
}

// Replay calls fn for every WAL object that is not a fence with after < id < before,
// in id order. A corrupt object stops replay with an error wrapping
// sst.ErrCorruption: every stored object was written whole, so damage is
// real corruption, not a torn tail.
func Replay(ctx context.Context, bkt objstore.Bucket, after, before uint64, fn func(Object) error) error {
	ids, err := ListIDs(ctx, bkt)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id <= after || id >= before {
			continue
		}
		name := blob.WALName(id)
		data, err := readAll(ctx, bkt, name)
		if err != nil {
			return fmt.Errorf("wal: read %s: %w", name, err)
		}
		if isFence(data) {
			continue
		}
		rows, stats, err := sst.DecodeAll(data, name)
		if err != nil {
			return fmt.Errorf("wal: replay: %w", err)
		}
		if err := fn(Object{ID: id, Rows: rows, Stats: stats}); err != nil {
			return err
		}
	}
	return nil
}

func readAll(ctx context.Context, bkt objstore.BucketReader, name string) ([]byte, error) {
	rc, err := bkt.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
