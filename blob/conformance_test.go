package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/thanos-io/objstore"
)

// conformanceTarget is a bucket (or stack of wrappers) the shared
// conformance tests run against.
type conformanceTarget struct {
	name string
	open func(t *testing.T) objstore.Bucket
	// faulty: the stack injects faults under a RetryBucket, so a Delete of
	// an absent object may succeed (a failed attempt could have deleted it).
	faulty bool
	// s3 relaxes what S3 does differently: deleting an absent object
	// succeeds, and a listing gives a page's objects before its directories.
	s3 bool
}

// faultyRetry is a RetryBucket over injected faults of every kind, retrying
// enough that an operation giving up is vanishingly unlikely.
func faultyRetry(t *testing.T, inner objstore.Bucket, seed int64) objstore.Bucket {
	f := NewFaultBucket(inner, FaultConfig{
		Seed: seed, All: 0.3, UploadAfterWriteFraction: 0.5, DeleteAfterWriteFraction: 0.5,
		ReadErrorRate: 0.25,
	})
	return NewRetryBucket(f, RetryOptions{MaxAttempts: 40, BaseDelay: time.Microsecond, MaxDelay: 50 * time.Microsecond})
}

func newLocal(t *testing.T) *LocalBucket {
	t.Helper()
	b, err := NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func conformanceTargets() []conformanceTarget {
	return []conformanceTarget{
		{name: "local", open: func(t *testing.T) objstore.Bucket { return newLocal(t) }},
		{name: "mem", open: func(t *testing.T) objstore.Bucket { return NewMemBucket() }},
		{name: "prefixed-local", open: func(t *testing.T) objstore.Bucket {
			return objstore.NewPrefixedBucket(newLocal(t), "tenant/a")
		}},
		{name: "counting-local", open: func(t *testing.T) objstore.Bucket { return NewCountingBucket(newLocal(t)) }},
		{name: "metrics-mem", open: func(t *testing.T) objstore.Bucket {
			return WithMetrics(NewMemBucket(), prometheus.NewRegistry(), "test")
		}},
		{name: "fault-off-local", open: func(t *testing.T) objstore.Bucket {
			return NewFaultBucket(newLocal(t), FaultConfig{Seed: 1})
		}},
		{name: "retry-mem", open: func(t *testing.T) objstore.Bucket {
			return NewRetryBucket(NewMemBucket(), RetryOptions{})
		}},
		{name: "diskcache-local", open: func(t *testing.T) objstore.Bucket {
			// Every name cached, in small parts, so the shared tests go
			// through the cache's reads, write-through and delete.
			c, err := NewDiskCache(newLocal(t), DiskCacheOptions{Dir: t.TempDir(), MaxBytes: 1 << 20,
				PartSize: 1 << 10, Cacheable: func(string) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}},
		{name: "retry-faulty-local", faulty: true, open: func(t *testing.T) objstore.Bucket {
			return faultyRetry(t, newLocal(t), 7)
		}},
		{name: "retry-faulty-mem", faulty: true, open: func(t *testing.T) objstore.Bucket {
			return faultyRetry(t, NewMemBucket(), 8)
		}},
	}
}

func TestConformance(t *testing.T) {
	for _, tg := range conformanceTargets() {
		t.Run(tg.name, func(t *testing.T) { runConformance(t, tg) })
	}
}

func runConformance(t *testing.T, tg conformanceTarget) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b objstore.Bucket, tg conformanceTarget)
	}{
		{"UploadGet", testUploadGet},
		{"GetRange", testGetRange},
		{"NotFound", testNotFound},
		{"CreateIfAbsent", testCreateIfAbsent},
		{"Iter", testIter},
		{"Delete", testDelete},
		{"ConcurrentCreate", testConcurrentCreate},
		{"CheckConditionalWrites", testCheckConditionalWrites},
	}
	var injected uint64
	ran := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if !t.Skipped() {
					ran++
				}
			}()
			b := tg.open(t)
			t.Cleanup(func() { b.Close() })
			tc.fn(t, b, tg)
			if rb, ok := b.(*RetryBucket); ok {
				if fb, ok := rb.bkt.(*FaultBucket); ok {
					injected += fb.Injected()
				}
			}
		})
	}
	if tg.faulty {
		t.Logf("%d faults injected", injected)
	}
	if tg.faulty && ran > 0 && injected < 10 {
		t.Errorf("only %d faults injected; the faulty run tested little", injected)
	}
}

func mustUpload(t *testing.T, b objstore.Bucket, name, body string, opts ...objstore.ObjectUploadOption) {
	t.Helper()
	if err := b.Upload(context.Background(), name, strings.NewReader(body), opts...); err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
}

func mustGet(t *testing.T, b objstore.Bucket, name string) string {
	t.Helper()
	rc, err := b.Get(context.Background(), name)
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("get %s: read: %v", name, err)
	}
	return string(got)
}

func testUploadGet(t *testing.T, b objstore.Bucket, _ conformanceTarget) {
	ctx := context.Background()
	body := strings.Repeat("strata ", 3000) // larger than one read
	mustUpload(t, b, "a/b/obj", body)
	if got := mustGet(t, b, "a/b/obj"); got != body {
		t.Fatalf("get returned %d bytes, want %d", len(got), len(body))
	}
	attrs, err := b.Attributes(ctx, "a/b/obj")
	if err != nil || attrs.Size != int64(len(body)) {
		t.Fatalf("attributes = %+v, %v; want size %d", attrs, err, len(body))
	}
	if time.Since(attrs.LastModified) > time.Hour || attrs.LastModified.IsZero() {
		t.Fatalf("last modified %v is not recent", attrs.LastModified)
	}
	for name, want := range map[string]bool{"a/b/obj": true, "a/b/other": false, "a/b": false, "a": false} {
		if ok, err := b.Exists(ctx, name); err != nil || ok != want {
			t.Errorf("exists %s = %v, %v; want %v", name, ok, err, want)
		}
	}
	mustUpload(t, b, "a/b/obj", "replaced")
	if got := mustGet(t, b, "a/b/obj"); got != "replaced" {
		t.Fatalf("after overwrite got %q", got)
	}
	mustUpload(t, b, "empty", "")
	if got := mustGet(t, b, "empty"); got != "" {
		t.Fatalf("empty object read as %q", got)
	}
}

func testGetRange(t *testing.T, b objstore.Bucket, _ conformanceTarget) {
	mustUpload(t, b, "r", "0123456789")
	for _, c := range []struct {
		off, length int64
		want        string
	}{
		{0, 4, "0123"}, {3, -1, "3456789"}, {5, 1, "5"}, {8, 10, "89"},
		{0, -1, "0123456789"}, {10, -1, ""}, {15, 5, ""}, {15, -1, ""},
	} {
		rc, err := b.GetRange(context.Background(), "r", c.off, c.length)
		if err != nil {
			t.Errorf("getrange(%d, %d): %v", c.off, c.length, err)
			continue
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(got) != c.want {
			t.Errorf("getrange(%d, %d) = %q, %v; want %q", c.off, c.length, got, err, c.want)
		}
	}
}

func testNotFound(t *testing.T, b objstore.Bucket, tg conformanceTarget) {
	ctx := context.Background()
	_, errGet := b.Get(ctx, "missing/obj")
	_, errRange := b.GetRange(ctx, "missing/obj", 1, 2)
	_, errAttrs := b.Attributes(ctx, "missing/obj")
	errs := map[string]error{"get": errGet, "getrange": errRange, "attributes": errAttrs}
	if !tg.faulty && !tg.s3 {
		errs["delete"] = b.Delete(ctx, "missing/obj")
	}
	for op, err := range errs {
		if !b.IsObjNotFoundErr(err) {
			t.Errorf("%s of a missing object: %v; IsObjNotFoundErr false", op, err)
		}
		if b.IsConditionNotMetErr(err) || b.IsAccessDeniedErr(err) || errors.Is(err, ErrInjected) {
			t.Errorf("%s: not-found error %v also classified as another kind", op, err)
		}
	}
	if b.IsObjNotFoundErr(nil) || b.IsObjNotFoundErr(errors.New("other")) {
		t.Error("IsObjNotFoundErr true for nil or an unrelated error")
	}
}

func testCreateIfAbsent(t *testing.T, b objstore.Bucket, _ conformanceTarget) {
	if !slices.Contains(b.SupportedObjectUploadOptions(), objstore.IfNotExists) {
		t.Fatalf("SupportedObjectUploadOptions %v lacks IfNotExists", b.SupportedObjectUploadOptions())
	}
	mustUpload(t, b, "manifest/1", "first", objstore.WithIfNotExists())
	err := b.Upload(context.Background(), "manifest/1", strings.NewReader("second"), objstore.WithIfNotExists())
	if !b.IsConditionNotMetErr(err) {
		t.Fatalf("second create-if-absent: %v; want condition-not-met", err)
	}
	if b.IsObjNotFoundErr(err) || b.IsAccessDeniedErr(err) || errors.Is(err, ErrInjected) {
		t.Fatalf("condition-not-met error %v also classified as another kind", err)
	}
	if b.IsConditionNotMetErr(nil) || b.IsConditionNotMetErr(errors.New("other")) {
		t.Error("IsConditionNotMetErr true for nil or an unrelated error")
	}
	if got := mustGet(t, b, "manifest/1"); got != "first" {
		t.Fatalf("refused create changed the object to %q", got)
	}
}

func iterNames(t *testing.T, b objstore.Bucket, dir string, opts ...objstore.IterOption) []string {
	t.Helper()
	names := []string{}
	if err := b.Iter(context.Background(), dir, func(n string) error {
		names = append(names, n)
		return nil
	}, opts...); err != nil {
		t.Fatalf("iter %q: %v", dir, err)
	}
	return names
}

func testIter(t *testing.T, b objstore.Bucket, tg conformanceTarget) {
	for _, n := range []string{"dir/b", "dir/a", "dir/sub/c", "dir/sub/deeper/d", "dir.x", "top"} {
		mustUpload(t, b, n, "body of "+n)
	}
	for _, c := range []struct {
		dir       string
		recursive bool
		want      []string
	}{
		{"", false, []string{"dir.x", "dir/", "top"}},
		{"dir/", false, []string{"dir/a", "dir/b", "dir/sub/"}},
		{"dir", false, []string{"dir/a", "dir/b", "dir/sub/"}},
		{"dir/", true, []string{"dir/a", "dir/b", "dir/sub/c", "dir/sub/deeper/d"}},
		{"", true, []string{"dir.x", "dir/a", "dir/b", "dir/sub/c", "dir/sub/deeper/d", "top"}},
		{"nothing/", false, []string{}},
		{"top/", false, []string{}},
	} {
		var opts []objstore.IterOption
		if c.recursive {
			opts = append(opts, objstore.WithRecursiveIter())
		}
		got := iterNames(t, b, c.dir, opts...)
		if tg.s3 {
			slices.Sort(got)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("iter %q recursive=%v = %q; want %q", c.dir, c.recursive, got, c.want)
		}
	}
	// Removing a directory's only object removes the directory from listings.
	if err := b.Delete(context.Background(), "dir/sub/deeper/d"); err != nil {
		t.Fatal(err)
	}
	if got, want := iterNames(t, b, "dir/sub/"), []string{"dir/sub/c"}; !slices.Equal(got, want) {
		t.Errorf("after delete, iter dir/sub/ = %q; want %q", got, want)
	}
	var seen []string
	err := b.IterWithAttributes(context.Background(), "dir/", func(a objstore.IterObjectAttributes) error {
		if lm, ok := a.LastModified(); !strings.HasSuffix(a.Name, "/") && (!ok || time.Since(lm) > time.Hour) {
			t.Errorf("%s: last modified %v, %v", a.Name, lm, ok)
		}
		seen = append(seen, a.Name)
		return nil
	}, objstore.WithUpdatedAt())
	if tg.s3 {
		slices.Sort(seen)
	}
	if err != nil || !slices.Equal(seen, []string{"dir/a", "dir/b", "dir/sub/"}) {
		t.Errorf("iter with attributes = %q, %v", seen, err)
	}
	stop := errors.New("stop")
	calls := 0
	err = b.Iter(context.Background(), "dir/", func(string) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("iter with failing callback: err %v after %d calls; want stop after 1", err, calls)
	}
}

func testDelete(t *testing.T, b objstore.Bucket, _ conformanceTarget) {
	ctx := context.Background()
	mustUpload(t, b, "d/x", "x")
	if err := b.Delete(ctx, "d/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "d/x"); !b.IsObjNotFoundErr(err) {
		t.Fatalf("get after delete: %v; want not found", err)
	}
	if ok, err := b.Exists(ctx, "d/x"); ok || err != nil {
		t.Fatalf("exists after delete = %v, %v", ok, err)
	}
	// A deleted name can be created again, also with create-if-absent.
	mustUpload(t, b, "d/x", "again", objstore.WithIfNotExists())
	if got := mustGet(t, b, "d/x"); got != "again" {
		t.Fatalf("recreated object reads %q", got)
	}
}

// testConcurrentCreate races 16 create-if-absent uploads of one name:
// exactly one wins and the object holds the winner's body.
func testConcurrentCreate(t *testing.T, b objstore.Bucket, _ conformanceTarget) {
	const n = 16
	body := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("writer %02d;", i)), 5000) }
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = b.Upload(context.Background(), "wal/race", bytes.NewReader(body(i)), objstore.WithIfNotExists())
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !b.IsConditionNotMetErr(err):
			t.Errorf("writer %d: %v; want nil or condition-not-met", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	if got := mustGet(t, b, "wal/race"); got != string(body(winner)) {
		t.Fatalf("object does not hold the winner's (%d) body", winner)
	}
}

func testCheckConditionalWrites(t *testing.T, b objstore.Bucket, _ conformanceTarget) {
	if err := CheckConditionalWrites(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if left := iterNames(t, b, ProbeDir, objstore.WithRecursiveIter()); len(left) > 0 {
		t.Fatalf("probe objects left behind: %q", left)
	}
}
