package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"
)

func TestLocalBucketRejectsEscapingNames(t *testing.T) {
	outer := t.TempDir()
	b, err := NewLocalBucket(filepath.Join(outer, "root"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	for _, name := range []string{"", "/abs", "../x", "a/../../x", "a/./b", "a//b", "a/", ".tmp/x", ".tmp", ".journal/LOCK", ".journal", "..", "a\x00b"} {
		err := b.Upload(ctx, name, strings.NewReader("x"))
		if !errors.Is(err, ErrInvalidName) {
			t.Errorf("upload %q: %v; want ErrInvalidName", name, err)
		}
		if _, err := b.Get(ctx, name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("get %q: %v; want ErrInvalidName", name, err)
		}
	}
	for _, dir := range []string{"../", "..", "/x/", ".tmp/", "a//"} {
		if err := b.Iter(ctx, dir, func(string) error { return nil }); !errors.Is(err, ErrInvalidName) {
			t.Errorf("iter %q: %v; want ErrInvalidName", dir, err)
		}
	}
	entries, _ := os.ReadDir(outer)
	if len(entries) != 1 {
		t.Fatalf("something was written outside the root: %v", entries)
	}
	// Names that merely look odd are fine.
	mustUpload(t, b, "a..b/..c", "ok")
	if got := mustGet(t, b, "a..b/..c"); got != "ok" {
		t.Fatalf("got %q", got)
	}
}

func TestLocalBucketLayoutAndTempFiles(t *testing.T) {
	dir := t.TempDir()
	b, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	mustUpload(t, b, ManifestName(1), "m1", objstore.WithIfNotExists())
	mustUpload(t, b, "plain", "p")
	if err := b.Upload(context.Background(), ManifestName(1), strings.NewReader("m1'"), objstore.WithIfNotExists()); !b.IsConditionNotMetErr(err) {
		t.Fatalf("second create: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "manifest", fmt.Sprintf("%020d.manifest", 1)))
	if err != nil || string(got) != "m1" {
		t.Fatalf("object on disk = %q, %v", got, err)
	}
	// Neither successful nor refused uploads leave temp files once the
	// bucket is closed (it keeps spares until then, and works after).
	b.Close()
	if tmps, _ := os.ReadDir(filepath.Join(dir, tmpDirName)); len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
	// An in-flight upload's temp file is never listed.
	if err := os.WriteFile(filepath.Join(dir, tmpDirName, "upload-1-inflight"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if names := iterNames(t, b, ""); strings.Join(names, ",") != "manifest/,plain" {
		t.Fatalf("root listing %q shows the temp directory or misses objects", names)
	}
	if names := iterNames(t, b, "", objstore.WithRecursiveIter()); strings.Join(names, ",") != ManifestName(1)+",plain" {
		t.Fatalf("recursive listing %q shows temp files or misses objects", names)
	}
	os.Remove(filepath.Join(dir, tmpDirName, "upload-1-inflight"))
	// A failing body leaves nothing behind either.
	bad := io.MultiReader(strings.NewReader("partial"), errReader{errors.New("body broke")})
	if err := b.Upload(context.Background(), "broken", bad); err == nil || !strings.Contains(err.Error(), "body broke") {
		t.Fatalf("upload with failing body: %v", err)
	}
	if ok, _ := b.Exists(context.Background(), "broken"); ok {
		t.Fatal("a failed upload published its object")
	}
	b.Close()
	if tmps, _ := os.ReadDir(filepath.Join(dir, tmpDirName)); len(tmps) != 0 {
		t.Fatalf("temp files left after a failed upload: %v", tmps)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestLocalBucketRemovesOnlyStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	if b, err := NewLocalBucket(dir); err != nil {
		t.Fatal(err)
	} else {
		b.Close()
	}
	stale := filepath.Join(dir, tmpDirName, "upload-1-stale")
	fresh := filepath.Join(dir, tmpDirName, "upload-2-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTempAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if b, err := NewLocalBucket(dir); err != nil {
		t.Fatal(err)
	} else {
		b.Close()
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file survived open: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file (maybe another process's upload) was removed: %v", err)
	}
}

func TestLocalBucketNotFoundCases(t *testing.T) {
	b := newLocal(t)
	ctx := context.Background()
	mustUpload(t, b, "obj", "x")
	mustUpload(t, b, "dir/child", "y")
	// A directory is not an object; nor is a name below an object.
	for _, name := range []string{"dir", "obj/below"} {
		if _, err := b.Get(ctx, name); !b.IsObjNotFoundErr(err) {
			t.Errorf("get %s: %v; want not found", name, err)
		}
		if err := b.Delete(ctx, name); !b.IsObjNotFoundErr(err) {
			t.Errorf("delete %s: %v; want not found", name, err)
		}
		if ok, err := b.Exists(ctx, name); ok || err != nil {
			t.Errorf("exists %s = %v, %v", name, ok, err)
		}
	}
	if err := b.Upload(ctx, "obj/below", strings.NewReader("z")); err == nil {
		t.Error("upload below an object succeeded")
	}
	if _, err := b.GetRange(ctx, "obj", -1, 2); err == nil {
		t.Error("negative offset accepted")
	}
}

func TestLocalBucketContextCancelled(t *testing.T) {
	b := newLocal(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Upload(ctx, "x", strings.NewReader("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("upload with cancelled context: %v", err)
	}
	if ok, _ := b.Exists(context.Background(), "x"); ok {
		t.Fatal("cancelled upload was published")
	}
}

// Multi-process create-if-absent: child processes (this test binary re-run
// with childRootEnv set) race to create the same objects, one name per
// round; in every round exactly one wins, and no reader ever sees part of
// an object. Round 0 has large bodies, for the reader; the other rounds are
// small, so that the children stay in step and really collide.
const (
	childRootEnv = "STRATA_BLOB_TEST_CHILD_ROOT"
	childCtlEnv  = "STRATA_BLOB_TEST_CHILD_CTL"
	childIDEnv   = "STRATA_BLOB_TEST_CHILD_ID"
	raceChildren = 6
	raceRounds   = 100
)

func raceObject(round int) string { return WALName(uint64(round)) }

// childBody is child i's object in a round, different in every byte
// position from the other children's.
func childBody(i, round int) []byte {
	reps := 8
	if round == 0 {
		reps = 300_000
	}
	return bytes.Repeat([]byte(fmt.Sprintf("<child %03d round %04d>", i, round)), reps)
}

func TestLocalBucketMultiProcessCreateIfAbsent(t *testing.T) {
	if root := os.Getenv(childRootEnv); root != "" {
		runRaceChild(t, root, os.Getenv(childCtlEnv), os.Getenv(childIDEnv))
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root, ctl := t.TempDir(), t.TempDir()
	cmds := make([]*exec.Cmd, raceChildren)
	outs := make([]*bytes.Buffer, raceChildren)
	for i := range raceChildren {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestLocalBucketMultiProcessCreateIfAbsent$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), childRootEnv+"="+root, childCtlEnv+"="+ctl, childIDEnv+"="+strconv.Itoa(i))
		outs[i] = new(bytes.Buffer)
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	waitFiles(t, ctl, "ready-", raceChildren)
	b, err := NewLocalBucket(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	stopReader := watchRaceObject(t, b)
	if err := os.WriteFile(filepath.Join(ctl, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, outs[i])
		}
	}
	reads := stopReader()
	b.Close()
	checkRaceResults(t, b, ctl)
	t.Logf("%d whole-object reads during the race", reads)
}

// watchRaceObject reads round 0's object over and over until the returned
// function is called, failing the test if a read sees anything but nothing
// or a child's whole body. The function returns the number of whole reads.
func watchRaceObject(t *testing.T, b *LocalBucket) func() int64 {
	stop, reads := make(chan struct{}), atomic.Int64{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rc, err := b.Get(context.Background(), raceObject(0))
			if b.IsObjNotFoundErr(err) {
				continue
			} else if err != nil {
				t.Error(err)
				return
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !isChildBody(got) {
				t.Errorf("read %d bytes that are no child's whole object (err %v)", len(got), err)
				return
			}
			reads.Add(1)
		}
	}()
	return func() int64 {
		close(stop)
		wg.Wait()
		return reads.Load()
	}
}

func isChildBody(got []byte) bool {
	for i := range raceChildren {
		if bytes.Equal(got, childBody(i, 0)) {
			return true
		}
	}
	return false
}

// checkRaceResults checks that each round had one winner, whose body the
// object holds. A child's result file has one line per round.
func checkRaceResults(t *testing.T, b *LocalBucket, ctl string) {
	t.Helper()
	winners := make([]int, raceRounds)
	for r := range winners {
		winners[r] = -1
	}
	for i := range raceChildren {
		res, err := os.ReadFile(filepath.Join(ctl, "result-"+strconv.Itoa(i)))
		if err != nil {
			t.Fatalf("child %d left no result: %v", i, err)
		}
		for r, line := range strings.Split(strings.TrimSuffix(string(res), "\n"), "\n") {
			switch {
			case line == "won" && winners[r] >= 0:
				t.Fatalf("round %d: children %d and %d both won", r, winners[r], i)
			case line == "won":
				winners[r] = i
			case line != "lost":
				t.Fatalf("child %d round %d: %s", i, r, line)
			}
		}
	}
	for r, w := range winners {
		if w < 0 {
			t.Fatalf("round %d: no child won", r)
		}
		if got := mustGet(t, b, raceObject(r)); got != string(childBody(w, r)) {
			t.Fatalf("round %d: object is not the winner's (%d) whole body", r, w)
		}
	}
	if tmps, _ := os.ReadDir(filepath.Join(b.Root(), tmpDirName)); len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
}

func runRaceChild(t *testing.T, root, ctl, id string) {
	i, err := strconv.Atoi(id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLocalBucket(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	defer b.Close() // removes its spare temp files
	if err := os.WriteFile(filepath.Join(ctl, "ready-"+id), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFiles(t, ctl, "go", 1)
	var results strings.Builder
	for r := range raceRounds {
		err := b.Upload(context.Background(), raceObject(r), bytes.NewReader(childBody(i, r)), objstore.WithIfNotExists())
		switch {
		case err == nil:
			results.WriteString("won\n")
		case b.IsConditionNotMetErr(err):
			results.WriteString("lost\n")
		default:
			results.WriteString("error: " + err.Error() + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(ctl, "result-"+id), []byte(results.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFiles waits until dir holds n files whose names start with prefix.
func waitFiles(t *testing.T, dir, prefix string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) {
				k++
			}
		}
		if k >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d %q files in %s", n, prefix, dir)
		}
		time.Sleep(time.Millisecond)
	}
}

// An upload is acknowledged only after the directory entries leading to it
// are fsynced: the new object's directory, and the parent of each directory
// the upload created.
func TestLocalBucketUploadSyncsDirectories(t *testing.T) {
	b := newLocal(t)
	var synced []string
	b.syncDir = func(dir string) error {
		rel, _ := filepath.Rel(b.Root(), dir)
		synced = append(synced, filepath.ToSlash(rel))
		return syncDir(dir)
	}
	mustUpload(t, b, "a/b/c", "x", objstore.WithIfNotExists())
	if got := strings.Join(synced, " "); got != ". a a/b" {
		t.Fatalf("synced %q; want the parents of a and a/b, then a/b after the link", got)
	}
	synced = nil
	mustUpload(t, b, "a/b/d", "y")
	if got := strings.Join(synced, " "); got != "a/b" {
		t.Fatalf("second upload synced %q; want only a/b", got)
	}
	b.syncDir = func(string) error { return errors.New("disk on fire") }
	for _, opts := range [][]objstore.ObjectUploadOption{nil, {objstore.WithIfNotExists()}} {
		if err := b.Upload(context.Background(), "a/b/e", strings.NewReader("z"), opts...); err == nil {
			t.Fatal("upload acknowledged although its directory fsync failed")
		}
		b.Delete(context.Background(), "a/b/e")
	}
}

// TestLocalReadRange: positioned reads through cached handles see the
// object as stored, an overwrite replaces it, and a delete makes it absent.
func TestLocalReadRange(t *testing.T) {
	ctx := context.Background()
	b, err := NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	put := func(s string) {
		t.Helper()
		if err := b.Upload(ctx, "sst/a.sst", strings.NewReader(s)); err != nil {
			t.Fatal(err)
		}
	}
	put("0123456789")
	for _, c := range []struct {
		off, n int64
		want   string
	}{{0, 4, "0123"}, {6, 10, "6789"}, {10, 5, ""}, {3, 0, ""}} {
		got, err := b.ReadRange(ctx, "sst/a.sst", c.off, c.n)
		if err != nil || string(got) != c.want {
			t.Fatalf("ReadRange(%d, %d) = %q, %v; want %q", c.off, c.n, got, err, c.want)
		}
	}
	put("abcdefghij") // a plain upload replaces the object
	if got, err := b.ReadRange(ctx, "sst/a.sst", 0, 3); err != nil || string(got) != "abc" {
		t.Fatalf("after overwrite: %q, %v; want \"abc\" (a stale handle served the old object)", got, err)
	}
	if err := b.Delete(ctx, "sst/a.sst"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReadRange(ctx, "sst/a.sst", 0, 3); !b.IsObjNotFoundErr(err) {
		t.Fatalf("after delete: %v, want not found", err)
	}
	// More objects than handles: reads stay correct while handles are evicted.
	for i := range 600 {
		name := fmt.Sprintf("sst/%03d.sst", i)
		if err := b.Upload(ctx, name, strings.NewReader(name)); err != nil {
			t.Fatal(err)
		}
		if got, err := b.ReadRange(ctx, name, 0, 100); err != nil || string(got) != name {
			t.Fatalf("%s: %q, %v", name, got, err)
		}
	}
}

// BenchmarkLocalUploadIfNotExists times the durable create-if-absent of a
// small object, the local bucket's WAL PUT: temp file, link, then a journal
// record and its fdatasync ("journal") or fsyncs of the file and its
// directory ("direct"); "-parallel" runs 8 uploaders at once, whose journal
// records share fdatasyncs.
func BenchmarkLocalUploadIfNotExists(b *testing.B) {
	for _, mode := range []struct {
		name     string
		journal  int64
		parallel bool
	}{{"journal", 0, false}, {"direct", -1, false}, {"journal-parallel", 0, true}, {"direct-parallel", -1, true}} {
		b.Run(mode.name, func(b *testing.B) {
			bkt, err := NewLocalBucketWithOptions(b.TempDir(), LocalOptions{JournalBytes: mode.journal})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { bkt.Close() })
			if bkt.journal != nil {
				if err := bkt.journal.waitReady(); err != nil {
					b.Fatal(err)
				}
			}
			data := bytes.Repeat([]byte("x"), 4096)
			var i atomic.Int64
			put := func() {
				name := fmt.Sprintf("wal/%020d.wal", i.Add(1))
				if err := bkt.Upload(context.Background(), name, bytes.NewReader(data), objstore.WithIfNotExists()); err != nil {
					b.Fatal(err)
				}
			}
			if mode.parallel {
				b.SetParallelism(4) // 8 goroutines on 2 Ps
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						put()
					}
				})
				return
			}
			for b.Loop() {
				put()
			}
		})
	}
}

// TestLocalBucketSpareTemps: uploads write into temp files made ahead of
// them and leave their names to the background, yet every object is whole,
// a spare too old to trust is not used, and Close leaves nothing in .tmp.
func TestLocalBucketSpareTemps(t *testing.T) {
	dir := t.TempDir()
	b, err := NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	tmps := func() []string {
		b.aids.mu.Lock()
		for b.aids.running {
			b.aids.idle.Wait()
		}
		b.aids.mu.Unlock()
		entries, _ := os.ReadDir(filepath.Join(dir, tmpDirName))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				name := fmt.Sprintf("wal/%d-%d", g, i)
				if err := b.Upload(context.Background(), name, strings.NewReader(name), objstore.WithIfNotExists()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for g := range 4 {
		for i := range 10 {
			if name := fmt.Sprintf("wal/%d-%d", g, i); mustGet(t, b, name) != name {
				t.Fatalf("%s is not whole", name)
			}
		}
	}
	spares := tmps()
	if len(spares) != spareTemps {
		t.Fatalf(".tmp holds %v, want %d spares and no finished upload's name", spares, spareTemps)
	}

	b.aids.mu.Lock()
	for i := range b.aids.spares {
		b.aids.spares[i].made = time.Now().Add(-spareMaxAge)
	}
	b.aids.mu.Unlock()
	fresh, err := b.aids.take()
	if err != nil {
		t.Fatal(err)
	}
	closeFd(fresh.fd)
	b.aids.retire(fresh.path)
	left := tmps()
	for _, old := range spares {
		if filepath.Base(fresh.path) == old || slices.Contains(left, old) {
			t.Fatalf("stale spare %s was handed out (%s) or left in .tmp %v", old, fresh.path, left)
		}
	}

	b.Close()
	if left := tmps(); len(left) != 0 {
		t.Fatalf("Close left %v in .tmp", left)
	}
	mustUpload(t, b, "after-close", "y")
	if got := mustGet(t, b, "after-close"); got != "y" || len(tmps()) != 0 {
		t.Fatalf("upload after Close: %q, .tmp %v", got, tmps())
	}
}
