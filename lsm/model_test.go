package lsm_test

import (
	"testing"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/lsmtest"
)

func TestModelMem(t *testing.T) { lsmtest.Run(t, blob.NewMemBucket(), lsmtest.Config{}) }

func TestModelLocal(t *testing.T) {
	bkt, err := blob.NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	lsmtest.Run(t, bkt, lsmtest.Config{Ops: min(lsmtest.Ops(), 2500)})
}

// TestModelS3 runs the model test against a real MinIO.
func TestModelS3(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MinIO")
	}
	lsmtest.Run(t, lsmtest.MinIOBucket(t, "model"), lsmtest.Config{Ops: min(lsmtest.Ops(), 1500)})
}

// faultyBucket fails 5% of every operation, half of the failed uploads
// after the object was stored, and retries as the server does.
func faultyBucket(inner objstore.Bucket, seed int64) (objstore.Bucket, *blob.FaultBucket) {
	fb := blob.NewFaultBucket(inner, blob.FaultConfig{
		Seed:                     seed,
		All:                      0.05,
		UploadAfterWriteFraction: 0.5,
		ReadErrorRate:            0.05,
	})
	return blob.NewRetryBucket(fb, blob.RetryOptions{MaxAttempts: 12, BaseDelay: 1e6, MaxDelay: 2e7}), fb
}

// TestModelFaults runs the model test with 5% of object-store operations
// failing: retries must hide every fault, and no result may differ.
func TestModelFaults(t *testing.T) {
	bkt, fb := faultyBucket(blob.NewMemBucket(), 42)
	lsmtest.Run(t, bkt, lsmtest.Config{})
	if fb.Injected() == 0 {
		t.Fatal("no fault was injected; the test proves nothing")
	}
	t.Logf("%d faults injected", fb.Injected())
}

// TestModelFaultsS3 is TestModelFaults against MinIO.
func TestModelFaultsS3(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MinIO")
	}
	bkt, fb := faultyBucket(lsmtest.MinIOBucket(t, "faults"), 43)
	lsmtest.Run(t, bkt, lsmtest.Config{Ops: min(lsmtest.Ops(), 1000)})
	t.Logf("%d faults injected", fb.Injected())
}
