package wal

import (
	"bytes"
	"context"
	"errors"
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
// acknowledged. ids are what Fence returns in Fenced.Replay: every id from
// the replay point up to the caller's own fence, which follows the last.
//
// A damaged object (one that does not decode, or records another id than
// its name's) is a torn tail when a newer writer's fence follows it within
// MaxInflight ids, or the caller's own fence does (the list ends within
// them): a write to a local bucket named before its bytes were durable, cut
// by a power loss, which can be only in the dead writer's window of PUTs in
// flight, never acknowledged (see tornTail). Replay skips it and the rest of
// that writer's objects, and goes on from the fence. Damage anywhere else
// is real corruption of an object that may have been acknowledged: replay
// stops with an error wrapping sst.ErrCorruption.
func Replay(ctx context.Context, bkt objstore.Bucket, ids []uint64, fn func(Object) error) error {
	return ReplayTorn(ctx, bkt, ids, fn, nil)
}

// ReplayTorn is Replay that also calls torn, if not nil, with the ids of
// each torn tail it skips: from the damaged object to the fence after it.
func ReplayTorn(ctx context.Context, bkt objstore.Bucket, ids []uint64, fn func(Object) error, torn func(skipped []uint64)) error {
	var newest uint64
	for i := 0; i < len(ids); i++ {
		id := ids[i]
		o, err := readObject(ctx, bkt, id)
		if err != nil {
			if !errors.Is(err, sst.ErrCorruption) {
				return err
			}
			next, ok, terr := tornTail(ctx, bkt, ids, i, newest)
			if terr != nil {
				return terr
			}
			if !ok {
				return fmt.Errorf("wal: replay: %w", err)
			}
			if torn != nil {
				torn(ids[i:next])
			}
			i = next - 1 // the loop goes on at the fence that ended the tail
			continue
		}
		if o.epoch < newest || o.fence {
			newest = max(newest, o.epoch)
			continue
		}
		newest = o.epoch
		if err := fn(Object{ID: id, Rows: o.rows, Stats: o.stats}); err != nil {
			return err
		}
	}
	return nil
}

// decoded is a WAL object read and decoded by readObject.
type decoded struct {
	epoch uint64
	fence bool
	rows  []sst.Row
	stats sst.Stats
}

// readObject reads and decodes WAL object id. A damaged object's error
// wraps sst.ErrCorruption; a failed read's does not.
func readObject(ctx context.Context, bkt objstore.BucketReader, id uint64) (decoded, error) {
	name := blob.WALName(id)
	data, err := readAll(ctx, bkt, name)
	if err != nil {
		return decoded{}, fmt.Errorf("wal: read %s: %w", name, err)
	}
	var o decoded
	o.epoch, o.fence, o.rows, o.stats, err = DecodeObject(data, name)
	return o, err
}

// tornTail reports whether the damaged object ids[i] is the torn tail of a
// writer that died, and if so the index in ids where replay goes on: the
// newer writer's fence that ends the tail, or len(ids).
//
// A writer stores id only once every id up to id-Inflight is acknowledged
// (Inflight <= MaxInflight), and a new writer fences the first free id
// above every object (Fence): so the writer that stored a damaged id k
// stored nothing above k+MaxInflight-1, and the newer writer's fence, its
// own or a claim of a hole in the dead writer's window, lies within
// (k, k+MaxInflight]. A batch there is the dead writer's (a newer writer's
// batches come MaxInflight ids after its fence, which is above k): durable
// but never acknowledged, as acknowledgments go in id order and k was not.
// More damaged objects are torn with k. The fence that ends the tail is
// the first of an epoch above every epoch seen so far, below k (newest)
// and in the tail; none within reach means k is no tail.
//
// The cost of the rule: an acknowledged object damaged on the disk within
// the last MaxInflight ids of a writer that another replaced is taken for
// a torn tail, skipped with a warning (see ReplayTorn) instead of stopping
// the server.
func tornTail(ctx context.Context, bkt objstore.BucketReader, ids []uint64, i int, newest uint64) (next int, torn bool, err error) {
	reach := ids[i] + MaxInflight
	for j := i + 1; j < len(ids) && ids[j] <= reach; j++ {
		o, err := readObject(ctx, bkt, ids[j])
		switch {
		case errors.Is(err, sst.ErrCorruption):
			continue // torn with k
		case err != nil:
			return 0, false, err
		case o.fence && o.epoch > newest:
			return j, true, nil
		}
		newest = max(newest, o.epoch)
	}
	// The list ends at the caller's fence, ids[len-1]+1.
	if last := ids[len(ids)-1]; last+1 <= reach {
		return len(ids), true, nil
	}
	return 0, false, nil
}

func readAll(ctx context.Context, bkt objstore.BucketReader, name string) ([]byte, error) {
	rc, err := bkt.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
