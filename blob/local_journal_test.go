//go:build linux

package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/thanos-io/objstore"
)

// A power loss cannot be caused in a test. What it does to a journaled
// upload can: the name is on disk (or not) and its bytes are not, while the
// journal record, fdatasynced before the upload returned, is. These tests
// stop a bucket as a crash would (crash: journal files closed, nothing
// synced or removed), damage objects the way lost page cache would, and
// check that the next open puts back every acknowledged object.

// openJournaled opens a journaling bucket whose journal is ready, so every
// small create-if-absent upload goes through it.
func openJournaled(t *testing.T, dir string, size int64) *LocalBucket {
	t.Helper()
	b, err := NewLocalBucketWithOptions(dir, LocalOptions{JournalBytes: size})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.journal.waitReady(); err != nil {
		t.Fatal(err)
	}
	return b
}

// crash stops b as a kill -9 would.
func crash(b *LocalBucket) {
	b.journal.abandon()
	b.aids.close()
}

func journalBody(i int) []byte {
	return bytes.Repeat([]byte{byte('a' + i%26)}, 100+i*37)
}

// tear damages an object the ways a power loss can leave a named file whose
// data never reached the disk.
func tear(t *testing.T, dir, name string, how int) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	var err error
	switch how % 4 {
	case 0:
		err = os.Truncate(path, 0)
	case 1:
		var info os.FileInfo
		if info, err = os.Stat(path); err == nil {
			err = os.WriteFile(path, make([]byte, info.Size()), 0o644)
		}
	case 2:
		err = os.Remove(path)
	case 3:
		var info os.FileInfo
		if info, err = os.Stat(path); err == nil {
			err = os.Truncate(path, info.Size()/2)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestJournalRestoresTornObjectsAfterCrash(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 1<<20)
	ctx := context.Background()
	const n = 40
	for i := range n {
		if err := b.Upload(ctx, WALName(uint64(i+1)), bytes.NewReader(journalBody(i)), objstore.WithIfNotExists()); err != nil {
			t.Fatal(err)
		}
	}
	// A deleted object must stay deleted: its forget record says so.
	if err := b.Delete(ctx, WALName(7)); err != nil {
		t.Fatal(err)
	}
	st := b.JournalStats()
	if st.Journaled != n || st.Direct != 0 || st.Forgotten != 1 {
		t.Fatalf("stats %+v: want %d journaled, 0 direct, 1 forgotten", st, n)
	}
	crash(b)
	for i := range n {
		if i+1 != 7 {
			tear(t, dir, WALName(uint64(i+1)), i)
		}
	}

	b2, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	for i := range n {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(WALName(uint64(i+1)))))
		if i+1 == 7 {
			if !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("deleted object %d came back: %v", i+1, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, journalBody(i)) {
			t.Fatalf("object %d not restored: %d bytes, %v", i+1, len(got), err)
		}
	}
	st = b2.JournalStats()
	if st.Restored != n-1 || st.Replayed != n+1 {
		t.Fatalf("replay stats %+v: want %d restored of %d records", st, n-1, n+1)
	}
	// The dead journal is gone; only the lock file stays.
	if entries, _ := os.ReadDir(filepath.Join(dir, journalDirName)); len(entries) != 1 || entries[0].Name() != journalLockName {
		t.Fatalf("journal directory after replay: %v", entries)
	}
	// Listing never shows the journal.
	if err := b2.Iter(ctx, "", func(name string) error {
		if name == journalDirName+"/" {
			t.Errorf("Iter listed %s", name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestJournalKillLeavesNothingToRepair(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 1<<20)
	ctx := context.Background()
	for i := range 10 {
		mustUpload(t, b, fmt.Sprintf("manifest/%d", i), string(journalBody(i)), objstore.WithIfNotExists())
	}
	crash(b) // the page cache survives a process: every object is whole
	b2, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if st := b2.JournalStats(); st.Replayed != 10 || st.Restored != 0 {
		t.Fatalf("replay stats %+v: want 10 replayed, 0 restored", st)
	}
	for i := range 10 {
		if got := mustGet(t, b2, fmt.Sprintf("manifest/%d", i)); got != string(journalBody(i)) {
			t.Fatalf("object %d: %d bytes", i, len(got))
		}
	}
	_ = ctx
}

func TestJournalOfLiveBucketIsNotReplayed(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 1<<20)
	mustUpload(t, b, "wal/live", "body", objstore.WithIfNotExists())
	// Tear the object behind the live bucket's back: a second opener must
	// not take the live journal for a dead one (its files are flocked).
	tear(t, dir, "wal/live", 0)
	b2, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if st := b2.JournalStats(); st.Replayed != 0 {
		t.Fatalf("second opener replayed a live journal: %+v", st)
	}
	if got := mustGet(t, b2, "wal/live"); got != "" {
		t.Fatalf("live journal's object was rewritten: %q", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Close synced and removed the journal.
	if entries, _ := os.ReadDir(filepath.Join(dir, journalDirName)); len(entries) != 1 {
		t.Fatalf("journal files left after Close: %v", entries)
	}
}

func TestJournalTornRecordEndsReplay(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 1<<20)
	for i := range 3 {
		mustUpload(t, b, WALName(uint64(i+1)), string(journalBody(i)), objstore.WithIfNotExists())
	}
	path, used := b.journal.active.path, b.journal.active.used
	crash(b)
	// Flip a byte of the last record's body: an fdatasync that did not
	// finish, so an upload that never returned.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, used-1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for i := range 3 {
		tear(t, dir, WALName(uint64(i+1)), 0)
	}
	b2, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if st := b2.JournalStats(); st.Replayed != 2 || st.Restored != 2 {
		t.Fatalf("replay stats %+v: want the 2 whole records replayed", st)
	}
	for i := range 2 {
		if got := mustGet(t, b2, WALName(uint64(i+1))); got != string(journalBody(i)) {
			t.Fatalf("object %d: %d bytes", i+1, len(got))
		}
	}
}

func TestJournalCheckpointVoidsRecords(t *testing.T) {
	dir := t.TempDir()
	const size = 16 << 10
	b := openJournaled(t, dir, size)
	var syncs int
	inner := b.journal.checkpointSync
	b.journal.checkpointSync = func() error { syncs++; return inner() }
	// Fill the files several times over: rotations, checkpoints, recycled
	// files with the records of older generations behind the new ones.
	const n = 200
	for i := range n {
		mustUpload(t, b, WALName(uint64(i+1)), string(journalBody(i%60)), objstore.WithIfNotExists())
	}
	b.journal.bg.Wait() // let the last checkpoint finish
	st := b.JournalStats()
	if st.Checkpoints < 3 || syncs < 3 {
		t.Fatalf("%d checkpoints, %d syncs: want several", st.Checkpoints, syncs)
	}
	if st.Journaled+st.Direct != n || st.Journaled < n/2 {
		t.Fatalf("stats %+v: want most of %d uploads journaled", st, n)
	}
	b.journal.mu.Lock()
	var live []string
	for name := range b.journal.names {
		live = append(live, name)
	}
	b.journal.mu.Unlock()
	if len(live) == 0 || len(live) >= n/2 {
		t.Fatalf("%d names not checkpointed, want a few", len(live))
	}
	crash(b)
	for i := range n {
		tear(t, dir, WALName(uint64(i+1)), 0)
	}
	b2, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	// Exactly the names whose records no checkpoint voided come back: the
	// others were durable in their own files (syncfs) when their records
	// were voided, and old generations' records must not be replayed.
	var restored []string
	for i := range n {
		name := WALName(uint64(i + 1))
		if got := mustGet(t, b2, name); got == string(journalBody(i%60)) {
			restored = append(restored, name)
		} else if got != "" {
			t.Fatalf("%s holds %d wrong bytes", name, len(got))
		}
	}
	slices.Sort(live)
	if !slices.Equal(restored, live) {
		t.Fatalf("restored %v, want the uncheckpointed %v", restored, live)
	}
}

func TestJournalOverwriteIsNotUndone(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 1<<20)
	mustUpload(t, b, "manifest/x", "first", objstore.WithIfNotExists())
	mustUpload(t, b, "manifest/x", "second") // a plain put, fsynced by itself
	crash(b)
	b2, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if got := mustGet(t, b2, "manifest/x"); got != "second" {
		t.Fatalf("replay undid an overwrite: %q", got)
	}
}

func TestJournalFailedCheckpointKeepsJournal(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 4<<10)
	b.journal.checkpointSync = func() error { return errors.New("injected syncfs failure") }
	for i := range 30 {
		mustUpload(t, b, WALName(uint64(i+1)), string(journalBody(i%20)), objstore.WithIfNotExists())
	}
	b.journal.bg.Wait()
	st := b.JournalStats()
	if st.Err == nil || st.Direct == 0 || st.Checkpoints != 0 {
		t.Fatalf("stats %+v: want the journal off after the failed checkpoint and later uploads direct", st)
	}
	if err := b.Close(); err == nil {
		t.Fatal("Close hid the failed final sync")
	}
	// Everything is in place, and the kept journal replays cleanly.
	b2, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if st := b2.JournalStats(); st.Replayed == 0 {
		t.Fatalf("the kept journal was not replayed: %+v", st)
	}
	for i := range 30 {
		if got := mustGet(t, b2, WALName(uint64(i+1))); got != string(journalBody(i%20)) {
			t.Fatalf("object %d: %d bytes", i+1, len(got))
		}
	}
}

func TestJournalGroupCommitAndConditions(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 8<<20)
	defer b.Close()
	ctx := context.Background()
	const writers, each = 16, 50
	var wg sync.WaitGroup
	var conflicts sync.Map
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// Two writers race for every name: exactly one wins.
				name := fmt.Sprintf("wal/%d-%d", w/2, i)
				err := b.Upload(ctx, name, bytes.NewReader([]byte(fmt.Sprint(w))), objstore.WithIfNotExists())
				if b.IsConditionNotMetErr(err) {
					conflicts.Store(name, w)
				} else if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	st := b.JournalStats()
	won := writers * each / 2
	if st.Journaled != uint64(won) {
		t.Fatalf("%d journaled, want %d (one per name)", st.Journaled, won)
	}
	n := 0
	conflicts.Range(func(any, any) bool { n++; return true })
	if n != won {
		t.Fatalf("%d conflicts, want %d", n, won)
	}
	if st.Syncs >= st.Journaled {
		t.Fatalf("%d fdatasyncs for %d records: no group commit", st.Syncs, st.Journaled)
	}
	t.Logf("%d records, %d fdatasyncs", st.Journaled, st.Syncs)
}

func TestJournalLargeBodyGoesDirect(t *testing.T) {
	dir := t.TempDir()
	b := openJournaled(t, dir, 64<<10)
	defer b.Close()
	big := bytes.Repeat([]byte("x"), 40<<10)
	if err := b.Upload(context.Background(), "wal/big", bytes.NewReader(big), objstore.WithIfNotExists()); err != nil {
		t.Fatal(err)
	}
	// A reader without Len is read up to the limit, then streamed.
	if err := b.Upload(context.Background(), "wal/big2", struct{ *bytes.Reader }{bytes.NewReader(big)}, objstore.WithIfNotExists()); err != nil {
		t.Fatal(err)
	}
	if st := b.JournalStats(); st.Journaled != 0 {
		t.Fatalf("a body over half the journal was journaled: %+v", st)
	}
	for _, name := range []string{"wal/big", "wal/big2"} {
		if got := mustGetBytes(t, b, name); !bytes.Equal(got, big) {
			t.Fatalf("%s: %d bytes", name, len(got))
		}
	}
}

// TestJournalTakesBodiesUpTo1MiB, for a reader whose size is known (the
// size decides without reading) and for one whose size is not (reading
// decides, and a larger body is uploaded from what was read and the rest).
func TestJournalTakesBodiesUpTo1MiB(t *testing.T) {
	for _, sized := range []bool{true, false} {
		t.Run(fmt.Sprint("sized=", sized), func(t *testing.T) {
			b := openJournaled(t, t.TempDir(), 0) // the default: 32 MiB files
			defer b.Close()
			ctx := context.Background()
			for i, n := range []int{journalMaxBody, journalMaxBody + 1} {
				body := make([]byte, n)
				body[n-1] = byte(i + 1)
				var r io.Reader = bytes.NewReader(body)
				if !sized {
					r = io.MultiReader(r)
				}
				if err := b.Upload(ctx, fmt.Sprintf("wal/%d", i), r, objstore.WithIfNotExists()); err != nil {
					t.Fatal(err)
				}
				if got := mustGetBytes(t, b, fmt.Sprintf("wal/%d", i)); !bytes.Equal(got, body) {
					t.Fatalf("body %d: %d bytes back, want %d", i, len(got), n)
				}
			}
			if st := b.JournalStats(); st.Journaled != 1 || st.Direct != 0 {
				t.Fatalf("stats %+v: want the 1 MiB body journaled and the larger one past the journal", st)
			}
		})
	}
}
