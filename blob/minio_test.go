package blob

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
	"github.com/thanos-io/objstore"
)

// TestMain stops the MinIO server the MinIO tests share.
func TestMain(m *testing.M) { blobtest.Main(m) }

func openMinIOURL(t *testing.T, s *blobtest.MinIOServer, prefix string) objstore.Bucket {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	b, err := Open(context.Background(), s.URL(prefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMinIOConformance(t *testing.T) {
	for _, tg := range []conformanceTarget{
		{name: "url", s3: true, open: func(t *testing.T) objstore.Bucket {
			return openMinIOURL(t, blobtest.MinIO(t), "pre/fix")
		}},
		{name: "config", s3: true, open: func(t *testing.T) objstore.Bucket {
			s := blobtest.MinIO(t)
			b, err := OpenConfig(context.Background(), s.Config(""), nil)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{name: "retry-faulty", s3: true, faulty: true, open: func(t *testing.T) objstore.Bucket {
			return faultyRetry(t, openMinIOURL(t, blobtest.MinIO(t), "p"), 11)
		}},
	} {
		t.Run(tg.name, func(t *testing.T) { runConformance(t, tg) })
	}
}

// A RetryBucket rides out the store being down for a while.
func TestMinIORetryAcrossRestart(t *testing.T) {
	s := blobtest.NewMinIO(t)
	r := NewRetryBucket(openMinIOURL(t, s, ""), RetryOptions{MaxAttempts: 40, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second})
	mustUpload(t, r, "before", "b", objstore.WithIfNotExists())
	s.Stop(t)
	done := make(chan error, 1)
	go func() {
		done <- r.Upload(context.Background(), "wal/1", strings.NewReader("during"), objstore.WithIfNotExists())
	}()
	time.Sleep(300 * time.Millisecond)
	s.Start(t)
	if err := <-done; err != nil {
		t.Fatalf("upload while the store restarted: %v", err)
	}
	if r.Retries() == 0 {
		t.Fatal("no retries: the store was not down during the upload")
	}
	if got := mustGet(t, r, "wal/1"); got != "during" {
		t.Fatalf("object = %q", got)
	}
}
