package main

import (
	"context"
	"flag"
	"log/slog"
	"strings"
	"testing"

	"github.com/thanos-io/objstore"
)

// TestLocalJournalFlag: --local-journal=false gives a --dir bucket without
// a journal, whose uploads never go near one; INFO says which it is.
func TestLocalJournalFlag(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"--local-journal=false"}, false}} {
		fs := flag.NewFlagSet("strata", flag.ContinueOnError)
		var b bucketFlags
		b.register(fs)
		if err := fs.Parse(append([]string{"--dir", t.TempDir()}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		bkt, lb, err := b.openLocal(ctx, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if lb == nil || lb.Journaling() != tc.want {
			t.Fatalf("%v: local bucket %v, journaling want %v", tc.args, lb, tc.want)
		}
		for _, name := range []string{"wal/1", "wal/2"} {
			if err := bkt.Upload(ctx, name, strings.NewReader("x"), objstore.WithIfNotExists()); err != nil {
				t.Fatal(err)
			}
		}
		st := lb.JournalStats()
		if used := st.Journaled+st.Direct > 0; used != tc.want {
			t.Errorf("%v: journal stats %+v", tc.args, st)
		}
		info := journalInfo(lb)
		if on := info.Fields[0][1] == "on"; on != tc.want {
			t.Errorf("%v: INFO %v", tc.args, info.Fields[0])
		}
		if err := bkt.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := journalInfo(nil).Fields[0][1]; got != "none" {
		t.Errorf("INFO for a bucket that is not a local directory: %q", got)
	}
}
