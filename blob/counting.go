package blob

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/thanos-io/objstore"
)

// OpCounts is the number of calls of each bucket operation. Iter counts
// Iter and IterWithAttributes.
type OpCounts struct {
	Get, GetRange, Upload, Delete, Iter, Exists, Attributes uint64
}

// CountingBucket counts the calls made to the bucket it wraps, failed ones
// included, for tests and metrics of request costs.
type CountingBucket struct {
	bkt objstore.Bucket

	get, getRange, upload, del, iter, exists, attributes atomic.Uint64
}

var _ objstore.Bucket = (*CountingBucket)(nil)

// NewCountingBucket wraps bkt with call counters.
func NewCountingBucket(bkt objstore.Bucket) *CountingBucket { return &CountingBucket{bkt: bkt} }

// Counts returns the calls so far.
func (b *CountingBucket) Counts() OpCounts {
	return OpCounts{
		Get:        b.get.Load(),
		GetRange:   b.getRange.Load(),
		Upload:     b.upload.Load(),
		Delete:     b.del.Load(),
		Iter:       b.iter.Load(),
		Exists:     b.exists.Load(),
		Attributes: b.attributes.Load(),
	}
}

// Get implements objstore.Bucket.
func (b *CountingBucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	b.get.Add(1)
	return b.bkt.Get(ctx, name)
}

// GetRange implements objstore.Bucket.
func (b *CountingBucket) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	b.getRange.Add(1)
	return b.bkt.GetRange(ctx, name, off, length)
}

// ReadRange implements RangeReader (counted as a GetRange), through the
// inner bucket's RangeReader when it has one.
func (b *CountingBucket) ReadRange(ctx context.Context, name string, off, length int64) ([]byte, error) {
	b.getRange.Add(1)
	return ReadRange(ctx, b.bkt, name, off, length)
}

// Upload implements objstore.Bucket.
func (b *CountingBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	b.upload.Add(1)
	return b.bkt.Upload(ctx, name, r, opts...)
}

// Delete implements objstore.Bucket.
func (b *CountingBucket) Delete(ctx context.Context, name string) error {
	b.del.Add(1)
	return b.bkt.Delete(ctx, name)
}

// Iter implements objstore.Bucket.
func (b *CountingBucket) Iter(ctx context.Context, dir string, f func(string) error, opts ...objstore.IterOption) error {
	b.iter.Add(1)
	return b.bkt.Iter(ctx, dir, f, opts...)
}

// IterWithAttributes implements objstore.Bucket.
func (b *CountingBucket) IterWithAttributes(ctx context.Context, dir string, f func(objstore.IterObjectAttributes) error, opts ...objstore.IterOption) error {
	b.iter.Add(1)
	return b.bkt.IterWithAttributes(ctx, dir, f, opts...)
}

// Exists implements objstore.Bucket.
func (b *CountingBucket) Exists(ctx context.Context, name string) (bool, error) {
	b.exists.Add(1)
	return b.bkt.Exists(ctx, name)
}

// Attributes implements objstore.Bucket.
func (b *CountingBucket) Attributes(ctx context.Context, name string) (objstore.ObjectAttributes, error) {
	b.attributes.Add(1)
	return b.bkt.Attributes(ctx, name)
}

// Provider implements objstore.Bucket.
func (b *CountingBucket) Provider() objstore.ObjProvider { return b.bkt.Provider() }

// Name implements objstore.Bucket.
func (b *CountingBucket) Name() string { return b.bkt.Name() }

// Close implements objstore.Bucket.
func (b *CountingBucket) Close() error { return b.bkt.Close() }

// SupportedIterOptions implements objstore.Bucket.
func (b *CountingBucket) SupportedIterOptions() []objstore.IterOptionType {
	return b.bkt.SupportedIterOptions()
}

// SupportedObjectUploadOptions implements objstore.Bucket.
func (b *CountingBucket) SupportedObjectUploadOptions() []objstore.ObjectUploadOptionType {
	return b.bkt.SupportedObjectUploadOptions()
}

// IsObjNotFoundErr implements objstore.Bucket.
func (b *CountingBucket) IsObjNotFoundErr(err error) bool { return b.bkt.IsObjNotFoundErr(err) }

// IsConditionNotMetErr implements objstore.Bucket.
func (b *CountingBucket) IsConditionNotMetErr(err error) bool {
	return b.bkt.IsConditionNotMetErr(err)
}

// IsAccessDeniedErr implements objstore.Bucket.
func (b *CountingBucket) IsAccessDeniedErr(err error) bool { return b.bkt.IsAccessDeniedErr(err) }

// WithMetrics wraps bkt with objstore's Prometheus metrics
// (objstore_bucket_operations_total and friends), labelled bucket=name and
// registered with reg. Registering two buckets of one name with one
// registry panics.
func WithMetrics(bkt objstore.Bucket, reg prometheus.Registerer, name string) objstore.Bucket {
	return objstore.WrapWithMetrics(bkt, reg, name)
}
