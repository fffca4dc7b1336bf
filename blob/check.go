package blob

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/thanos-io/objstore"
)

// ErrNoConditionalWrites is wrapped by CheckConditionalWrites when the bucket
// cannot do create-if-absent, which Strata's fencing of writers relies on.
var ErrNoConditionalWrites = errors.New("blob: bucket cannot do create-if-absent (conditional writes)")

// ProbeDir holds the objects CheckConditionalWrites writes and deletes.
const ProbeDir = "_probe/"

// advice says what to do about a bucket without create-if-absent.
const advice = "use a store with conditional writes (AWS S3, MinIO, or a local directory), " +
	"or run a single writer with the unsafe override that skips this check"

// CheckConditionalWrites verifies that bkt can create an object only if it
// is absent: its provider must list objstore.IfNotExists, and a probe object
// created twice under ProbeDir must be refused the second time, keeping the
// first body. The probe object is deleted afterwards. An error wraps
// ErrNoConditionalWrites when the bucket lacks the ability, and is an
// ordinary error when the probe could not be run (the store is unreachable).
func CheckConditionalWrites(ctx context.Context, bkt objstore.Bucket) error {
	if !slices.Contains(bkt.SupportedObjectUploadOptions(), objstore.IfNotExists) {
		return fmt.Errorf("%w: provider %s does not support If-None-Match uploads; %s",
			ErrNoConditionalWrites, bkt.Provider(), advice)
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("blob: conditional write probe: %w", err)
	}
	// A unique name, so that processes checking at once do not collide, and
	// distinct bodies, so that an overwrite is visible.
	name := ProbeDir + "conditional-write-" + hex.EncodeToString(rnd[:])
	first, second := []byte("first "+name), []byte("second "+name)
	if err := bkt.Upload(ctx, name, bytes.NewReader(first), objstore.WithIfNotExists()); err != nil {
		if errors.Is(err, objstore.ErrUploadOptionNotSupported) {
			return fmt.Errorf("%w: %v; %s", ErrNoConditionalWrites, err, advice)
		}
		return fmt.Errorf("blob: conditional write probe: creating %s: %w", name, err)
	}
	err := probeSecondCreate(ctx, bkt, name, first, second)
	if derr := bkt.Delete(ctx, name); derr != nil && err == nil && !bkt.IsObjNotFoundErr(derr) {
		err = fmt.Errorf("blob: conditional write probe: deleting %s: %w", name, derr)
	}
	return err
}

// probeSecondCreate creates name again and checks it is refused and that the
// first body survived.
func probeSecondCreate(ctx context.Context, bkt objstore.Bucket, name string, first, second []byte) error {
	err := bkt.Upload(ctx, name, bytes.NewReader(second), objstore.WithIfNotExists())
	switch {
	case err == nil:
		return fmt.Errorf("%w: a second create-if-absent of %s succeeded (the store ignores If-None-Match); %s",
			ErrNoConditionalWrites, name, advice)
	case ctx.Err() != nil:
		return ctx.Err()
	case !bkt.IsConditionNotMetErr(err):
		return fmt.Errorf("%w: a second create-if-absent of %s failed with %v instead of condition-not-met; %s",
			ErrNoConditionalWrites, name, err, advice)
	}
	rc, err := bkt.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("blob: conditional write probe: reading %s: %w", name, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("blob: conditional write probe: reading %s: %w", name, err)
	}
	if !bytes.Equal(got, first) {
		return fmt.Errorf("%w: a refused create-if-absent of %s still overwrote it; %s",
			ErrNoConditionalWrites, name, advice)
	}
	return nil
}
