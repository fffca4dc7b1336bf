package blob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/thanos-io/objstore"
)

// TestLocalBucketCreateIfAbsentRenameAndLink: create-if-absent publishes
// by renameat2(RENAME_NOREPLACE), or by link(2) where a file system
// refuses it; either way exactly one of many concurrent creates of a name
// wins, the name holds the winner's whole body, and no temp file is left.
func TestLocalBucketCreateIfAbsentRenameAndLink(t *testing.T) {
	for _, mode := range []string{"rename", "link"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "link" {
				noRenameNoReplace.Store(true)
				t.Cleanup(func() { noRenameNoReplace.Store(false) })
			}
			dir := t.TempDir()
			b, err := NewLocalBucket(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for round := range 20 {
				name := WALName(uint64(round + 1))
				const racers = 8
				won := make([]bool, racers)
				var wg sync.WaitGroup
				for i := range racers {
					wg.Go(func() {
						body := strings.Repeat(fmt.Sprintf("racer %d ", i), 100+i)
						err := b.Upload(context.Background(), name, strings.NewReader(body), objstore.WithIfNotExists())
						switch {
						case err == nil:
							won[i] = true
						case !b.IsConditionNotMetErr(err):
							t.Errorf("racer %d: %v", i, err)
						}
					})
				}
				wg.Wait()
				winner := -1
				for i, w := range won {
					if w {
						if winner >= 0 {
							t.Fatalf("round %d: racers %d and %d both created %s", round, winner, i, name)
						}
						winner = i
					}
				}
				if winner < 0 {
					t.Fatalf("round %d: no racer created %s", round, name)
				}
				got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
				if want := strings.Repeat(fmt.Sprintf("racer %d ", winner), 100+winner); err != nil || string(got) != want {
					t.Fatalf("round %d: %s holds %d bytes (%v); want racer %d's %d", round, name, len(got), err, winner, len(want))
				}
			}
			b.Close()
			if tmps, _ := os.ReadDir(filepath.Join(dir, tmpDirName)); len(tmps) != 0 {
				t.Fatalf("temp files left: %d", len(tmps))
			}
		})
	}
}

// TestLocalBucketRecyclesWALFiles: a deleted WAL object's file becomes,
// emptied, a temp file for later uploads, so the new objects hold exactly
// their own bodies; other objects' files are removed as before; a deleted
// name reads as not found; Close leaves no temp file.
func TestLocalBucketRecyclesWALFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	temps := func() (n int) {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join(dir, tmpDirName))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && fi.Size() == 0 {
				n++
			}
		}
		return n
	}
	const n = 8
	for i := range n {
		mustUpload(t, b, WALName(uint64(i+1)), strings.Repeat("old bytes ", 1000), objstore.WithIfNotExists())
	}
	mustUpload(t, b, ManifestName(1), "m", objstore.WithIfNotExists())
	b.aids.waitIdle()
	before := temps() // the spares
	for i := range n {
		if err := b.Delete(ctx, WALName(uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(ctx, ManifestName(1)); err != nil {
		t.Fatal(err)
	}
	b.aids.waitIdle()
	if got := temps(); got != before+n {
		t.Fatalf("%d empty temp files after deleting %d WAL objects and a manifest; want %d spares + %d recycled", got, n, before, n)
	}
	for _, name := range []string{WALName(1), ManifestName(1)} {
		if ok, err := b.Exists(ctx, name); ok || err != nil {
			t.Fatalf("%s exists after Delete (%v)", name, err)
		}
		if _, err := b.Get(ctx, name); !b.IsObjNotFoundErr(err) {
			t.Fatalf("Get of deleted %s: %v", name, err)
		}
	}
	if err := b.Delete(ctx, WALName(1)); !b.IsObjNotFoundErr(err) {
		t.Fatalf("second Delete of %s: %v", WALName(1), err)
	}
	for i := range n {
		name := WALName(uint64(100 + i))
		body := fmt.Sprintf("new %d", i)
		mustUpload(t, b, name, body, objstore.WithIfNotExists())
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != body {
			t.Fatalf("%s holds %q (%v); want %q", name, got, err, body)
		}
	}
	b.aids.waitIdle()
	if got := temps(); got != before {
		t.Fatalf("%d empty temp files after %d more uploads; want the %d recycled ones used and %d spares", got, n, n, before)
	}
	b.Close()
	if tmps, _ := os.ReadDir(filepath.Join(dir, tmpDirName)); len(tmps) != 0 {
		t.Fatalf("temp files left: %d", len(tmps))
	}
}
