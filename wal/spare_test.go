package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
	"unsafe"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

// failFirstBucket fails the first Upload of every name before reading its
// body.
type failFirstBucket struct {
	objstore.Bucket
	firstUploads
}

func (b *failFirstBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	if b.first(name) {
		return errors.New("injected: connection reset")
	}
	return b.Bucket.Upload(ctx, name, r, opts...)
}

// spares returns the writer's kept object memory: the first byte of each.
func spares(w *Writer) []*byte {
	w.spareMu.Lock()
	defer w.spareMu.Unlock()
	var ps []*byte
	for _, b := range w.spare {
		ps = append(ps, unsafe.SliceData(b[:1]))
	}
	return ps
}

// TestObjectMemoryReuse: the writer encodes each object in the memory of
// one it stored before, and every object still replays whole from a local
// bucket's files: reusing the memory never changed bytes an upload was
// still reading. Memory an upload may still read is not kept: after a PUT
// that was retried, or hedged (the hedge's loser may outlive it).
func TestObjectMemoryReuse(t *testing.T) {
	ctx := context.Background()
	bkt, err := blob.NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(bkt, 1, 0, nil, Options{Hedge: -1})
	arrays := map[*byte]bool{}
	value := func(seq uint64) []byte { return bytes.Repeat([]byte{byte(seq)}, 3000+int(seq%5)*100) }
	const objects = 30
	for seq := uint64(1); seq <= objects; seq++ {
		rows := []sst.Row{{Key: fmt.Appendf(nil, "k%03d", seq), Seq: seq, Kind: sst.KindPut, Value: value(seq)}}
		if err := w.Append(rows, 1); err != nil {
			t.Fatal(err)
		}
		if err := w.WaitDurable(ctx, seq); err != nil {
			t.Fatal(err)
		}
		ps := spares(w)
		if len(ps) != 1 {
			t.Fatalf("after object %d the writer keeps %d objects' memory, want 1", seq, len(ps))
		}
		if seq > 5 { // the sizes cycle through five, growing first
			arrays[ps[0]] = true
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Once the largest size was seen, every object fits in the memory of
	// the one before.
	if len(arrays) != 1 {
		t.Errorf("%d objects were encoded in %d arrays, want 1: the memory is not reused", objects-5, len(arrays))
	}
	seen := 0
	if err := Replay(ctx, bkt, listIDs(t, bkt), func(o Object) error {
		for _, r := range o.Rows {
			if want := fmt.Sprintf("k%03d", r.Seq); string(r.Key) != want || !bytes.Equal(r.Value, value(r.Seq)) {
				return fmt.Errorf("object %d: row %q (seq %d) does not hold what was written", o.ID, r.Key, r.Seq)
			}
			seen++
		}
		return nil
	}); err != nil || seen != objects {
		t.Fatalf("replayed %d of %d rows: %v", seen, objects, err)
	}

	for _, tc := range []struct {
		name string
		bkt  objstore.Bucket
		opts Options
	}{
		{"retried", &failFirstBucket{Bucket: blob.NewMemBucket()}, Options{Hedge: -1, RetryDelay: time.Millisecond}},
		{"hedged", &stuckBucket{Bucket: blob.NewMemBucket()}, Options{Hedge: 10 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWriter(tc.bkt, 1, 0, nil, tc.opts)
			defer w.Close()
			for seq := uint64(1); seq <= 3; seq++ {
				if err := w.Append(batch(seq, fmt.Sprint(seq)), 1); err != nil {
					t.Fatal(err)
				}
				if err := w.WaitDurable(ctx, seq); err != nil {
					t.Fatal(err)
				}
				if n := len(spares(w)); n != 0 {
					t.Fatalf("after %s object %d the writer keeps its memory", tc.name, seq)
				}
			}
		})
	}
}
