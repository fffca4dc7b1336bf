package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
)

// bucketFlags are the flags every subcommand that opens a bucket shares, so
// the server and a separate compactor name the same bucket the same way.
type bucketFlags struct {
	dir          string
	bucket       string
	configFile   string
	localJournal bool
}

func (b *bucketFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.dir, "dir", "./data", "local data directory (the default bucket)")
	fs.StringVar(&b.bucket, "bucket", "", "bucket URL: file:///path, s3://bucket/prefix?endpoint=host:port&insecure=true")
	fs.StringVar(&b.configFile, "objstore.config-file", "", "thanos objstore client config (YAML) of the bucket")
	fs.BoolVar(&b.localJournal, "local-journal", true, "make small create-if-absent uploads (WAL objects, manifests) to the --dir bucket durable with a record in a local journal and one fdatasync, not by fsyncing each file and its directory")
}

// open opens the bucket the flags name, wrapped with retries. At most one
// of --bucket and --objstore.config-file may be given; without either the
// bucket is the local directory --dir.
func (b *bucketFlags) open(ctx context.Context, logger *slog.Logger) (objstore.Bucket, error) {
	bkt, _, err := b.openLocal(ctx, logger)
	return bkt, err
}

// openLocal is open that also returns the LocalBucket under the wrappers,
// or nil if the bucket is not a local directory.
func (b *bucketFlags) openLocal(ctx context.Context, logger *slog.Logger) (objstore.Bucket, *blob.LocalBucket, error) {
	var (
		bkt objstore.Bucket
		err error
	)
	switch {
	case b.bucket != "" && b.configFile != "":
		return nil, nil, errors.New("give --bucket or --objstore.config-file, not both")
	case b.configFile != "":
		conf, rerr := os.ReadFile(b.configFile)
		if rerr != nil {
			return nil, nil, rerr
		}
		bkt, err = blob.OpenConfig(ctx, conf, logger)
	case b.bucket != "":
		bkt, err = blob.Open(ctx, b.bucket, logger)
	default:
		var opts blob.LocalOptions
		if !b.localJournal {
			opts.JournalBytes = -1
		}
		bkt, err = blob.NewLocalBucketWithOptions(b.dir, opts)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open bucket: %w", err)
	}
	local, _ := bkt.(*blob.LocalBucket)
	if spec := os.Getenv("STRATA_FAULTS"); spec != "" {
		// The chaos campaigns' hook (integration/chaos): faults go under the
		// retry layer, where a real store's would be.
		cfg, err := blob.ParseFaultSpec(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("STRATA_FAULTS: %w", err)
		}
		logger.Warn("injecting object-store faults (STRATA_FAULTS); for testing only", "spec", spec)
		bkt = blob.NewFaultBucket(bkt, cfg)
	}
	return blob.NewRetryBucket(bkt, blob.RetryOptions{}), local, nil
}

// localDir returns the directory of a local bucket (--dir, or a --bucket
// path or file:// URL); a bucket in an objstore config file is not looked
// into.
func (b *bucketFlags) localDir() (string, bool) {
	switch {
	case b.configFile != "":
		return "", false
	case b.bucket != "":
		return blob.LocalDir(b.bucket)
	}
	return b.dir, true
}

// describe names the bucket for logs, without credentials (blob.Open
// refuses URLs that carry them).
func (b *bucketFlags) describe() string {
	switch {
	case b.configFile != "":
		return "config " + b.configFile
	case b.bucket != "":
		return b.bucket
	}
	return "dir " + b.dir
}
