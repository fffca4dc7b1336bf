package wal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

// MaxInflight is the most WAL PUTs a writer may have in flight. It is part
// of the protocol, not a tuning knob: a new writer starts writing
// MaxInflight ids above its fence, past every id a fenced writer may still
// be storing.
const MaxInflight = 16

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

// Fenced is the outcome of Fence.
type Fenced struct {
	// Fence is the id of this writer's fence object.
	Fence uint64
	// FirstID is the first id this writer may write.
	FirstID uint64
	// Replay lists every id in (after, Fence), ascending: all of them hold
	// an object now, and Replay reads them in order.
	Replay []uint64
}

// Fence makes this writer (epoch) the only one able to extend the WAL after
// id after:
//
//  1. It claims the first free id F above every existing object with a
//     fence object.
//  2. It claims F+1 .. F+MaxInflight-1 the same way. An older writer may
//     have PUTs in flight there (its window reaches MaxInflight-1 ids past
//     its oldest unacknowledged object, which is at most F); whichever PUT
//     lands, the id is taken, and what the older writer stored above our
//     fence is debris it can never acknowledge, because its PUT of F failed.
//  3. It claims every hole below F: the older writer may be about to fill
//     one and acknowledge it. Each hole is then our fence (the older
//     writer's PUT fails and it acknowledges nothing from there on) or its
//     object (replayed).
//
// Replay skips debris by epoch. The new writer starts at F+MaxInflight, so
// ids stay dense.
func Fence(ctx context.Context, bkt objstore.Bucket, after, epoch uint64) (Fenced, error) {
	ids, err := ListIDs(ctx, bkt)
	if err != nil {
		return Fenced{}, err
	}
	existing := make(map[uint64]bool, len(ids))
	next := after + 1
	for _, id := range ids {
		existing[id] = true
		next = max(next, id+1)
	}
	claim := func(ctx context.Context, id uint64) (bool, error) {
		err := bkt.Upload(ctx, blob.WALName(id), bytes.NewReader(encodeFence(epoch, id)), objstore.WithIfNotExists())
		if err == nil {
			return true, nil
		}
		if bkt.IsConditionNotMetErr(err) {
			return false, nil
		}
		return false, fmt.Errorf("wal: write fence %d: %w", id, err)
	}
	f := Fenced{Fence: next}
	for ; ; f.Fence++ {
		won, err := claim(ctx, f.Fence)
		if err != nil {
			return Fenced{}, err
		}
		if won {
			break
		}
	}
	f.FirstID = f.Fence + MaxInflight
	var claims []uint64
	for id := after + 1; id < f.FirstID; id++ {
		if id < f.Fence {
			f.Replay = append(f.Replay, id)
		}
		if id != f.Fence && !existing[id] {
			claims = append(claims, id)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(MaxInflight)
	for _, id := range claims {
		g.Go(func() error {
			_, err := claim(gctx, id)
			return err
		})
	}
	return f, g.Wait()
}

// Object is one replayed WAL object.
type Object struct {
	ID    uint64
	Rows  []sst.Row // in seq order
	Stats sst.Stats
}

// Replay calls fn, in id order, for every batch object among ids, skipping
// fences and debris: an object whose writer epoch is below an epoch seen at
// a lower id was stored by a fenced writer after its fence and was never
// acknowledged. A corrupt object stops replay with an error wrapping
// sst.ErrCorruption: every object was stored whole, so damage is real
// corruption, not a torn tail. So is an object that records another id
// than its name's (format.go).
func Replay(ctx context.Context, bkt objstore.Bucket, ids []uint64, fn func(Object) error) error {
	var newest uint64
	for _, id := range ids {
		name := blob.WALName(id)
		data, err := readAll(ctx, bkt, name)
		if err != nil {
			return fmt.Errorf("wal: read %s: %w", name, err)
		}
		epoch, fence, rows, stats, err := DecodeObject(data, name)
		if err != nil {
			return fmt.Errorf("wal: replay: %w", err)
		}
		if epoch < newest || fence {
			newest = max(newest, epoch)
			continue
		}
		newest = epoch
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
