package compactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// ErrFenced means a newer compactor claimed the bucket; this one stopped and
// published nothing more.
var ErrFenced = errors.New("compactor: fenced by a newer compactor")

// Options configure a Compactor.
type Options struct {
	Scheduler SchedulerOptions
	// TargetSSTSize cuts output SSTs at about this size. Default 64 MiB.
	TargetSSTSize int64
	// BlockSize, Compression and BloomBitsPerKey shape output SSTs, as the
	// engine's options of the same names. Defaults 4 KiB, S2, 10.
	BlockSize       int
	Compression     sst.Compression
	BloomBitsPerKey int
	// PollInterval is how often Run looks for work. Default 1 s.
	PollInterval time.Duration
	// Filter, if set, builds each job's compaction filter.
	Filter FilterFactory
	// GC configures the garbage collector Run drives; GCInterval is how
	// often (default 1 min, negative disables).
	GC         GCOptions
	GCInterval time.Duration
	// Pacer, if set, makes jobs step aside while the server they run in is
	// busy with clients (see sst.Pacer); a separate compactor process has
	// no clients and leaves it nil.
	Pacer  *sst.Pacer
	Logger *slog.Logger
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	o.Scheduler.EnsureDefaults()
	if o.TargetSSTSize == 0 {
		o.TargetSSTSize = 64 << 20
	}
	if o.BlockSize == 0 {
		o.BlockSize = sst.DefaultBlockSize
	}
	if o.Compression == 0 {
		o.Compression = sst.CompressionS2
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = sst.DefaultBloomBitsPerKey
	}
	if o.PollInterval == 0 {
		o.PollInterval = time.Second
	}
	if o.GCInterval == 0 {
		o.GCInterval = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.GC.Logger = o.Logger
	o.GC.EnsureDefaults()
}

// Validate reports the first unusable setting.
func (o *Options) Validate() error {
	if err := o.Scheduler.Validate(); err != nil {
		return err
	}
	if o.TargetSSTSize < 64<<10 {
		return fmt.Errorf("compactor: TargetSSTSize %d is below 64 KiB", o.TargetSSTSize)
	}
	if o.PollInterval < time.Millisecond {
		return fmt.Errorf("compactor: PollInterval %v is below 1ms", o.PollInterval)
	}
	return o.GC.Validate()
}

func (o *Options) builderOptions() sst.BuilderOptions {
	return sst.BuilderOptions{BlockSize: o.BlockSize, Compression: o.Compression, BloomBitsPerKey: o.BloomBitsPerKey, Pacer: o.Pacer}
}

// Stats add up what a Compactor did.
type Stats struct {
	Jobs         uint64
	BytesRead    uint64
	BytesWritten uint64
	Expired      uint64
	Filtered     uint64
	Conflicts    uint64 // manifest CAS conflicts with the writer, re-applied
	GC           GCStats
}

// Compactor merges SSTs of one bucket and collects its garbage. Only one
// compactor works on a bucket at a time: opening one fences the previous.
type Compactor struct {
	bkt   objstore.Bucket
	store *manifest.Store
	opts  Options
	epoch uint64
	gc    *GC

	mu    sync.Mutex
	stats Stats
}

// Open claims the compactor epoch of the bucket's manifest.
func Open(ctx context.Context, bkt objstore.Bucket, opts Options) (*Compactor, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	c := &Compactor{bkt: bkt, store: manifest.NewStore(bkt), opts: opts}
	m, err := c.store.Latest(ctx)
	if err != nil {
		return nil, fmt.Errorf("compactor: load manifest (open the engine on this bucket first): %w", err)
	}
	_, err = c.store.Update(ctx, m, func(m *manifest.Manifest) error {
		c.epoch = manifest.ClaimCompactor(m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("compactor: claim epoch: %w", err)
	}
	if opts.GC.Pacer == nil {
		opts.GC.Pacer = opts.Pacer
	}
	c.gc = NewGC(bkt, c.store, opts.GC)
	c.gc.epoch = c.epoch
	opts.Logger.Info("compactor opened", "epoch", c.epoch)
	return c, nil
}

// Epoch returns the compactor epoch this compactor claimed.
func (c *Compactor) Epoch() uint64 { return c.epoch }

// Stats returns what the compactor did so far.
func (c *Compactor) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// RunOnce plans on the latest manifest and executes the first job, if any.
// It reports whether it published a job.
func (c *Compactor) RunOnce(ctx context.Context) (bool, error) {
	m, err := c.store.Latest(ctx)
	if err != nil {
		return false, err
	}
	if err := manifest.CheckCompactor(m, c.epoch); err != nil {
		return false, fmt.Errorf("%w: %w", ErrFenced, err)
	}
	jobs := Pick(m, c.opts.Scheduler, nil)
	if len(jobs) == 0 {
		return false, nil
	}
	job := jobs[0]
	outputs, st, err := c.execute(ctx, m, job)
	if err != nil {
		return false, err
	}
	// Outputs are unreferenced until published, but nothing collects them
	// meanwhile: a GC pass, this compactor's (running beside its jobs) or
	// that of a compactor this one fenced, collects an output only once it
	// is MinAge old and then seen unreferenced for MinAge more, far longer
	// than any job.
	conflicts := 0
	published, err := c.store.Update(ctx, m, func(next *manifest.Manifest) error {
		if err := manifest.CheckCompactor(next, c.epoch); err != nil {
			return fmt.Errorf("%w: %w", ErrFenced, err)
		}
		if next.ID != m.ID+1 {
			conflicts++
		}
		return Apply(next, job, outputs)
	})
	if err != nil {
		// The outputs were never referenced; the garbage collector
		// removes them once they are old enough.
		return false, fmt.Errorf("compactor: publish %s: %w", job, err)
	}
	c.mu.Lock()
	c.stats.Jobs++
	c.stats.BytesRead += st.BytesRead
	c.stats.BytesWritten += st.BytesWritten
	c.stats.Expired += st.Expired
	c.stats.Filtered += st.Filtered
	c.stats.Conflicts += uint64(conflicts)
	c.mu.Unlock()
	c.opts.Logger.Info("compacted", "job", job.String(), "manifest", published.ID,
		"inputs", st.InputSSTs, "outputs", st.OutputSSTs, "bytes_read", st.BytesRead,
		"bytes_written", st.BytesWritten, "rows_in", st.RowsIn, "rows_out", st.RowsOut,
		"expired", st.Expired, "filtered", st.Filtered, "took", st.Duration)
	return true, nil
}

// CollectGarbage runs one garbage-collection pass.
func (c *Compactor) CollectGarbage(ctx context.Context) (GCStats, error) {
	st, err := c.gc.Run(ctx)
	c.mu.Lock()
	c.stats.GC = addGCStats(c.stats.GC, st)
	c.mu.Unlock()
	return st, err
}

// Run compacts and collects garbage until ctx ends (returning nil) or the
// compactor is fenced (returning ErrFenced). Other errors are logged and
// retried at the next poll.
//
// Garbage collection runs beside compaction, not between jobs: a pass over
// a bucket with many WAL objects to delete takes minutes on a slow store,
// and compaction waiting for it lets L0 grow until writes stall. The two
// need no ordering: the GC deletes an unreferenced SST only once its ULID
// time is MinAge old and it stayed unreferenced for MinAge more (G1), far
// longer than a job takes to publish its outputs.
func (c *Compactor) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var gcDone chan error // nil without GC: receiving from it blocks forever
	if c.opts.GCInterval > 0 {
		gcDone = make(chan error, 1)
		go func() { gcDone <- c.runGC(ctx) }()
	}
	gcEnded, err := c.runCompactions(ctx, gcDone)
	cancel()
	if gcDone != nil && !gcEnded {
		if gcErr := <-gcDone; err == nil {
			err = gcErr
		}
	}
	return err
}

// runCompactions runs jobs until ctx ends, the compactor is fenced, or the
// GC loop ends (fenced); gcEnded reports the last, whose error it returns.
func (c *Compactor) runCompactions(ctx context.Context, gcDone <-chan error) (gcEnded bool, err error) {
	for {
		did, err := c.RunOnce(ctx)
		switch {
		case errors.Is(err, ErrFenced):
			c.opts.Logger.Error("compactor fenced; stopping", "err", err)
			return false, err
		case ctx.Err() != nil:
			return false, nil
		case err != nil:
			c.opts.Logger.Warn("compaction failed; retrying", "err", err)
		}
		if did && err == nil {
			continue // more work may be waiting
		}
		select {
		case <-ctx.Done():
			return false, nil
		case gcErr := <-gcDone:
			return true, gcErr
		case <-time.After(c.opts.PollInterval):
		}
	}
}

// runGC collects garbage every GCInterval until ctx ends (nil) or the
// compactor is fenced (ErrFenced).
func (c *Compactor) runGC(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.opts.GCInterval):
		}
		st, err := c.CollectGarbage(ctx)
		switch {
		case errors.Is(err, ErrFenced):
			c.opts.Logger.Error("compactor fenced; stopping", "err", err)
			return err
		case err != nil && ctx.Err() == nil:
			c.opts.Logger.Warn("garbage collection failed", "err", err)
		default:
			c.opts.Logger.Debug("garbage collected", "stats", st)
		}
	}
}
