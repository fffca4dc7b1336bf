package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/stratakv/strata/blob/blobtest"
)

// crashBuckets holds what the crash and fence campaigns run strata on: a
// temporary directory for local-disk buckets and, when asked for, a MinIO of
// their own. The fence campaign shares these helpers.
type crashBuckets struct {
	dir   string
	minio *blobtest.MinIOServer
}

// crashStore is one bucket: the strata server flags that name it and the
// environment the server needs to open it.
type crashStore struct {
	name string // local or minio
	args []string
	env  []string
}

// newCrashBuckets resolves which ("local", "minio" or "both") into the
// stores to run, starting MinIO when one of them is minio. A missing MinIO
// binary drops the minio store with a note on log, except under CI=true,
// where it is an error: CI must run every part.
func newCrashBuckets(which string, log io.Writer) (*crashBuckets, []string, error) {
	var names []string
	switch which {
	case "local", "minio":
		names = []string{which}
	case "both":
		names = []string{"local", "minio"}
	default:
		return nil, nil, fmt.Errorf("-store %q: want local, minio or both", which)
	}
	dir, err := os.MkdirTemp("", "strata-chaos-bucket-")
	if err != nil {
		return nil, nil, err
	}
	b := &crashBuckets{dir: dir}
	if names[len(names)-1] != "minio" {
		return b, names, nil
	}
	mdir := filepath.Join(dir, "minio")
	if err := os.Mkdir(mdir, 0o755); err != nil {
		b.Close()
		return nil, nil, err
	}
	b.minio, err = blobtest.StartMinIO(mdir, "chaos")
	if err == nil {
		return b, names, nil
	}
	// blobtest's sentinel for "no binary" is unexported; its text is stable.
	if os.Getenv("CI") == "true" || !strings.Contains(err.Error(), "no minio binary") {
		b.Close()
		return nil, nil, fmt.Errorf("minio: %w", err)
	}
	fmt.Fprintf(log, "skipping the MinIO part: %v\n", err)
	return b, names[:len(names)-1], nil
}

// store returns a fresh bucket (a new directory, or a new prefix on MinIO).
func (b *crashBuckets) store(name, prefix string) crashStore {
	if name == "minio" {
		return crashStore{name: name, args: []string{"--bucket", b.minio.URL(prefix)}, env: b.minio.Env()}
	}
	return crashStore{name: name, args: []string{"--dir", filepath.Join(b.dir, prefix)}}
}

// Close stops MinIO and removes every bucket.
func (b *crashBuckets) Close() {
	if b.minio != nil {
		b.minio.Close()
	}
	_ = os.RemoveAll(b.dir)
}

// crashClient is a go-redis client for one workload connection. It never
// resends a command (an INCR or RPUSH could apply twice, and the model
// counts each attempt once) and gives up on a dead server in seconds.
func crashClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:         addr,
		MaxRetries:   -1,
		PoolSize:     1,
		DialTimeout:  2 * time.Second,
		ReadTimeout:  20 * time.Second,
		WriteTimeout: 20 * time.Second,
		// No CLIENT MAINT_NOTIFICATIONS handshake: one less command per dial.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// crashSeed returns seed, or one from the clock when it is 0, and a
// generator seeded with it.
func crashSeed(seed uint64) (uint64, *rand.Rand) {
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	return seed, rand.New(rand.NewPCG(seed, 0x5eed))
}

// sleepCtx sleeps for d or until ctx ends, and reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
