package blob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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

// TestLocalBucketRecyclesWALFiles: a deleted WAL object's file, its bytes
// kept, becomes a later WAL object's, and only one whose body needs at
// least the blocks the file holds (so cutting it to the body frees none);
// every new object holds exactly its own body; other objects' files are
// removed; a deleted name reads as not found; Close leaves no temp file.
func TestLocalBucketRecyclesWALFiles(t *testing.T) {
	ctx := context.Background()
	b := newLocal(t)
	dir := b.Root()
	inode := func(path string) uint64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	bs := b.aids.blockSize
	// Old objects of 1 to 4 blocks, two of each.
	const n = 8
	oldSize := map[uint64]int64{} // inode -> the old object's size
	for i := range n {
		name := WALName(uint64(i + 1))
		size := int64(i/2)*bs + bs/2
		mustUpload(t, b, name, strings.Repeat("o", int(size)), objstore.WithIfNotExists())
		oldSize[inode(filepath.Join(dir, filepath.FromSlash(name)))] = size
	}
	mustUpload(t, b, ManifestName(1), "m", objstore.WithIfNotExists())
	for i := range n {
		if err := b.Delete(ctx, WALName(uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(ctx, ManifestName(1)); err != nil {
		t.Fatal(err)
	}
	if st := b.RecycleStats(); st.Files != n || st.Recycled != n {
		t.Fatalf("after deleting %d WAL objects and a manifest: %+v; want %d files recycled", n, st, n)
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

	// A manifest takes no recycled file.
	mustUpload(t, b, ManifestName(2), "m2", objstore.WithIfNotExists())
	if _, ok := oldSize[inode(filepath.Join(dir, ManifestName(2)))]; ok {
		t.Fatal("a manifest was written into a recycled WAL file")
	}
	// New WAL objects: 3 blocks, 1 block, 2 bytes, 4 blocks, 2 blocks...
	reused := 0
	for i, size := range []int64{3 * bs, bs - 7, 2, 4 * bs, 2*bs - 1, bs, 5 * bs, 3*bs + 1, 1} {
		name := WALName(uint64(100 + i))
		body := strings.Repeat(string(rune('a'+i)), int(size))
		mustUpload(t, b, name, body, objstore.WithIfNotExists())
		path := filepath.Join(dir, filepath.FromSlash(name))
		if got, err := os.ReadFile(path); err != nil || string(got) != body {
			t.Fatalf("%s holds %d bytes (%v); want its own %d", name, len(got), err, len(body))
		}
		if old, ok := oldSize[inode(path)]; ok {
			reused++
			if b.aids.blocks(old) > b.aids.blocks(size) {
				t.Fatalf("%s of %d bytes took a recycled file holding %d: cutting it freed blocks", name, size, old)
			}
			delete(oldSize, inode(path))
		}
	}
	// 3 blocks takes a 3-block file, 1 block and 2 bytes the 1-block ones,
	// 4 blocks a 4-block file, 2 blocks a 2-block one, 1 block none left,
	// 5 blocks the other 4-block one, 3 blocks+1 the other 3-block one, 1
	// byte none.
	if st := b.RecycleStats(); reused != 7 || st.Reused != 7 || st.Files != 1 {
		t.Fatalf("%d uploads into recycled files, stats %+v; want 7 reused and a 2-block file left", reused, st)
	}
	b.Close()
	if tmps, _ := os.ReadDir(filepath.Join(dir, tmpDirName)); len(tmps) != 0 {
		t.Fatalf("temp files left: %d", len(tmps))
	}
}
