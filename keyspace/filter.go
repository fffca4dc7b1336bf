package keyspace

import (
	"bytes"
	"context"

	"github.com/stratakv/strata/compactor"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
)

// filterCacheBytes is the block cache of one compaction's metadata view.
const filterCacheBytes = 32 << 20

// NewFilterFactory returns the Redis compaction filter, for the compactor
// in the server and in `strata compactor` alike. Per job it opens a read
// view of the job's manifest and drops:
//
//   - rows of a generation no database uses any more (FLUSHDB/FLUSHALL);
//   - element rows whose collection's metadata is missing, expired at the
//     compaction clock, or of another version or type;
//   - expiry-index rows that no longer match their key's metadata.
//
// The view lacks what the writer has not flushed, which is safe: versions
// and generations are never reused, so an element row's collection can
// only look alive in the view if it was alive when the view was flushed,
// and a newer metadata row the view lacks can only make the filter keep
// more, never drop a live row. Lookup errors keep the row.
func NewFilterFactory() compactor.FilterFactory {
	return func(ctx context.Context, fc compactor.FilterContext) (compactor.Filter, error) {
		f := &filter{ctx: ctx, view: lsm.NewView(fc.Bucket, fc.Manifest, filterCacheBytes), clock: fc.Clock, live: map[uint32]bool{}}
		for db := range NumDBs {
			gen := uint32(db)
			r, ok, err := f.view.Get(ctx, systemGenKey(db))
			if err != nil {
				return nil, err
			}
			if ok && r.Kind == sst.KindPut {
				if gen, err = decodeGenValue(r.Value); err != nil {
					return nil, err
				}
			}
			f.live[gen] = true
		}
		// A generation above the view's highest was made by a FLUSHDB the
		// view does not have yet: alive, never dropped.
		f.maxGen = initialMaxGen
		if r, ok, err := f.view.Get(ctx, systemMaxGenKey()); err != nil {
			return nil, err
		} else if ok && r.Kind == sst.KindPut {
			if f.maxGen, err = decodeGenValue(r.Value); err != nil {
				return nil, err
			}
		}
		return f, nil
	}
}

type filter struct {
	ctx    context.Context
	view   *lsm.View
	clock  int64
	live   map[uint32]bool
	maxGen uint32

	// The last metadata looked up: a collection's element rows are
	// adjacent, so most lookups repeat it.
	lastKey  []byte
	lastMeta Meta
	lastOK   bool
}

var _ compactor.Filter = (*filter)(nil)

// dead reports whether generation gen was left by a FLUSHDB or FLUSHALL.
func (f *filter) dead(gen uint32) bool { return !f.live[gen] && gen <= f.maxGen }

func (f *filter) Filter(r sst.Row) compactor.Decision {
	if len(r.Key) == 0 {
		return compactor.Keep
	}
	switch kind := r.Key[0]; {
	case kind == kindMeta:
		gen, _, err := decodeMetaKey(r.Key)
		if err == nil && f.dead(gen) {
			return compactor.Drop
		}
	case isElementKind(kind):
		_, gen, key, version, _, err := decodeElementKey(r.Key)
		if err != nil {
			return compactor.Keep
		}
		if f.dead(gen) {
			return compactor.Drop
		}
		m, ok, err := f.meta(gen, key)
		if err != nil {
			return compactor.Keep
		}
		if want, _ := elementKind(m.Type); !ok || m.Version != version || want != kind {
			return compactor.Drop
		}
	case kind == kindExpiry:
		gen, at, key, err := decodeExpiryKey(r.Key)
		if err != nil {
			return compactor.Keep
		}
		if f.dead(gen) {
			return compactor.Drop
		}
		version, verr := decodeExpiryValue(r.Value)
		m, ok, err := f.meta(gen, key)
		if err != nil || verr != nil {
			return compactor.Keep
		}
		if !ok || m.ExpireAt != at || m.Version != version {
			return compactor.Drop
		}
	}
	return compactor.Keep
}

// meta returns the live metadata of key in generation gen as of the view
// and the compaction clock.
func (f *filter) meta(gen uint32, key []byte) (Meta, bool, error) {
	mk := appendMetaKey(nil, gen, key)
	if f.lastKey != nil && bytes.Equal(mk, f.lastKey) {
		return f.lastMeta, f.lastOK, nil
	}
	r, ok, err := f.view.Get(f.ctx, mk)
	if err != nil {
		return Meta{}, false, err
	}
	var m Meta
	live := ok && r.Kind == sst.KindPut && (r.ExpireAt == 0 || r.ExpireAt > f.clock)
	if live {
		if m, err = decodeMeta(r.Value); err != nil {
			return Meta{}, false, err
		}
	}
	f.lastKey, f.lastMeta, f.lastOK = mk, m, live
	return m, live, nil
}
