package blob

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/thanos-io/objstore"
	"github.com/thanos-io/objstore/providers/filesystem"
)

// noCondBucket claims create-if-absent support but ignores the condition,
// like an S3-compatible store that drops If-None-Match.
type noCondBucket struct{ objstore.Bucket }

func (b noCondBucket) Upload(ctx context.Context, name string, r io.Reader, _ ...objstore.ObjectUploadOption) error {
	return b.Bucket.Upload(ctx, name, r)
}

// refusingOverwriter refuses the second create with a non-condition error
// but overwrites the object anyway.
type refusingOverwriter struct{ objstore.Bucket }

func (b refusingOverwriter) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	ok, _ := b.Bucket.Exists(ctx, name)
	if err := b.Bucket.Upload(ctx, name, r); err != nil || !ok {
		return err
	}
	return errors.New("501 not implemented")
}

// noOptions lists no upload options.
type noOptions struct{ objstore.Bucket }

func (noOptions) SupportedObjectUploadOptions() []objstore.ObjectUploadOptionType { return nil }

func TestCheckConditionalWritesRejects(t *testing.T) {
	for name, b := range map[string]objstore.Bucket{
		"option not listed":        noOptions{NewMemBucket()},
		"condition ignored":        noCondBucket{NewMemBucket()},
		"refused but overwritten":  refusingOverwriter{NewMemBucket()},
		"local condition ignored":  noCondBucket{newLocal(t)},
		"prefixed, option missing": objstore.NewPrefixedBucket(noOptions{newLocal(t)}, "p"),
	} {
		err := CheckConditionalWrites(context.Background(), b)
		if !errors.Is(err, ErrNoConditionalWrites) {
			t.Errorf("%s: %v; want ErrNoConditionalWrites", name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "create-if-absent") || !strings.Contains(msg, "unsafe override") {
			t.Errorf("%s: message %q does not say what is wrong and what to do", name, msg)
		}
		if left := iterNames(t, b, ProbeDir, objstore.WithRecursiveIter()); len(left) > 0 {
			t.Errorf("%s: probe objects left behind: %q", name, left)
		}
	}
}

func TestCheckConditionalWritesReportsUnreachableStoreAsSuch(t *testing.T) {
	f := NewFaultBucket(NewMemBucket(), FaultConfig{All: 1})
	err := CheckConditionalWrites(context.Background(), f)
	if err == nil || errors.Is(err, ErrNoConditionalWrites) || !errors.Is(err, ErrInjected) {
		t.Fatalf("probe against a failing store: %v; want the store's error, not ErrNoConditionalWrites", err)
	}
}

// Thanos' own filesystem provider supports create-if-absent (with xattrs),
// so the check passes; Strata still uses LocalBucket for its fsyncs.
func TestCheckConditionalWritesThanosFilesystem(t *testing.T) {
	fs, err := filesystem.NewBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	err = CheckConditionalWrites(context.Background(), fs)
	if len(fs.SupportedObjectUploadOptions()) == 0 {
		if !errors.Is(err, ErrNoConditionalWrites) {
			t.Fatalf("no xattrs: %v; want ErrNoConditionalWrites", err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
}
