package compactor

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// JobStats describe one executed job.
type JobStats struct {
	Job          Job
	InputSSTs    int
	OutputSSTs   int
	BytesRead    uint64
	BytesWritten uint64
	RowsIn       uint64 // rows read, every version
	RowsOut      uint64
	Expired      uint64 // rows expired at the compaction clock
	Filtered     uint64 // rows the filter dropped or turned into tombstones
	Duration     time.Duration
}

// execute merges the job's inputs into new SSTs and uploads them. It does
// not publish them: the caller applies the job to the manifest.
func (c *Compactor) execute(ctx context.Context, m *manifest.Manifest, job Job) ([]manifest.SST, JobStats, error) {
	start := time.Now()
	st := JobStats{Job: job}
	inputs, err := jobInputs(m, job)
	if err != nil {
		return nil, st, err
	}
	var filter Filter
	if c.opts.Filter != nil {
		filter, err = c.opts.Filter(ctx, FilterContext{Manifest: m, Bucket: c.bkt, Clock: m.ClockTick, Bottom: job.Bottom})
		if err != nil {
			return nil, st, fmt.Errorf("compactor: build filter: %w", err)
		}
	}
	children := make([]sst.Iterator, 0, len(inputs))
	for _, group := range inputs {
		children = append(children, newRunIter(ctx, c.bkt, group))
		for _, t := range group {
			st.InputSSTs++
			st.BytesRead += t.Size
		}
	}
	merged := sst.NewMergingIter(children)
	defer merged.Close()

	w := &outputWriter{c: c, ctx: ctx}
	clock := m.ClockTick
	var prev []byte
	yield := c.opts.Pacer.Yielder()
	for ok := merged.First(); ok; ok = merged.Next() {
		r := *merged.Row()
		st.RowsIn++
		if st.RowsIn%256 == 0 {
			// The builder yields as it adds rows; rows dropped (old
			// versions, expired, filtered) yield here, so a compaction
			// that drops millions does not hold a processor for long
			// either (see sst's yieldRows).
			yield.Yield()
		}
		if prev != nil && bytes.Equal(r.Key, prev) {
			continue // an older version: only the newest row per key is kept
		}
		prev = append(prev[:0], r.Key...)
		tomb := r.Kind == sst.KindDelete
		if !tomb && r.ExpireAt != 0 && r.ExpireAt <= clock {
			tomb = true
			st.Expired++
		}
		if !tomb && filter != nil && filter.Filter(r) != Keep {
			tomb = true
			st.Filtered++
		}
		if tomb {
			if job.Bottom {
				continue // nothing older remains for a tombstone to hide
			}
			r = sst.Row{Key: r.Key, Seq: r.Seq, Kind: sst.KindDelete}
		}
		if err := w.add(r); err != nil {
			return nil, st, err
		}
		st.RowsOut++
	}
	if err := merged.Error(); err != nil {
		return nil, st, fmt.Errorf("compactor: read inputs: %w", err)
	}
	if err := w.finish(); err != nil {
		return nil, st, err
	}
	st.OutputSSTs = len(w.outputs)
	for _, t := range w.outputs {
		st.BytesWritten += t.Size
	}
	st.Duration = time.Since(start)
	return w.outputs, st, nil
}

// jobInputs returns the job's SSTs grouped into sorted sequences: each L0
// SST on its own, each run as one group.
func jobInputs(m *manifest.Manifest, job Job) ([][]manifest.SST, error) {
	l0 := make(map[ulid.ULID]manifest.SST, len(m.L0))
	for _, t := range m.L0 {
		l0[t.ID] = t
	}
	runs := make(map[uint64]manifest.Run, len(m.Runs))
	for _, r := range m.Runs {
		runs[r.ID] = r
	}
	var groups [][]manifest.SST
	for _, id := range job.L0 {
		t, ok := l0[id]
		if !ok {
			return nil, fmt.Errorf("compactor: job input L0 sst %s is not in manifest %d", id, m.ID)
		}
		groups = append(groups, []manifest.SST{t})
	}
	for _, id := range job.Runs {
		r, ok := runs[id]
		if !ok {
			return nil, fmt.Errorf("compactor: job input run %d is not in manifest %d", id, m.ID)
		}
		groups = append(groups, r.SSTs)
	}
	return groups, nil
}

// outputWriter cuts the output into SSTs of about TargetSSTSize, each
// uploaded as soon as it is complete.
type outputWriter struct {
	c       *Compactor
	ctx     context.Context
	b       *sst.Builder
	outputs []manifest.SST
}

func (w *outputWriter) add(r sst.Row) error {
	if w.b == nil {
		w.b = sst.NewBuilder(w.c.opts.builderOptions())
	}
	if err := w.b.Add(r); err != nil {
		return fmt.Errorf("compactor: build output: %w", err)
	}
	if int64(w.b.EstimatedSize()) >= w.c.opts.TargetSSTSize {
		return w.finish()
	}
	return nil
}

func (w *outputWriter) finish() error {
	if w.b == nil {
		return nil
	}
	b := w.b
	w.b = nil
	data, stats, err := b.Finish()
	if err != nil {
		return fmt.Errorf("compactor: build output: %w", err)
	}
	if stats.Entries == 0 {
		return nil
	}
	id := blob.NewSSTID()
	name := blob.SSTName(id)
	if err := w.c.bkt.Upload(w.ctx, name, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("compactor: upload %s: %w", name, err)
	}
	w.outputs = append(w.outputs, manifest.SST{ID: id, Size: uint64(len(data)), Stats: stats})
	return nil
}
