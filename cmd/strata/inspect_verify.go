package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/inspect"
)

func inspectVerifyCmd(fs *flag.FlagSet) func(context.Context, objstore.Bucket, []string, inspectOut) int {
	conc := fs.Int("concurrency", 8, "objects read at once")
	return func(ctx context.Context, bkt objstore.Bucket, pos []string, out inspectOut) int {
		if !wantArgs(pos, 0, 0, out) {
			return 2
		}
		bar := newProgressBar(out.stderr)
		rep, err := inspect.Verify(ctx, bkt, inspect.VerifyOptions{Concurrency: *conc, Progress: bar.update})
		bar.finish()
		if err != nil {
			return out.fail(err)
		}
		fmt.Fprintf(out.stdout, "verified manifest %d, %d SSTs and %d unreplayed WAL objects: %s, %d rows\n",
			rep.ManifestID, rep.SSTs, rep.WALs, inspect.FormatBytes(rep.Bytes), rep.Rows)
		for _, p := range rep.Torn {
			fmt.Fprintf(out.stdout, "TORN %s (a torn WAL tail: stored before a power loss, never acknowledged; replay skips it)\n", p)
		}
		if rep.OK() {
			fmt.Fprintln(out.stdout, "OK")
			return 0
		}
		for _, p := range rep.Problems {
			fmt.Fprintf(out.stdout, "CORRUPT %s\n", p)
		}
		fmt.Fprintf(out.stdout, "%d of %d objects failed\n", len(rep.Problems), rep.SSTs+rep.WALs+1)
		return 1
	}
}

// progressBar draws Verify's progress on w: a bar redrawn in place when w
// is a terminal, otherwise a count/total line at every tenth of the way.
type progressBar struct {
	w        io.Writer
	tty      bool
	lastStep int
	drawn    bool
}

func newProgressBar(w io.Writer) *progressBar {
	b := &progressBar{w: w, lastStep: -1}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			b.tty = true
		}
	}
	return b
}

// update is Verify's Progress callback (never called concurrently).
func (b *progressBar) update(p inspect.Progress) {
	if b.tty {
		const width = 30
		filled := width * p.Done / max(p.Total, 1)
		fmt.Fprintf(b.w, "\rverify [%s%s] %d/%d objects, %s ", strings.Repeat("#", filled),
			strings.Repeat(".", width-filled), p.Done, p.Total, inspect.FormatBytes(p.Bytes))
		b.drawn = true
		return
	}
	if step := 10 * p.Done / max(p.Total, 1); step != b.lastStep {
		b.lastStep = step
		fmt.Fprintf(b.w, "verify: %d/%d objects, %s\n", p.Done, p.Total, inspect.FormatBytes(p.Bytes))
	}
}

func (b *progressBar) finish() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}
