package blob

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/minio/minio-go/v7"
	"github.com/thanos-io/objstore"
)

// s3Bucket smooths two edges of thanos' S3 provider so that Strata code
// behaves the same on every bucket:
//
//   - Get of an empty object fails with io.EOF (the provider reads the first
//     byte to surface not-found, and an empty body has none); it returns an
//     empty body instead. Empty objects are legitimate (fence objects).
//   - A range starting at or beyond the end fails with InvalidRange (HTTP
//     416); it returns an empty body instead, as LocalBucket and objstore's
//     filesystem and in-memory buckets do.
type s3Bucket struct {
	objstore.Bucket
}

// Get implements objstore.Bucket.
func (b s3Bucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	rc, err := b.Bucket.Get(ctx, name)
	if errors.Is(err, io.EOF) {
		return emptyBody(), nil
	}
	return rc, err
}

// GetRange implements objstore.Bucket.
func (b s3Bucket) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	rc, err := b.Bucket.GetRange(ctx, name, off, length)
	if errors.Is(err, io.EOF) || (err != nil && minio.ToErrorResponse(err).Code == "InvalidRange") {
		return emptyBody(), nil
	}
	return rc, err
}

func emptyBody() io.ReadCloser { return objstore.NopCloserWithSize(bytes.NewReader(nil)) }
