package blob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/thanos-io/objstore"
)

// memBucket is objstore's in-memory bucket (whose create-if-absent is atomic
// under its mutex) with the edges filed off so it behaves like S3 and
// LocalBucket: Iter treats dir as a directory even without a trailing "/",
// lists in plain lexicographic order (InMemBucket puts files before
// directories) and honours ctx; GetRange rejects negative ranges (InMemBucket
// would panic) and serves length 0 as an empty body.
type memBucket struct {
	*objstore.InMemBucket
}

// NewMemBucket returns an empty in-memory bucket that supports
// create-if-absent. For tests and the "mem://" spec.
func NewMemBucket() objstore.Bucket {
	return memBucket{objstore.NewInMemBucket()}
}

// Name implements objstore.Bucket.
func (b memBucket) Name() string { return "mem" }

// Iter implements objstore.Bucket.
func (b memBucket) Iter(ctx context.Context, dir string, f func(string) error, opts ...objstore.IterOption) error {
	var recursive []objstore.IterOption
	for _, o := range opts {
		if o.Type == objstore.Recursive {
			recursive = append(recursive, o)
		}
	}
	return b.IterWithAttributes(ctx, dir, func(a objstore.IterObjectAttributes) error {
		return f(a.Name)
	}, recursive...)
}

// IterWithAttributes implements objstore.Bucket.
func (b memBucket) IterWithAttributes(ctx context.Context, dir string, f func(objstore.IterObjectAttributes) error, opts ...objstore.IterOption) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	var all []objstore.IterObjectAttributes
	err := b.InMemBucket.IterWithAttributes(ctx, dir, func(a objstore.IterObjectAttributes) error {
		all = append(all, a)
		return nil
	}, opts...)
	if err != nil {
		return err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	for _, a := range all {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f(a); err != nil {
			return err
		}
	}
	return nil
}

// Get implements objstore.Bucket.
func (b memBucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.InMemBucket.Get(ctx, name)
}

// GetRange implements objstore.Bucket.
func (b memBucket) GetRange(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if off < 0 || length < -1 {
		return nil, fmt.Errorf("blob: get %s: invalid range off=%d length=%d", name, off, length)
	}
	if length == 0 {
		if _, err := b.InMemBucket.Attributes(ctx, name); err != nil {
			return nil, err
		}
		return objstore.NopCloserWithSize(bytes.NewReader(nil)), nil
	}
	return b.InMemBucket.GetRange(ctx, name, off, length)
}

// Upload implements objstore.Bucket.
func (b memBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.InMemBucket.Upload(ctx, name, r, opts...)
}
