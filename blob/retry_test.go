package blob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"
)

var fastRetry = RetryOptions{MaxAttempts: 5, BaseDelay: time.Microsecond, MaxDelay: 10 * time.Microsecond}

// afterFirstUpload runs hook once, after the first Upload through it
// returns: it lets a test fail exactly the first attempt of a retried upload.
type afterFirstUpload struct {
	objstore.Bucket
	hook func()
	done atomic.Bool
}

func (b *afterFirstUpload) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	err := b.Bucket.Upload(ctx, name, r, opts...)
	if !b.done.Swap(true) {
		b.hook()
	}
	return err
}

// retryOverFirstUploadFault returns a RetryBucket whose first upload attempt
// fails with an injected error, after storing the object if afterWrite.
func retryOverFirstUploadFault(inner objstore.Bucket, afterWrite bool) (*RetryBucket, *FaultBucket) {
	frac := 0.0
	if afterWrite {
		frac = 1
	}
	f := NewFaultBucket(inner, FaultConfig{
		ErrorRate:                map[string]float64{objstore.OpUpload: 1},
		UploadAfterWriteFraction: frac,
	})
	hook := &afterFirstUpload{Bucket: f, hook: func() { f.SetConfig(FaultConfig{}) }}
	return NewRetryBucket(hook, fastRetry), f
}

func TestRetryCreateWhoseFirstAttemptLandedSucceeds(t *testing.T) {
	mem := NewMemBucket()
	r, f := retryOverFirstUploadFault(mem, true)
	err := r.Upload(context.Background(), "wal/1", strings.NewReader("ours"), objstore.WithIfNotExists())
	if err != nil {
		t.Fatalf("create whose first attempt stored the object: %v; want success", err)
	}
	if f.Injected() != 1 || r.Retries() != 1 {
		t.Fatalf("injected %d, retries %d; want 1 and 1", f.Injected(), r.Retries())
	}
	if got := mustGet(t, mem, "wal/1"); got != "ours" {
		t.Fatalf("object = %q", got)
	}
}

func TestRetryCreateLostToAnotherWriterFails(t *testing.T) {
	mem := NewMemBucket()
	mustUpload(t, mem, "wal/1", "theirs")
	r, f := retryOverFirstUploadFault(mem, false)
	err := r.Upload(context.Background(), "wal/1", strings.NewReader("ours"), objstore.WithIfNotExists())
	if !r.IsConditionNotMetErr(err) {
		t.Fatalf("create of a name another writer holds: %v; want condition-not-met", err)
	}
	if f.Injected() != 1 {
		t.Fatalf("injected %d; the first attempt did not fail", f.Injected())
	}
	if got := mustGet(t, mem, "wal/1"); got != "theirs" {
		t.Fatalf("object = %q", got)
	}
}

func TestRetryCreateWithoutFailedAttemptNeverClaimsIdenticalObject(t *testing.T) {
	mem := NewMemBucket()
	mustUpload(t, mem, "wal/1", "same")
	r := NewRetryBucket(mem, fastRetry)
	err := r.Upload(context.Background(), "wal/1", strings.NewReader("same"), objstore.WithIfNotExists())
	if !r.IsConditionNotMetErr(err) {
		t.Fatalf("create of an existing identical object with no failed attempt: %v; want condition-not-met", err)
	}
}

func TestRetryDeleteWhoseFirstAttemptLandedSucceeds(t *testing.T) {
	mem := NewMemBucket()
	mustUpload(t, mem, "x", "x")
	f := NewFaultBucket(mem, FaultConfig{All: 0, ErrorRate: map[string]float64{objstore.OpDelete: 1}, DeleteAfterWriteFraction: 1})
	r := NewRetryBucket(&deleteHook{Bucket: f, after: func() { f.SetConfig(FaultConfig{}) }}, fastRetry)
	if err := r.Delete(context.Background(), "x"); err != nil {
		t.Fatalf("delete whose first attempt landed: %v", err)
	}
	if f.Injected() != 1 {
		t.Fatalf("injected %d", f.Injected())
	}
	if err := r.Delete(context.Background(), "x"); !r.IsObjNotFoundErr(err) {
		t.Fatalf("delete of a missing object: %v; want not found", err)
	}
}

type deleteHook struct {
	objstore.Bucket
	after func()
}

func (b *deleteHook) Delete(ctx context.Context, name string) error {
	err := b.Bucket.Delete(ctx, name)
	b.after()
	return err
}

// classified is a bucket whose every call fails with err, classified by the
// given kinds.
type classified struct {
	objstore.Bucket
	err                          error
	notFound, condNotMet, denied bool
	calls                        atomic.Int64
}

func (b *classified) Exists(context.Context, string) (bool, error) {
	b.calls.Add(1)
	return false, b.err
}
func (b *classified) IsObjNotFoundErr(err error) bool { return b.notFound && errors.Is(err, b.err) }
func (b *classified) IsConditionNotMetErr(err error) bool {
	return b.condNotMet && errors.Is(err, b.err)
}
func (b *classified) IsAccessDeniedErr(err error) bool { return b.denied && errors.Is(err, b.err) }

func TestRetryRetriesOnlyTransientErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name  string
		inner *classified
		ctx   func() context.Context
		calls int64
	}{
		{"transient", &classified{err: boom}, context.Background, 5},
		{"not found", &classified{err: boom, notFound: true}, context.Background, 1},
		{"condition not met", &classified{err: boom, condNotMet: true}, context.Background, 1},
		{"access denied", &classified{err: boom, denied: true}, context.Background, 1},
		{"invalid name", &classified{err: ErrInvalidName}, context.Background, 1},
		{"cancelled", &classified{err: boom}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.inner.Bucket = NewMemBucket()
			r := NewRetryBucket(c.inner, fastRetry)
			_, err := r.Exists(c.ctx(), "x")
			if !errors.Is(err, c.inner.err) {
				t.Fatalf("error %v does not wrap the inner error", err)
			}
			if got := c.inner.calls.Load(); got != c.calls {
				t.Fatalf("%d calls; want %d", got, c.calls)
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	f := NewFaultBucket(NewMemBucket(), FaultConfig{All: 1})
	r := NewRetryBucket(f, RetryOptions{MaxAttempts: 100, BaseDelay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Get(ctx, "x")
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrInjected) {
		t.Fatalf("error %v; want the injected error and the context's", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("backoff ignored the context")
	}
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	c := NewCountingBucket(NewFaultBucket(NewMemBucket(), FaultConfig{All: 1}))
	r := NewRetryBucket(c, RetryOptions{MaxAttempts: 3, BaseDelay: time.Microsecond})
	err := r.Upload(context.Background(), "x", strings.NewReader("x"))
	if !errors.Is(err, ErrInjected) || c.Counts().Upload != 3 {
		t.Fatalf("err %v after %d uploads; want ErrInjected after 3", err, c.Counts().Upload)
	}
}

func TestRetryBackoffGrowsAndIsCapped(t *testing.T) {
	r := NewRetryBucket(NewMemBucket(), RetryOptions{BaseDelay: 10 * time.Millisecond, MaxDelay: 80 * time.Millisecond})
	for attempt, want := range map[int]time.Duration{2: 10 * time.Millisecond, 3: 20 * time.Millisecond, 5: 80 * time.Millisecond, 60: 80 * time.Millisecond} {
		for range 50 {
			if d := r.backoff(attempt); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v; want in [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
}

func TestRetryReadsResumeAfterBodyErrors(t *testing.T) {
	mem := NewMemBucket()
	body := make([]byte, 200_000)
	for i := range body {
		body[i] = byte(i * 7 / 3)
	}
	if err := mem.Upload(context.Background(), "big", bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	f := NewFaultBucket(mem, FaultConfig{Seed: 3, ReadErrorRate: 1})
	r := NewRetryBucket(f, RetryOptions{MaxAttempts: 20, BaseDelay: time.Microsecond, MaxDelay: time.Microsecond})
	for _, c := range []struct{ off, length int64 }{{0, -1}, {1000, 50_000}, {123_456, -1}} {
		var rc io.ReadCloser
		var err error
		if c.off == 0 && c.length == -1 {
			rc, err = r.Get(context.Background(), "big")
		} else {
			rc, err = r.GetRange(context.Background(), "big", c.off, c.length)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		want := body[c.off:]
		if c.length >= 0 {
			want = want[:c.length]
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("range (%d, %d): %d bytes, err %v; want %d bytes intact", c.off, c.length, len(got), err, len(want))
		}
	}
	if f.Injected() < 10 {
		t.Fatalf("only %d read errors injected", f.Injected())
	}
}

// flakyLister fails its first listing after delivering some names.
type flakyLister struct {
	objstore.Bucket
	names []string
	calls int
}

func (b *flakyLister) Iter(_ context.Context, _ string, f func(string) error, _ ...objstore.IterOption) error {
	b.calls++
	for i, n := range b.names {
		if b.calls == 1 && i == 3 {
			return errors.New("connection reset")
		}
		if err := f(n); err != nil {
			return err
		}
	}
	return nil
}

func TestRetryIterDeliversEachNameOnce(t *testing.T) {
	inner := &flakyLister{Bucket: NewMemBucket(), names: []string{"a", "b", "c", "d", "e"}}
	r := NewRetryBucket(inner, fastRetry)
	var got []string
	if err := r.Iter(context.Background(), "", func(n string) error { got = append(got, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, inner.names) || inner.calls != 2 {
		t.Fatalf("got %q in %d listings; want each name once in 2", got, inner.calls)
	}
	// An error from the callback ends the listing and is not retried.
	inner.calls = 1 // no more injected failures
	stop := errors.New("stop")
	if err := r.Iter(context.Background(), "", func(string) error { return stop }); err != stop || inner.calls != 2 {
		t.Fatalf("callback error: %v after %d listings; want stop, unwrapped, after 1", err, inner.calls-1)
	}
}

// TestRetryUploadResendsWholeBody: an attempt after a failed one sends the
// whole body again, whether the body can be rewound (a bytes.Reader, part
// read by the failed attempt) or not (read into memory once); and a
// create-if-absent whose first attempt landed compares the whole body.
func TestRetryUploadResendsWholeBody(t *testing.T) {
	body := strings.Repeat("0123456789", 10000)
	for _, tc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"seekable", func() io.Reader { return strings.NewReader(body) }},
		{"seekable, not at its start", func() io.Reader {
			r := strings.NewReader("skip" + body)
			r.Seek(4, io.SeekStart)
			return r
		}},
		{"stream", func() io.Reader { return io.MultiReader(strings.NewReader(body[:5]), strings.NewReader(body[5:])) }},
	} {
		for _, afterWrite := range []bool{false, true} {
			mem := NewMemBucket()
			r, _ := retryOverFirstUploadFault(mem, afterWrite)
			if err := r.Upload(context.Background(), "sst/x", tc.r(), objstore.WithIfNotExists()); err != nil {
				t.Fatalf("%s (first attempt landed: %v): %v", tc.name, afterWrite, err)
			}
			if got := mustGet(t, mem, "sst/x"); got != body {
				t.Fatalf("%s (first attempt landed: %v): stored %d bytes, want the %d of the body", tc.name, afterWrite, len(got), len(body))
			}
			if r.Retries() != 1 {
				t.Fatalf("%s: %d retries, want 1", tc.name, r.Retries())
			}
		}
	}
}
