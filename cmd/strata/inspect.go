package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/inspect"
	"github.com/stratakv/strata/manifest"
)

// inspectCommand is one `strata inspect` subcommand. run gets the open
// bucket and the positional arguments; flags it needs are registered by
// flags, before parsing.
type inspectCommand struct {
	name, args, summary string
	flags               func(fs *flag.FlagSet) func(ctx context.Context, bkt objstore.Bucket, pos []string, out inspectOut) int
}

// inspectOut is where a subcommand writes: results to stdout, progress and
// errors to stderr.
type inspectOut struct {
	stdout, stderr io.Writer
}

func (o inspectOut) fail(err error) int {
	fmt.Fprintln(o.stderr, "strata inspect:", err)
	return 1
}

var inspectCommands = []inspectCommand{
	{"manifest", "", "the latest manifest (or --id N) and the LSM's shape", inspectManifestCmd},
	{"history", "", "every manifest in the bucket, one line each", inspectHistoryCmd},
	{"sst", "NAME", "an SST's rows, keys decoded per keyspace (NAME: sst/<ULID>.sst or the ULID)", inspectSSTCmd},
	{"wal", "[ID]", "list the WAL objects, or dump one object's rows", inspectWALCmd},
	{"verify", "", "read every object the latest manifest needs and check every checksum", inspectVerifyCmd},
}

// runInspect runs `strata inspect <subcommand>`. It only reads the bucket.
func runInspect(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return inspectMain(ctx, args, os.Stdout, os.Stderr)
}

// inspectMain is runInspect with its context and output given, for tests.
// Exit codes: 0 fine, 1 a failure (verify: a missing or corrupt object), 2
// bad usage.
func inspectMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		inspectUsage(stderr)
		return 2
	}
	for _, c := range inspectCommands {
		if c.name != args[0] {
			continue
		}
		fs := flag.NewFlagSet("strata inspect "+c.name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		var bf bucketFlags
		bf.register(fs)
		run := c.flags(fs)
		pos, err := parseInterleaved(fs, args[1:])
		if err != nil {
			return 2
		}
		secrets := bf.secrets()
		out := inspectOut{stdout: newRedactWriter(stdout, secrets), stderr: newRedactWriter(stderr, secrets)}
		if bf.bucket == "" && bf.configFile == "" {
			// Opening a local bucket creates its directory: do not, for a
			// typo, in a read-only tool.
			if st, err := os.Stat(bf.dir); err != nil || !st.IsDir() {
				return out.fail(fmt.Errorf("--dir %s: no such bucket directory", bf.dir))
			}
		}
		logger := slog.New(slog.NewTextHandler(out.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		bkt, err := bf.open(ctx, logger)
		if err != nil {
			return out.fail(fmt.Errorf("%s: %w", bf.describe(), err))
		}
		defer bkt.Close()
		return run(ctx, bkt, pos, out)
	}
	fmt.Fprintf(stderr, "strata inspect: unknown subcommand %q\n", args[0])
	inspectUsage(stderr)
	return 2
}

func inspectUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: strata inspect <subcommand> [--dir D | --bucket URL | --objstore.config-file F] [flags]\n\nsubcommands:")
	for _, c := range inspectCommands {
		fmt.Fprintf(w, "  %-18s %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
}

// parseInterleaved parses flags that may come before or after positional
// arguments (`inspect sst NAME --limit 5`), which flag.Parse alone stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func wantArgs(pos []string, lo, hi int, out inspectOut) bool {
	if len(pos) < lo || len(pos) > hi {
		fmt.Fprintf(out.stderr, "strata inspect: wrong number of arguments: %q\n", pos)
		return false
	}
	return true
}

func inspectManifestCmd(fs *flag.FlagSet) func(context.Context, objstore.Bucket, []string, inspectOut) int {
	id := fs.Uint64("id", 0, "manifest id (default: the latest)")
	return func(ctx context.Context, bkt objstore.Bucket, pos []string, out inspectOut) int {
		if !wantArgs(pos, 0, 0, out) {
			return 2
		}
		m, err := inspect.LoadManifest(ctx, bkt, *id)
		if err != nil {
			return out.fail(err)
		}
		inspect.WriteManifest(out.stdout, m)
		return 0
	}
}

func inspectHistoryCmd(*flag.FlagSet) func(context.Context, objstore.Bucket, []string, inspectOut) int {
	return func(ctx context.Context, bkt objstore.Bucket, pos []string, out inspectOut) int {
		if !wantArgs(pos, 0, 0, out) {
			return 2
		}
		entries, err := inspect.History(ctx, bkt)
		if err != nil {
			return out.fail(err)
		}
		inspect.WriteHistory(out.stdout, entries)
		return 0
	}
}

func inspectSSTCmd(fs *flag.FlagSet) func(context.Context, objstore.Bucket, []string, inspectOut) int {
	limit := fs.Int("limit", 0, "print at most this many rows (0: all)")
	return func(ctx context.Context, bkt objstore.Bucket, pos []string, out inspectOut) int {
		if !wantArgs(pos, 1, 1, out) {
			return 2
		}
		name, err := inspect.SSTObjectName(pos[0])
		if err != nil {
			fmt.Fprintln(out.stderr, "strata inspect:", err)
			return 2
		}
		if err := inspect.DumpSST(ctx, bkt, name, *limit, out.stdout); err != nil {
			return out.fail(err)
		}
		return 0
	}
}

func inspectWALCmd(fs *flag.FlagSet) func(context.Context, objstore.Bucket, []string, inspectOut) int {
	limit := fs.Int("limit", 0, "print at most this many rows of the object (0: all)")
	return func(ctx context.Context, bkt objstore.Bucket, pos []string, out inspectOut) int {
		if !wantArgs(pos, 0, 1, out) {
			return 2
		}
		if len(pos) == 1 {
			id, err := strconv.ParseUint(pos[0], 10, 64)
			if err != nil {
				fmt.Fprintf(out.stderr, "strata inspect: WAL id %q is not a number\n", pos[0])
				return 2
			}
			if err := inspect.DumpWAL(ctx, bkt, id, *limit, out.stdout); err != nil {
				return out.fail(err)
			}
			return 0
		}
		m, err := inspect.LoadManifest(ctx, bkt, 0)
		if err != nil && !errors.Is(err, manifest.ErrNotFound) {
			return out.fail(err)
		}
		objs, err := inspect.ListWAL(ctx, bkt, m)
		if err != nil {
			return out.fail(err)
		}
		inspect.WriteWALList(out.stdout, objs)
		return 0
	}
}
