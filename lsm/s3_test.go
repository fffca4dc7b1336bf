package lsm

import (
	"context"
	"testing"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
)

func TestMain(m *testing.M) { blobtest.Main(m) }

func minioBucket(t *testing.T, prefix string) objstore.Bucket {
	t.Helper()
	s := blobtest.MinIO(t)
	bkt, err := blob.OpenConfig(context.Background(), s.Config(prefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	return bkt
}

// TestModelS3 runs the model test against a real MinIO.
func TestModelS3(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MinIO")
	}
	defer setFlag(modelOps, min(*modelOps, 1500))()
	runModel(t, minioBucket(t, "model"))
}

// TestFencingS3 runs the fencing test against a real MinIO.
func TestFencingS3(t *testing.T) {
	if testing.Short() {
		t.Skip("needs MinIO")
	}
	testFencing(t, minioBucket(t, "fencing"))
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
	runModel(t, bkt)
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
	defer setFlag(modelOps, min(*modelOps, 1000))()
	bkt, fb := faultyBucket(minioBucket(t, "faults"), 43)
	runModel(t, bkt)
	t.Logf("%d faults injected", fb.Injected())
}

func setFlag[T any](p *T, v T) (restore func()) {
	old := *p
	*p = v
	return func() { *p = old }
}
