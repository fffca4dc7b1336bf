package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/thanos-io/objstore"
)

// ErrInjected is wrapped by every error a FaultBucket makes up. No bucket
// classifies it as not-found, condition-not-met or access-denied, so a
// RetryBucket treats it as transient.
var ErrInjected = errors.New("blob: injected fault")

// FaultConfig says which faults a FaultBucket injects. Op names are
// objstore's: objstore.OpGet, OpGetRange, OpUpload, OpDelete, OpIter (Iter
// and IterWithAttributes), OpExists, OpAttributes.
type FaultConfig struct {
	// Seed seeds the random choices; the same seed and the same sequence of
	// calls give the same faults. Used by NewFaultBucket only.
	Seed int64
	// ErrorRate is the probability that a call of an op fails, by op name.
	ErrorRate map[string]float64
	// All is the error rate of ops missing from ErrorRate.
	All float64
	// UploadAfterWriteFraction is the fraction of injected Upload errors
	// that happen after the object was stored: the caller sees an error, but
	// the write took effect (a lost response).
	UploadAfterWriteFraction float64
	// DeleteAfterWriteFraction is the same for Delete.
	DeleteAfterWriteFraction float64
	// ReadErrorRate is the probability that the body returned by Get or
	// GetRange fails part way, after up to 4 KiB.
	ReadErrorRate float64
	// Latency delays calls of an op by the given duration, by op name, with
	// probability LatencyRate (every call if LatencyRate is 0).
	Latency     map[string]time.Duration
	LatencyRate float64
}

func (c *FaultConfig) errorRate(op string) float64 {
	if r, ok := c.ErrorRate[op]; ok {
		return r
	}
	return c.All
}

// FaultBucket injects errors and latency into the bucket it wraps, for
// tests of everything above blob. Safe for concurrent use.
type FaultBucket struct {
	bkt      objstore.Bucket
	injected atomic.Uint64

	mu  sync.Mutex
	cfg FaultConfig
	rnd *rand.Rand // REQUIRES: mu held
}

var _ objstore.Bucket = (*FaultBucket)(nil)

// NewFaultBucket wraps bkt with the faults of cfg.
func NewFaultBucket(bkt objstore.Bucket, cfg FaultConfig) *FaultBucket {
	return &FaultBucket{bkt: bkt, cfg: cfg, rnd: rand.New(rand.NewSource(cfg.Seed))}
}

// SetConfig replaces the faults injected from now on. The random sequence
// continues; cfg.Seed is ignored.
func (b *FaultBucket) SetConfig(cfg FaultConfig) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfg = cfg
}

// Injected returns the number of errors injected so far, read errors
// included.
func (b *FaultBucket) Injected() uint64 { return b.injected.Load() }

// fault is the decision for one call.
type fault struct {
	fail       bool
	afterWrite bool
	delay      time.Duration
	readFailAt int64 // for Get and GetRange bodies; -1 = never
}

// decide draws the faults of one call of op. It always draws the same number
// of random values, so the sequence of decisions depends only on the seed and
// the sequence of ops, not on the rates.
func (b *FaultBucket) decide(op string) fault {
	b.mu.Lock()
	defer b.mu.Unlock()
	pFail, pAfter, pLat, pRead := b.rnd.Float64(), b.rnd.Float64(), b.rnd.Float64(), b.rnd.Float64()
	readAt := b.rnd.Int63n(4097)
	c := &b.cfg
	f := fault{fail: pFail < c.errorRate(op), readFailAt: -1}
	switch op {
	case objstore.OpUpload:
		f.afterWrite = pAfter < c.UploadAfterWriteFraction
	case objstore.OpDelete:
		f.afterWrite = pAfter < c.DeleteAfterWriteFraction
	case objstore.OpGet, objstore.OpGetRange:
		if pRead < c.ReadErrorRate {
			f.readFailAt = readAt
		}
	}
	if d, ok := c.Latency[op]; ok && (c.LatencyRate == 0 || pLat < c.LatencyRate) {
		f.delay = d
	}
	return f
}

// before applies the delay of f and returns the error to inject before the
// call reaches the inner bucket, if any.
func (b *FaultBucket) before(ctx context.Context, op, name string, f fault) error {
	if f.delay > 0 {
		t := time.NewTimer(f.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if f.fail && !f.afterWrite {
		return b.inject(op, name, "before the call")
	}
	return nil
}

func (b *FaultBucket) inject(op, name, when string) error {
	b.injected.Add(1)
	return fmt.Errorf("%w: %s %q %s", ErrInjected, op, name, when)
}

// Upload implements objstore.Bucket.
func (b *FaultBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	f := b.decide(objstore.OpUpload)
	if err := b.before(ctx, objstore.OpUpload, name, f); err != nil {
		return err
	}
	if err := b.bkt.Upload(ctx, name, r, opts...); err != nil || !f.fail {
		return err
	}
	return b.inject(objstore.OpUpload, name, "after the object was stored")
}

// Delete implements objstore.Bucket.
func (b *FaultBucket) Delete(ctx context.Context, name string) error {
	f := b.decide(objstore.OpDelete)
	if err := b.before(ctx, objstore.OpDelete, name, f); err != nil {
		return err
	}
	if err := b.bkt.Delete(ctx, name); err != nil || !f.fail {
		return err
	}
	return b.inject(objstore.OpDelete, name, "after the object was deleted")
}

// Get implements objstore.Bucket.
func (b *FaultBucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	f := b.decide(objstore.OpGet)
	if err := b.before(ctx, objstore.OpGet, name, f); err != nil {
		return nil, err
	}
	rc, err := b.bkt.Get(ctx, name)
	return b.body(objstore.OpGet, name, f, rc, err)
}

// GetRange implements objstore.Bucket.
func (b *FaultBucket) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	f := b.decide(objstore.OpGetRange)
	if err := b.before(ctx, objstore.OpGetRange, name, f); err != nil {
		return nil, err
	}
	rc, err := b.bkt.GetRange(ctx, name, off, length)
	return b.body(objstore.OpGetRange, name, f, rc, err)
}

func (b *FaultBucket) body(op, name string, f fault, rc io.ReadCloser, err error) (io.ReadCloser, error) {
	if err != nil || f.readFailAt < 0 {
		return rc, err
	}
	size, serr := objstore.TryToGetSize(rc)
	return &faultReader{rc: rc, b: b, op: op, name: name, left: f.readFailAt, size: size, sizeErr: serr}, nil
}

// faultReader fails after delivering left more bytes, unless the body ends
// first.
type faultReader struct {
	rc       io.ReadCloser
	b        *FaultBucket
	op, name string
	left     int64
	size     int64
	sizeErr  error
	err      error // the injected error, once injected
}

func (r *faultReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.left <= 0 {
		// Only a body with more to give fails: at its end it says EOF. The
		// byte read to find out is dropped; the body is broken from here on.
		var one [1]byte
		if n, err := r.rc.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		r.err = r.b.inject(r.op, r.name, "while reading the body")
		return 0, r.err
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.rc.Read(p)
	r.left -= int64(n)
	return n, err
}

func (r *faultReader) Close() error { return r.rc.Close() }

// ObjectSize implements objstore.ObjectSizer.
func (r *faultReader) ObjectSize() (int64, error) { return r.size, r.sizeErr }

// Exists implements objstore.Bucket.
func (b *FaultBucket) Exists(ctx context.Context, name string) (bool, error) {
	if err := b.before(ctx, objstore.OpExists, name, b.decide(objstore.OpExists)); err != nil {
		return false, err
	}
	return b.bkt.Exists(ctx, name)
}

// Attributes implements objstore.Bucket.
func (b *FaultBucket) Attributes(ctx context.Context, name string) (objstore.ObjectAttributes, error) {
	if err := b.before(ctx, objstore.OpAttributes, name, b.decide(objstore.OpAttributes)); err != nil {
		return objstore.ObjectAttributes{}, err
	}
	return b.bkt.Attributes(ctx, name)
}

// Iter implements objstore.Bucket.
func (b *FaultBucket) Iter(ctx context.Context, dir string, f func(string) error, opts ...objstore.IterOption) error {
	if err := b.before(ctx, objstore.OpIter, dir, b.decide(objstore.OpIter)); err != nil {
		return err
	}
	return b.bkt.Iter(ctx, dir, f, opts...)
}

// IterWithAttributes implements objstore.Bucket.
func (b *FaultBucket) IterWithAttributes(ctx context.Context, dir string, f func(objstore.IterObjectAttributes) error, opts ...objstore.IterOption) error {
	if err := b.before(ctx, objstore.OpIter, dir, b.decide(objstore.OpIter)); err != nil {
		return err
	}
	return b.bkt.IterWithAttributes(ctx, dir, f, opts...)
}

// Provider implements objstore.Bucket.
func (b *FaultBucket) Provider() objstore.ObjProvider { return b.bkt.Provider() }

// Name implements objstore.Bucket.
func (b *FaultBucket) Name() string { return b.bkt.Name() }

// Close implements objstore.Bucket.
func (b *FaultBucket) Close() error { return b.bkt.Close() }

// SupportedIterOptions implements objstore.Bucket.
func (b *FaultBucket) SupportedIterOptions() []objstore.IterOptionType {
	return b.bkt.SupportedIterOptions()
}

// SupportedObjectUploadOptions implements objstore.Bucket.
func (b *FaultBucket) SupportedObjectUploadOptions() []objstore.ObjectUploadOptionType {
	return b.bkt.SupportedObjectUploadOptions()
}

// IsObjNotFoundErr implements objstore.Bucket.
func (b *FaultBucket) IsObjNotFoundErr(err error) bool { return b.bkt.IsObjNotFoundErr(err) }

// IsConditionNotMetErr implements objstore.Bucket.
func (b *FaultBucket) IsConditionNotMetErr(err error) bool { return b.bkt.IsConditionNotMetErr(err) }

// IsAccessDeniedErr implements objstore.Bucket.
func (b *FaultBucket) IsAccessDeniedErr(err error) bool { return b.bkt.IsAccessDeniedErr(err) }
