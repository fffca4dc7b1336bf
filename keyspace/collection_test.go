package keyspace

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/wal"
)

// walKinds returns the keyspace kind of every row the WAL objects stored
// since after (an object id) hold, and the newest id.
func walKinds(t *testing.T, bkt objstore.Bucket, after uint64) ([]string, uint64) {
	t.Helper()
	ctx := context.Background()
	ids, err := wal.ListIDs(ctx, bkt)
	if err != nil {
		t.Fatal(err)
	}
	ids = slices.DeleteFunc(ids, func(id uint64) bool { return id <= after })
	var kinds []string
	err = wal.Replay(ctx, bkt, ids, func(o wal.Object) error {
		for _, r := range o.Rows {
			switch r.Key[0] {
			case kindMeta:
				kinds = append(kinds, "meta")
			case kindExpiry:
				kinds = append(kinds, "expiry")
			default:
				kinds = append(kinds, "element")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) > 0 {
		after = ids[len(ids)-1]
	}
	return kinds, after
}

// A command that changes a collection's elements but not its metadata
// (HSET of an existing field, ZADD of a new score, on a key with or
// without a TTL) writes only the element rows while the metadata row is in
// the mutable memtable, and the metadata as well once it is not (so the
// collection's next commands find it there). Nothing is lost either way:
// the WAL replayed into a new engine has every field and the TTL.
func TestUnchangedMetadataIsNotRewritten(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	db, err := lsm.Open(ctx, bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, db, Options{}) // durable: each command's batch is in the WAL when it returns
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	_, last = walKinds(t, bkt, 0)
	step := func(name string, want []string, cmd func() error) {
		t.Helper()
		if err := cmd(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		got, last = walKinds(t, bkt, last)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s wrote rows %q, want %q", name, got, want)
		}
	}
	h, z := []byte("h"), []byte("z")
	hset := func(f, v string) func() error {
		return func() error { _, err := s.HSet(ctx, 0, h, [2][]byte{[]byte(f), []byte(v)}); return err }
	}
	step("HSET of a new hash", []string{"element", "meta"}, hset("f", "1"))
	step("HSET of an existing field", []string{"element"}, hset("f", "2"))
	step("HSET of a new field", []string{"element", "meta"}, hset("g", "1"))
	step("ZADD of a new set", []string{"element", "element", "meta"}, func() error {
		_, err := s.ZAdd(ctx, 0, z, ZAddOptions{}, ZMember{Score: 1, Member: []byte("m")})
		return err
	})
	// A new score replaces the score-index row: a delete and a put.
	step("ZADD of a new score", []string{"element", "element", "element"}, func() error {
		_, err := s.ZAdd(ctx, 0, z, ZAddOptions{}, ZMember{Score: 2, Member: []byte("m")})
		return err
	})
	at := time.Now().Add(time.Hour).UnixMilli()
	step("PEXPIREAT", []string{"expiry", "meta"}, func() error {
		_, err := s.Expire(ctx, 0, h, at, ExpireCond{})
		return err
	})
	step("HSET of an existing field with a TTL", []string{"element"}, hset("f", "3"))

	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	step("HSET of an existing field, metadata flushed", []string{"element", "expiry", "meta"}, hset("g", "2"))
	step("HSET of an existing field after that", []string{"element"}, hset("f", "4"))

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = lsm.Open(ctx, bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if s, err = Open(ctx, db, Options{}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"f": "4", "g": "2"} {
		if v, ok, err := s.HGet(ctx, 0, h, []byte(f)); err != nil || !ok || string(v) != want {
			t.Errorf("after reopening, HGET h %s = %q, %v, %v; want %q", f, v, ok, err, want)
		}
	}
	if n, err := s.HLen(ctx, 0, h); err != nil || n != 2 {
		t.Errorf("after reopening, HLEN h = %d, %v; want 2", n, err)
	}
	if ms, err := s.PTTL(ctx, 0, h); err != nil || ms <= 0 || ms > time.Hour.Milliseconds() {
		t.Errorf("after reopening, PTTL h = %d, %v; want the hour set before", ms, err)
	}
	if sc, ok, err := s.ZScore(ctx, 0, z, []byte("m")); err != nil || !ok || sc != 2 {
		t.Errorf("after reopening, ZSCORE z m = %v, %v, %v; want 2", sc, ok, err)
	}
}
