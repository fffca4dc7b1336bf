package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/thanos-io/objstore"
)

// RetryOptions configures NewRetryBucket.
type RetryOptions struct {
	// MaxAttempts is the number of tries of one operation, the first
	// included. Default 6.
	MaxAttempts int
	// BaseDelay is the backoff before the second try; it doubles per try.
	// Default 50ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff. Default 5s.
	MaxDelay time.Duration
}

// EnsureDefaults fills zero fields with their defaults.
func (o *RetryOptions) EnsureDefaults() {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 6
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 50 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 5 * time.Second
	}
	o.MaxDelay = max(o.MaxDelay, o.BaseDelay)
}

// RetryBucket retries the transient errors of the bucket it wraps. See
// NewRetryBucket and doc.go (invariants 5-7).
type RetryBucket struct {
	bkt     objstore.Bucket
	opts    RetryOptions
	retries atomic.Uint64
}

var _ objstore.Bucket = (*RetryBucket)(nil)

// NewRetryBucket wraps bkt so that every operation is retried with jittered
// exponential backoff while it fails with a transient error: any error but
// not-found, condition-not-met, access-denied, an invalid argument, or the
// end of the caller's context.
//
// Upload bodies are read fully first, so that an attempt can be replayed.
// A create-if-absent upload is ambiguous once an attempt has failed: the
// attempt may have stored the object before the error. If a later attempt
// then finds the object present, it is read back: the same bytes mean the
// earlier attempt stored it, and the upload succeeds; other bytes are
// someone else's object, and the condition-not-met error is returned. Two
// writers racing with byte-identical bodies cannot be told apart, so bodies
// written with create-if-absent should identify their writer.
//
// Likewise a Delete that failed and then finds the object gone succeeds.
// Bodies returned by Get and GetRange resume with a ranged read after a
// transient error in the middle of the body (objects are immutable).
func NewRetryBucket(bkt objstore.Bucket, opts RetryOptions) *RetryBucket {
	opts.EnsureDefaults()
	return &RetryBucket{bkt: bkt, opts: opts}
}

// Retries returns the number of retried attempts so far.
func (b *RetryBucket) Retries() uint64 { return b.retries.Load() }

// transient reports whether err may go away if the operation is tried again.
func (b *RetryBucket) transient(ctx context.Context, err error) bool {
	switch {
	case err == nil, ctx.Err() != nil,
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		b.bkt.IsObjNotFoundErr(err), b.bkt.IsConditionNotMetErr(err), b.bkt.IsAccessDeniedErr(err),
		errors.Is(err, ErrInvalidName), errors.Is(err, objstore.ErrOptionNotSupported),
		errors.Is(err, objstore.ErrUploadOptionNotSupported), errors.Is(err, objstore.ErrUploadOptionInvalid):
		return false
	}
	return true
}

// backoff returns the delay before try number attempt (2, 3, ...): the
// capped exponential delay, jittered to between half and all of it so that
// clients failing together do not retry together.
func (b *RetryBucket) backoff(attempt int) time.Duration {
	d := b.opts.MaxDelay
	if shift := attempt - 2; shift < 30 && b.opts.BaseDelay<<shift < d {
		d = b.opts.BaseDelay << shift
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits before try number attempt, or returns the context's error.
func (b *RetryBucket) sleep(ctx context.Context, attempt int) error {
	b.retries.Add(1)
	t := time.NewTimer(b.backoff(attempt))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do runs op until it succeeds, fails permanently, or runs out of attempts.
// op gets the number of its try, starting at 1.
func (b *RetryBucket) do(ctx context.Context, what string, op func(attempt int) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = op(attempt)
		if p, ok := err.(permanent); ok {
			return p.err
		}
		if !b.transient(ctx, err) {
			return err
		}
		if attempt >= b.opts.MaxAttempts {
			return fmt.Errorf("blob: %s: giving up after %d attempts: %w", what, attempt, err)
		}
		if cerr := b.sleep(ctx, attempt+1); cerr != nil {
			return errors.Join(err, cerr)
		}
	}
}

// Upload implements objstore.Bucket; see NewRetryBucket for create-if-absent.
//
// Each attempt sends the whole body again: a body that is an io.ReadSeeker
// (every caller's *bytes.Reader) is rewound, any other is read into memory
// once. Not copying a seekable body matters: SSTs of tens of MiB are
// uploaded by flushes and compactions, and a second copy of each was a
// third of the server's live heap under a bulk load.
func (b *RetryBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	body, err := newRewindable(r)
	if err != nil {
		return fmt.Errorf("blob: upload %s: reading body: %w", name, err)
	}
	ifNotExists := objstore.ApplyObjectUploadOptions(opts...).IfNotExists
	failed := false // an earlier attempt failed and may have stored body
	err = b.do(ctx, "upload "+name, func(int) error {
		rd, err := body.rewind()
		if err != nil {
			return permanent{err}
		}
		err = b.bkt.Upload(ctx, name, rd, opts...)
		failed = failed || b.transient(ctx, err)
		return err
	})
	if ifNotExists && failed && b.bkt.IsConditionNotMetErr(err) {
		all, rerr := body.bytes()
		if rerr != nil {
			return fmt.Errorf("blob: upload %s: rereading body: %w", name, rerr)
		}
		return b.resolveCreate(ctx, name, all, err)
	}
	return err
}

// rewindable is an upload body that can be sent again from its start.
type rewindable struct {
	rs    io.ReadSeeker // nil: data holds the body
	start int64
	data  []byte
}

func newRewindable(r io.Reader) (*rewindable, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			return &rewindable{rs: rs, start: start}, nil
		}
	}
	data, err := io.ReadAll(r)
	return &rewindable{data: data}, err
}

// rewind returns a reader of the whole body.
func (w *rewindable) rewind() (io.Reader, error) {
	if w.rs == nil {
		return bytes.NewReader(w.data), nil
	}
	_, err := w.rs.Seek(w.start, io.SeekStart)
	return w.rs, err
}

// bytes returns the whole body.
func (w *rewindable) bytes() ([]byte, error) {
	rd, err := w.rewind()
	if err != nil {
		return nil, err
	}
	return io.ReadAll(rd)
}

// resolveCreate decides a create-if-absent upload whose retry found the
// object present: it is ours if it holds exactly body.
func (b *RetryBucket) resolveCreate(ctx context.Context, name string, body []byte, condErr error) error {
	rc, err := b.Get(ctx, name)
	var got []byte
	if err == nil {
		got, err = io.ReadAll(rc)
		rc.Close()
	}
	switch {
	case b.bkt.IsObjNotFoundErr(err):
		return condErr // deleted meanwhile: certainly not ours to claim
	case err != nil:
		return fmt.Errorf("blob: upload %s: outcome unknown: an attempt failed, a retry found the object present, and reading it back failed: %w", name, err)
	case bytes.Equal(got, body):
		return nil
	}
	return condErr
}

// Delete implements objstore.Bucket. After a failed attempt, not-found means
// that attempt deleted the object.
func (b *RetryBucket) Delete(ctx context.Context, name string) error {
	failed := false
	err := b.do(ctx, "delete "+name, func(int) error {
		err := b.bkt.Delete(ctx, name)
		failed = failed || b.transient(ctx, err)
		return err
	})
	if failed && b.bkt.IsObjNotFoundErr(err) {
		return nil
	}
	return err
}

// Exists implements objstore.Bucket.
func (b *RetryBucket) Exists(ctx context.Context, name string) (ok bool, err error) {
	err = b.do(ctx, "exists "+name, func(int) error {
		ok, err = b.bkt.Exists(ctx, name)
		return err
	})
	return ok, err
}

// Attributes implements objstore.Bucket.
func (b *RetryBucket) Attributes(ctx context.Context, name string) (a objstore.ObjectAttributes, err error) {
	err = b.do(ctx, "attributes "+name, func(int) error {
		a, err = b.bkt.Attributes(ctx, name)
		return err
	})
	return a, err
}

// Iter implements objstore.Bucket.
func (b *RetryBucket) Iter(ctx context.Context, dir string, f func(string) error, opts ...objstore.IterOption) error {
	return b.iter(ctx, dir, func(g func(string) error) error {
		return b.bkt.Iter(ctx, dir, g, opts...)
	}, f)
}

// IterWithAttributes implements objstore.Bucket.
func (b *RetryBucket) IterWithAttributes(ctx context.Context, dir string, f func(objstore.IterObjectAttributes) error, opts ...objstore.IterOption) error {
	var cur objstore.IterObjectAttributes
	return b.iter(ctx, dir, func(g func(string) error) error {
		return b.bkt.IterWithAttributes(ctx, dir, func(a objstore.IterObjectAttributes) error {
			cur = a
			return g(a.Name)
		}, opts...)
	}, func(string) error { return f(cur) })
}

// iter retries a listing without passing any name to f twice. It remembers
// the names delivered rather than the last one, because listings are not
// always sorted: S3's puts a page's objects before its common prefixes. An
// error from f ends the listing at once.
func (b *RetryBucket) iter(ctx context.Context, dir string, list func(func(string) error) error, f func(string) error) error {
	delivered := map[string]struct{}{}
	var ferr error
	return b.do(ctx, "iter "+dir, func(attempt int) error {
		err := list(func(name string) error {
			if attempt > 1 {
				if _, dup := delivered[name]; dup {
					return nil
				}
			}
			if ferr = f(name); ferr != nil {
				return ferr
			}
			delivered[name] = struct{}{}
			return nil
		})
		if ferr != nil {
			return permanent{ferr}
		}
		return err
	})
}

// permanent marks an error that must not be retried; do unwraps it.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Get implements objstore.Bucket.
func (b *RetryBucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	return b.GetRange(ctx, name, 0, -1)
}

// GetRange implements objstore.Bucket. The body resumes after a transient
// read error with a ranged read from where it stopped.
func (b *RetryBucket) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	r := &retryReader{b: b, ctx: ctx, name: name, off: off, remaining: length}
	var err error
	if off == 0 && length == -1 {
		err = b.do(ctx, "get "+name, func(int) (err error) {
			r.rc, err = b.bkt.Get(ctx, name)
			return err
		})
	} else {
		err = r.open("get_range " + name)
	}
	if err != nil {
		return nil, err
	}
	r.size, r.sizeErr = objstore.TryToGetSize(r.rc)
	return r, nil
}

// retryReader is an object body that survives transient read errors.
type retryReader struct {
	b         *RetryBucket
	ctx       context.Context
	name      string
	rc        io.ReadCloser // nil after a failed reopen
	off       int64         // object offset of the next byte
	remaining int64         // bytes still wanted, -1 = to the end
	failures  int           // consecutive failed reads
	size      int64
	sizeErr   error
}

// ObjectSize implements objstore.ObjectSizer, for the metrics wrapper.
func (r *retryReader) ObjectSize() (int64, error) { return r.size, r.sizeErr }

func (r *retryReader) open(what string) error {
	return r.b.do(r.ctx, what, func(int) (err error) {
		r.rc, err = r.b.bkt.GetRange(r.ctx, r.name, r.off, r.remaining)
		return err
	})
}

func (r *retryReader) Read(p []byte) (int, error) {
	if r.remaining == 0 {
		return 0, io.EOF
	}
	if r.remaining > 0 && int64(len(p)) > r.remaining {
		p = p[:r.remaining]
	}
	for {
		if r.rc == nil {
			return 0, fmt.Errorf("blob: get %s: body closed after a failed resume", r.name)
		}
		n, err := r.rc.Read(p)
		r.off += int64(n)
		if r.remaining > 0 {
			r.remaining -= int64(n)
		}
		if n > 0 {
			r.failures = 0
		}
		if err == nil || err == io.EOF || !r.b.transient(r.ctx, err) {
			return n, err
		}
		r.failures++
		if r.failures >= r.b.opts.MaxAttempts {
			return n, fmt.Errorf("blob: get %s: giving up after %d failed reads: %w", r.name, r.failures, err)
		}
		r.rc.Close()
		r.rc = nil
		if serr := r.b.sleep(r.ctx, r.failures+1); serr != nil {
			return n, errors.Join(err, serr)
		}
		if oerr := r.open("resume get " + r.name); oerr != nil {
			return n, oerr
		}
		if n > 0 || r.remaining == 0 {
			return n, nil
		}
	}
}

func (r *retryReader) Close() error {
	if r.rc == nil {
		return nil
	}
	return r.rc.Close()
}

// Provider implements objstore.Bucket.
func (b *RetryBucket) Provider() objstore.ObjProvider { return b.bkt.Provider() }

// Name implements objstore.Bucket.
func (b *RetryBucket) Name() string { return b.bkt.Name() }

// Close implements objstore.Bucket.
func (b *RetryBucket) Close() error { return b.bkt.Close() }

// SupportedIterOptions implements objstore.Bucket.
func (b *RetryBucket) SupportedIterOptions() []objstore.IterOptionType {
	return b.bkt.SupportedIterOptions()
}

// SupportedObjectUploadOptions implements objstore.Bucket.
func (b *RetryBucket) SupportedObjectUploadOptions() []objstore.ObjectUploadOptionType {
	return b.bkt.SupportedObjectUploadOptions()
}

// IsObjNotFoundErr implements objstore.Bucket.
func (b *RetryBucket) IsObjNotFoundErr(err error) bool { return b.bkt.IsObjNotFoundErr(err) }

// IsConditionNotMetErr implements objstore.Bucket.
func (b *RetryBucket) IsConditionNotMetErr(err error) bool { return b.bkt.IsConditionNotMetErr(err) }

// IsAccessDeniedErr implements objstore.Bucket.
func (b *RetryBucket) IsAccessDeniedErr(err error) bool { return b.bkt.IsAccessDeniedErr(err) }
