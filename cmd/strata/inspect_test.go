package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/inspect"
	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/lsm"
)

// fillBucket writes every Redis type through the engine and the keyspace,
// flushes them to an L0 SST, then writes one more key and stops the engine
// as a crash would, so that key stays in a WAL object not yet replayed.
// It returns the SST's object name and the id of the WAL object holding
// the last write.
func fillBucket(t *testing.T, bkt objstore.Bucket) (sstName string, walID uint64) {
	t.Helper()
	ctx := context.Background()
	db, err := lsm.Open(ctx, bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := keyspace.Open(ctx, db, keyspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).UnixMilli()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.HSet(ctx, 0, []byte("user:1"), [2][]byte{[]byte("name"), []byte("ada")}, [2][]byte{[]byte("age"), []byte("36")}))
	must(s.RPush(ctx, 0, []byte("queue"), []byte("first"), []byte("second")))
	must(s.ZAdd(ctx, 0, []byte("board"), keyspace.ZAddOptions{}, keyspace.ZMember{Score: 1.5, Member: []byte("bob")}))
	must(s.SAdd(ctx, 1, []byte("tags"), []byte("red")))
	_, _, _, err = s.Set(ctx, 0, []byte("session"), []byte("tok"), keyspace.SetOptions{ExpireAt: exp})
	must(nil, err)
	must(nil, db.Flush(ctx))
	_, _, _, err = s.Set(ctx, 0, []byte("unflushed"), []byte("late"), keyspace.SetOptions{})
	must(nil, err)
	db.Abandon()

	m, err := inspect.LoadManifest(ctx, bkt, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.L0) != 1 {
		t.Fatalf("manifest has %d L0 SSTs, want 1", len(m.L0))
	}
	objs, err := inspect.ListWAL(ctx, bkt, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if !o.Replayed && !o.Header.Fence {
			walID = o.ID
		}
	}
	if walID == 0 {
		t.Fatalf("no unreplayed WAL batch object among %+v", objs)
	}
	return blob.SSTName(m.L0[0].ID), walID
}

// runInspectCmd runs `strata inspect args...` and returns its exit code,
// stdout and stderr.
func runInspectCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := inspectMain(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// wantLines fails unless out has a line matching each pattern.
func wantLines(t *testing.T, what, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile("(?m)" + p).MatchString(out) {
			t.Errorf("%s: no line matches %s in:\n%s", what, p, out)
		}
	}
}

func TestInspectLocal(t *testing.T) {
	dir := t.TempDir()
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	sstName, walID := fillBucket(t, bkt)
	flag := "--dir=" + dir

	code, out, errOut := runInspectCmd(t, "manifest", flag)
	if code != 0 {
		t.Fatalf("manifest: exit %d: %s", code, errOut)
	}
	wantLines(t, "manifest", out,
		`^manifest \d+ \(manifest/\d{20}\.manifest\)$`,
		`^writer_epoch 1 `,
		`^shape: L0 1 SSTs .* \| 0 runs \| total 1 SSTs, .*, \d+ entries$`,
		`^  `+regexp.QuoteMeta(sstName)+` .* entries \d+ `,
		`^    from (hash|list|meta|set|zset|expiry|system) `)

	code, out, errOut = runInspectCmd(t, "history", flag)
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, errOut)
	}
	wantLines(t, "history", out, `^\s+1  \d{4}-.*epochs w0/c0  L0 0 `, `epochs w1/c0  L0 1 `)

	// Flags after the positional argument, and the name given as a ULID.
	ulid := strings.TrimSuffix(strings.TrimPrefix(sstName, "sst/"), ".sst")
	code, out, errOut = runInspectCmd(t, "sst", ulid, flag)
	if code != 0 {
		t.Fatalf("sst: exit %d: %s", code, errOut)
	}
	wantLines(t, "sst", out,
		`^seq=\d+ put  hash gen=0 key "user:1" version=\d+ field "name" = "ada"$`,
		`^seq=\d+ put  meta gen=0 key "user:1" type=hash version=\d+ count=2$`,
		`^seq=\d+ put  list gen=0 key "queue" version=\d+ pos=1 = "second"$`,
		`^seq=\d+ put  zset gen=0 key "board" version=\d+ member "bob" score=1.5$`,
		`^seq=\d+ put  zset gen=0 key "board" version=\d+ by-score 1.5 member "bob"$`,
		`^seq=\d+ put  set gen=1 key "tags" version=\d+ member "red"$`,
		`^seq=\d+ put expire_at=\S+  meta gen=0 key "session" type=string expire_at=\S+ value "tok"$`,
		`^seq=\d+ put  expiry gen=0 at=\S+ key "session" version=0$`)
	code, out, _ = runInspectCmd(t, "sst", sstName, "--limit", "2", flag)
	if code != 0 || strings.Count(out, "\nseq=") != 2 || !strings.Contains(out, "more rows") {
		t.Errorf("sst --limit 2: exit %d:\n%s", code, out)
	}

	code, out, errOut = runInspectCmd(t, "wal", flag)
	if code != 0 {
		t.Fatalf("wal: exit %d: %s", code, errOut)
	}
	wantLines(t, "wal", out, `^\s+1 .* fence epoch=1$`, `^\s+`+itoa(walID)+` .* pending  batch epoch=1$`)
	code, out, errOut = runInspectCmd(t, "wal", itoa(walID), flag)
	if code != 0 {
		t.Fatalf("wal %d: exit %d: %s", walID, code, errOut)
	}
	wantLines(t, "wal object", out, `kind=batch epoch=1$`, `meta gen=0 key "unflushed" type=string value "late"$`)

	code, out, errOut = runInspectCmd(t, "verify", flag)
	if code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("verify of an intact bucket: exit %d:\n%s%s", code, out, errOut)
	}
	wantLines(t, "verify", out, `^verified manifest \d+, 1 SSTs and 1 unreplayed WAL objects: `)
	wantLines(t, "verify progress", errOut, `^verify: 3/3 objects, `)

	// One flipped byte inside the SST: verify names it and exits 1.
	flipByte(t, filepath.Join(dir, filepath.FromSlash(sstName)), 10)
	code, out, _ = runInspectCmd(t, "verify", flag)
	if code != 1 {
		t.Fatalf("verify after a flipped byte: exit %d, want 1:\n%s", code, out)
	}
	wantLines(t, "verify corrupt", out, `^CORRUPT `+regexp.QuoteMeta(sstName)+`: .*corruption`, `^1 of 3 objects failed$`)
	if code, _, _ := runInspectCmd(t, "sst", sstName, flag); code != 1 {
		t.Errorf("sst of a corrupt object: exit %d, want 1", code)
	}

	// A missing SST is named too.
	os.Remove(filepath.Join(dir, filepath.FromSlash(sstName)))
	code, out, _ = runInspectCmd(t, "verify", flag)
	if code != 1 || !strings.Contains(out, "CORRUPT "+sstName+": inspect: object not found") {
		t.Errorf("verify with a missing SST: exit %d:\n%s", code, out)
	}

	// A damaged latest manifest is named, not silently replaced by an older one.
	m, err := inspect.LoadManifest(context.Background(), bkt, 0)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(dir, filepath.FromSlash(blob.ManifestName(m.ID))), 12)
	code, out, _ = runInspectCmd(t, "verify", flag)
	if code != 1 || !strings.Contains(out, "CORRUPT "+blob.ManifestName(m.ID)+": ") {
		t.Errorf("verify with a damaged manifest: exit %d:\n%s", code, out)
	}
}

func TestInspectUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"sst", "--dir", t.TempDir()}, {"sst", "not-a-ulid", "--dir", t.TempDir()},
		{"wal", "x", "--dir", t.TempDir()}, {"manifest", "--bogus"}} {
		if code, _, _ := runInspectCmd(t, args...); code != 2 {
			t.Errorf("inspect %q: exit %d, want 2", args, code)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if code, _, errOut := runInspectCmd(t, "manifest", "--dir", missing); code != 1 || !strings.Contains(errOut, "no such bucket directory") {
		t.Errorf("manifest on a missing dir: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("inspect created the directory it was pointed at")
	}
	if code, _, errOut := runInspectCmd(t, "manifest", "--dir", t.TempDir()); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("manifest on an empty bucket: exit %d: %s", code, errOut)
	}
}

// TestInspectMinIO: the same bucket flags as the server reach S3, and
// verify finds an object damaged there.
func TestInspectMinIO(t *testing.T) {
	srv := blobtest.NewMinIO(t)
	conf := filepath.Join(t.TempDir(), "objstore.yaml")
	if err := os.WriteFile(conf, srv.Config("inspect"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bkt, err := blob.OpenConfig(ctx, srv.Config("inspect"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bkt.Close()
	sstName, walID := fillBucket(t, bkt)
	flag := "--objstore.config-file=" + conf

	code, out, errOut := runInspectCmd(t, "sst", sstName, flag)
	if code != 0 {
		t.Fatalf("sst: exit %d: %s", code, errOut)
	}
	wantLines(t, "sst", out, `hash gen=0 key "user:1" version=\d+ field "name" = "ada"$`)
	if code, out, errOut = runInspectCmd(t, "verify", flag); code != 0 {
		t.Fatalf("verify: exit %d:\n%s%s", code, out, errOut)
	}

	// Damage the unreplayed WAL object in place. It is the log's last, so
	// verify takes it for a torn tail (never acknowledged), which it
	// reports but does not fail on.
	name := blob.WALName(walID)
	rc, err := bkt.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := bkt.Upload(ctx, name, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runInspectCmd(t, "verify", flag)
	if code != 0 || !strings.Contains(out, "TORN "+name+": ") {
		t.Fatalf("verify after damaging %s: exit %d:\n%s", name, code, out)
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x01
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
