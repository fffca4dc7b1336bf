package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

func batch(seq uint64, keys ...string) []sst.Row {
	rows := make([]sst.Row, len(keys))
	for i, k := range keys {
		rows[i] = sst.Row{Key: []byte(k), Seq: seq, Kind: sst.KindPut, Value: []byte("v" + k)}
	}
	return rows
}

// TestWriteReplay appends batches, waits for them, and replays them in order.
func TestWriteReplay(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	w := NewWriter(bkt, 1, 0, nil, Options{})
	for seq := uint64(1); seq <= 50; seq++ {
		if err := w.Append(batch(seq, fmt.Sprintf("a%d", seq), fmt.Sprintf("b%d", seq)), int64(seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WaitDurable(ctx, 50); err != nil {
		t.Fatal(err)
	}
	checkBatchCount(t, w, 50)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []sst.Row
	var tick int64
	if err := Replay(ctx, bkt, listIDs(t, bkt), func(o Object) error {
		got = append(got, o.Rows...)
		tick = max(tick, o.Stats.ClockTick)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || tick != 50 {
		t.Fatalf("replayed %d rows with tick %d, want 100 rows and tick 50", len(got), tick)
	}
	for i, r := range got {
		if want := uint64(i/2 + 1); r.Seq != want {
			t.Fatalf("row %d has seq %d, want %d: replay out of order", i, r.Seq, want)
		}
	}
}

// TestFlushIntervalDoesNotBoundThroughput: with a long flush interval, a
// backlog of many objects' worth is stored at once, not one object per
// interval (which would take 32 s here).
func TestFlushIntervalDoesNotBoundThroughput(t *testing.T) {
	ctx := context.Background()
	w := NewWriter(blob.NewMemBucket(), 1, 0, nil, Options{FlushInterval: time.Second, MaxObjectBytes: 64 << 10})
	defer w.Close()
	value := strings.Repeat("v", 1000)
	const batches = 2048 // 2 MB: 32 objects of 64 KB
	for s := uint64(1); s <= batches; s++ {
		if err := w.Append([]sst.Row{{Key: fmt.Appendf(nil, "k%d", s), Seq: s, Kind: sst.KindPut, Value: []byte(value)}}, 1); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.WaitDurable(wctx, batches); err != nil {
		t.Fatalf("2 MB not durable %v after appending, in objects of 64 KB with a 1 s interval: %v", time.Since(start), err)
	}
	t.Logf("durable after %v, %d objects", time.Since(start), w.Stats().Objects)
	checkBatchCount(t, w, batches)
}

// checkBatchCount checks, once the writer has stored all of them, that its
// objects held n batches in all and that it counts none as pending: the
// rejoin rule waits for pendingBatches, so a count that drifts would make
// every flush wait out its whole rejoin time, or none.
func checkBatchCount(t *testing.T, w *Writer, n int) {
	t.Helper()
	w.mu.Lock()
	pending := w.pendingBatches
	w.mu.Unlock()
	if got := w.Stats().ObjectBatches.Sum; got != float64(n) || pending != 0 {
		t.Fatalf("objects held %v batches with %d still counted pending; want %d and 0", got, pending, n)
	}
}

// TestFlushIntervalBoundsPuts writes at a steady rate with a 50ms flush
// interval: the PUT count follows time, not the write count.
func TestFlushIntervalBoundsPuts(t *testing.T) {
	ctx := context.Background()
	w := NewWriter(blob.NewMemBucket(), 1, 0, nil, Options{FlushInterval: 50 * time.Millisecond})
	defer w.Close()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	seq := uint64(0)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Since(start) < time.Second; i++ {
				mu.Lock()
				seq++
				s := seq
				err := w.Append(batch(s, fmt.Sprintf("g%d-%d", g, i)), 1)
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				if err := w.WaitDurable(ctx, s); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	st := w.Stats()
	maxPuts := uint64(elapsed/(50*time.Millisecond)) + 2
	t.Logf("%d batches in %v took %d PUTs (at most %d allowed)", st.Batches, elapsed, st.Objects, maxPuts)
	if st.Objects > maxPuts {
		t.Fatalf("%d PUTs in %v exceed one per 50ms", st.Objects, elapsed)
	}
	if st.Batches < 4*st.Objects {
		t.Fatalf("only %d batches for %d PUTs: waiters were not grouped", st.Batches, st.Objects)
	}
}

// TestFlushIntervalOverlapsPuts: with a flush interval shorter than the
// PUT time, batches that have waited an interval start a PUT beside the one
// in flight (a write waits for its own PUT to start, not for the one before
// it to end), PUT starts stay an interval apart, and durability is still
// acknowledged in seq order: a replay finds every batch. A crowd of
// closed-loop writers, which all return when their PUT is stored, still
// shares one PUT rather than spreading over several.
func TestFlushIntervalOverlapsPuts(t *testing.T) {
	ctx := context.Background()
	const interval, putTime = 10 * time.Millisecond, 60 * time.Millisecond
	bkt := &slowBucket{Bucket: blob.NewMemBucket(), d: putTime}
	w := NewWriter(bkt, 1, 0, nil, Options{FlushInterval: interval, Hedge: -1})
	var seq uint64

	// Open loop: a batch every 2 ms, whatever is stored.
	start := time.Now()
	for i := 0; time.Since(start) < 400*time.Millisecond; i++ {
		seq++
		if err := w.Append(batch(seq, fmt.Sprintf("open-%d", i)), 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := w.WaitDurable(ctx, seq); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	most, uploads := bkt.most.Load(), bkt.uploads.Load()
	t.Logf("open loop: %d batches in %v, %d PUTs, at most %d in flight", seq, elapsed, uploads, most)
	if most < 2 {
		t.Fatalf("at most %d PUT in flight with a %v interval and %v PUTs: they did not overlap", most, interval, putTime)
	}
	if beside := w.Stats().PutsBeside; beside == 0 || beside >= uint64(uploads) {
		t.Fatalf("Stats counts %d of %d PUTs as started beside another", beside, uploads)
	}
	if max := int32(elapsed/interval) + 2; uploads > max {
		t.Fatalf("%d PUTs in %v exceed one per %v", uploads, elapsed, interval)
	}

	// Closed loop: 8 writers, each waiting for its batch before the next.
	before, beforeBatches := bkt.uploads.Load(), seq
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if !appendAndWait(t, w, &mu, &seq, fmt.Sprintf("closed-%d-%d", g, i)) {
					return
				}
			}
		}()
	}
	wg.Wait()
	puts, batches := bkt.uploads.Load()-before, seq-beforeBatches
	t.Logf("closed loop: %d batches in %d PUTs", batches, puts)
	if uint64(puts)*4 > batches {
		t.Fatalf("8 closed-loop writers: %d batches in %d PUTs, want at least 4 per PUT", batches, puts)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	checkReplayedInOrder(t, bkt, seq)
}

// TestFencedWriter: a fence on the writer's next id stops it; what it had
// not stored is never acknowledged.
func TestFencedWriter(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	w := NewWriter(bkt, 1, 0, nil, Options{Epoch: 1})
	if err := w.Append(batch(1, "a"), 1); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f, err := Fence(ctx, bkt, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Fence != 2 || f.FirstID != 2+MaxInflight || fmt.Sprint(f.Replay) != "[1]" {
		t.Fatalf("fenced %+v, want fence 2, first id %d, replay [1]", f, 2+MaxInflight)
	}
	if err := w.Append(batch(2, "b"), 2); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDurable(ctx, 2); !errors.Is(err, ErrFenced) {
		t.Fatalf("WaitDurable after fence = %v, want ErrFenced", err)
	}
	if err := w.Append(batch(3, "c"), 3); !errors.Is(err, ErrFenced) {
		t.Fatalf("Append after fence = %v, want ErrFenced", err)
	}
	var seqs []uint64
	if err := Replay(ctx, bkt, listIDs(t, bkt), func(o Object) error {
		for _, r := range o.Rows {
			seqs = append(seqs, r.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[1]" {
		t.Fatalf("replay after fence has seqs %v, want [1]", seqs)
	}
}

// TestLostResponseIsNotAFence: a PUT that landed but reported an error is
// retried; the retry's conflict is recognised as our own object.
func TestLostResponseIsNotAFence(t *testing.T) {
	ctx := context.Background()
	fb := blob.NewFaultBucket(blob.NewMemBucket(), blob.FaultConfig{
		Seed:                     1,
		ErrorRate:                map[string]float64{objstore.OpUpload: 0.5},
		UploadAfterWriteFraction: 1,
	})
	w := NewWriter(fb, 1, 0, nil, Options{RetryDelay: time.Millisecond})
	defer w.Close()
	for seq := uint64(1); seq <= 20; seq++ {
		if err := w.Append(batch(seq, fmt.Sprint(seq)), 1); err != nil {
			t.Fatal(err)
		}
		if err := w.WaitDurable(ctx, seq); err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
	}
	if fb.Injected() == 0 {
		t.Fatal("no lost response injected")
	}
	t.Logf("%d lost responses, %d retries", fb.Injected(), w.Stats().PutRetries)
}

func listIDs(t *testing.T, bkt objstore.Bucket) []uint64 {
	t.Helper()
	ids, err := ListIDs(context.Background(), bkt)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// appendAndWait appends a batch of key at the next seq (under mu, so that
// seqs reach the writer in order), waits until it is durable, and checks
// that DurableSeq then covers it: every object up to it is stored, so a
// replay now would find it. It reports whether the writer went on.
func appendAndWait(t *testing.T, w *Writer, mu *sync.Mutex, seq *uint64, key string) bool {
	t.Helper()
	mu.Lock()
	*seq++
	s := *seq
	err := w.Append(batch(s, key), 1)
	mu.Unlock()
	if err == nil {
		err = w.WaitDurable(context.Background(), s)
	}
	if err != nil {
		t.Error(err)
		return false
	}
	if d := w.DurableSeq(); d < s {
		t.Errorf("durable seq %d after waiting for %d", d, s)
	}
	return true
}

// checkReplayedInOrder replays bkt's WAL and checks that it holds the
// batches of seqs 1..n, each once, in seq order: acknowledged in order,
// none lost.
func checkReplayedInOrder(t *testing.T, bkt objstore.Bucket, n uint64) {
	t.Helper()
	var got []uint64
	if err := Replay(context.Background(), bkt, listIDs(t, bkt), func(o Object) error {
		for _, r := range o.Rows {
			got = append(got, r.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if s != uint64(i+1) {
			t.Fatalf("replayed seq %d at position %d: objects out of order or lost", s, i)
		}
	}
	if uint64(len(got)) != n {
		t.Fatalf("replayed %d batches, want %d", len(got), n)
	}
}

func putObject(t *testing.T, bkt objstore.Bucket, id uint64, data []byte) {
	t.Helper()
	if err := bkt.Upload(context.Background(), blob.WALName(id), bytes.NewReader(data), objstore.WithIfNotExists()); err != nil {
		t.Fatal(err)
	}
}

// TestFenceClaimsHolesAndWindow: an older writer with PUTs in flight
// leaves holes. The new writer fences every hole below its fence and the
// whole window above it, so the older writer can store nothing it could
// still acknowledge.
func TestFenceClaimsHolesAndWindow(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	// Writer 1 stored ids 1, 2 and 4; its PUT of 3 is still in flight.
	putObject(t, bkt, 1, testObject(t, 1, 1, 1))
	putObject(t, bkt, 2, testObject(t, 2, 1, 2))
	putObject(t, bkt, 4, testObject(t, 4, 1, 4))
	f, err := Fence(ctx, bkt, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Fence != 5 || f.FirstID != 5+MaxInflight || fmt.Sprint(f.Replay) != "[1 2 3 4]" {
		t.Fatalf("fenced %+v, want fence 5, first id %d, replay [1 2 3 4]", f, 5+MaxInflight)
	}
	for _, id := range []uint64{3, 6, f.FirstID - 1} {
		err := bkt.Upload(ctx, blob.WALName(id), bytes.NewReader(testObject(t, id, 1, id)), objstore.WithIfNotExists())
		if !bkt.IsConditionNotMetErr(err) {
			t.Fatalf("old writer stored id %d after the fence: %v", id, err)
		}
	}
	if ids := listIDs(t, bkt); len(ids) != int(f.FirstID-1) {
		t.Fatalf("ids %v are not dense up to %d", ids, f.FirstID-1)
	}
}

// TestReplaySkipsDebris: objects a fenced writer stored above a newer
// writer's fence were never acknowledged (acks go in id order) and replay
// skips them.
func TestReplaySkipsDebris(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	putObject(t, bkt, 1, testObject(t, 1, 1, 1))
	putObject(t, bkt, 2, testObject(t, 2, 1, 2))
	putObject(t, bkt, 3, encodeFence(2, 3))
	putObject(t, bkt, 4, testObject(t, 4, 1, 3)) // debris of writer 1
	putObject(t, bkt, 5, testObject(t, 5, 2, 3))
	var seqs []uint64
	if err := Replay(ctx, bkt, listIDs(t, bkt), func(o Object) error {
		for _, r := range o.Rows {
			seqs = append(seqs, r.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[1 2 3]" {
		t.Fatalf("replayed seqs %v, want [1 2 3] from objects 1, 2, 5", seqs)
	}
}

// replaySeqs replays ids and returns the seqs replayed and the ids skipped
// as torn.
func replaySeqs(t *testing.T, bkt objstore.Bucket, ids []uint64) (seqs, torn []uint64, err error) {
	t.Helper()
	err = ReplayTorn(context.Background(), bkt, ids, func(o Object) error {
		for _, r := range o.Rows {
			seqs = append(seqs, r.Seq)
		}
		return nil
	}, func(skipped []uint64) { torn = append(torn, skipped...) })
	return seqs, torn, err
}

// TestReplaySkipsTornTail: after a power loss the last objects of a writer
// can be damaged (named before their bytes were durable). Within
// MaxInflight ids of the log's end, or of a newer writer's fence, damage is
// that writer's torn tail, never acknowledged: replay skips it and the rest
// of that writer's objects. Further from any fence it is corruption.
func TestReplaySkipsTornTail(t *testing.T) {
	bkt := blob.NewMemBucket()
	for id := uint64(1); id <= 5; id++ {
		putObject(t, bkt, id, testObject(t, id, 1, id))
	}
	putObject(t, bkt, 6, testObject(t, 5, 1, 5)) // a recycled file's old bytes
	putObject(t, bkt, 7, testObject(t, 7, 1, 7)) // stored, not acknowledged
	seqs, torn, err := replaySeqs(t, bkt, listIDs(t, bkt))
	if err != nil || fmt.Sprint(seqs) != "[1 2 3 4 5]" || fmt.Sprint(torn) != "[6 7]" {
		t.Fatalf("replayed %v, skipped %v as torn, err %v; want [1 2 3 4 5], [6 7], nil", seqs, torn, err)
	}

	// The next writer (epoch 2) fenced 8..23 and stored 24 and 25; the tail
	// is skipped again, and replay goes on at the fence.
	for id := uint64(8); id < 8+MaxInflight; id++ {
		putObject(t, bkt, id, encodeFence(2, id))
	}
	putObject(t, bkt, 24, testObject(t, 24, 2, 6))
	putObject(t, bkt, 25, testObject(t, 25, 2, 7))
	seqs, torn, err = replaySeqs(t, bkt, listIDs(t, bkt))
	if err != nil || fmt.Sprint(seqs) != "[1 2 3 4 5 6 7]" || fmt.Sprint(torn) != "[6 7]" {
		t.Fatalf("replayed %v, skipped %v as torn, err %v; want [1 2 3 4 5 6 7], [6 7], nil", seqs, torn, err)
	}

	// Damage in the new writer's run, more than MaxInflight ids before the
	// end: an acknowledged object, so replay refuses it.
	for id := uint64(26); id <= 26+MaxInflight; id++ {
		putObject(t, bkt, id, testObject(t, id, 2, id))
	}
	data := testObject(t, 24, 2, 6)
	data[len(data)-1] ^= 0x40
	if err := bkt.Upload(context.Background(), blob.WALName(24), bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := replaySeqs(t, bkt, listIDs(t, bkt)); !errors.Is(err, sst.ErrCorruption) {
		t.Fatalf("replay with object 24 of %d damaged: %v, want corruption", 26+MaxInflight, err)
	}
}

// testObject makes WAL object id of writer epoch holding one batch, seq.
func testObject(t *testing.T, id, epoch, seq uint64) []byte {
	t.Helper()
	data, err := encodeBatches(batch(seq, fmt.Sprint(seq)), 0, 1, header{epoch: epoch, id: id}, sst.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPipelinedAcksInOrder: with several PUTs in flight and random PUT
// latency, durability is acknowledged in seq order only.
func TestPipelinedAcksInOrder(t *testing.T) {
	fb := blob.NewFaultBucket(blob.NewMemBucket(), blob.FaultConfig{
		Seed:        3,
		Latency:     map[string]time.Duration{objstore.OpUpload: 5 * time.Millisecond},
		LatencyRate: 0.5,
	})
	w := NewWriter(fb, 1, 0, nil, Options{Epoch: 1, Inflight: 8})
	var mu sync.Mutex
	var seq uint64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if !appendAndWait(t, w, &mu, &seq, fmt.Sprintf("%d-%d", g, i)) {
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkReplayedInOrder(t, fb, 800)
	t.Logf("800 batches in %d objects", w.Stats().Objects)
}

// gateBucket holds every Upload until release is closed, counting the
// Uploads that started.
type gateBucket struct {
	objstore.Bucket
	release chan struct{}
	started atomic.Int32
}

func (b *gateBucket) Upload(ctx context.Context, name string, r io.Reader, opts ...objstore.ObjectUploadOption) error {
	b.started.Add(1)
	select {
	case <-b.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return b.Bucket.Upload(ctx, name, r, opts...)
}

// TestBacklogStartsSecondPut: while a PUT is in flight, a backlog of
// pipelineMinBytes starts a second one at once. Appends wake the writer's
// loop only when they can change what it does; this is one of those times,
// and if the wake-up were lost the second PUT would wait for the first.
func TestBacklogStartsSecondPut(t *testing.T) {
	bkt := &gateBucket{Bucket: blob.NewMemBucket(), release: make(chan struct{})}
	w := NewWriter(bkt, 1, 0, nil, Options{Hedge: -1})
	defer w.Close()
	defer close(bkt.release)
	waitStarted := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for bkt.started.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d PUTs started, want %d", bkt.started.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := w.Append(batch(1, "small"), 1); err != nil {
		t.Fatal(err)
	}
	waitStarted(1)
	// Below the backlog, nothing more starts while the first PUT hangs.
	big := strings.Repeat("v", pipelineMinBytes/4)
	for s := uint64(2); s <= 4; s++ {
		if err := w.Append([]sst.Row{{Key: fmt.Appendf(nil, "k%d", s), Seq: s, Kind: sst.KindPut, Value: []byte(big)}}, 1); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := bkt.started.Load(); n != 1 {
		t.Fatalf("%d PUTs started for a backlog under %d bytes", n, pipelineMinBytes)
	}
	// The append that makes the backlog reach it starts the second PUT.
	if err := w.Append([]sst.Row{{Key: []byte("k5"), Seq: 5, Kind: sst.KindPut, Value: []byte(big)}}, 1); err != nil {
		t.Fatal(err)
	}
	waitStarted(2)
	if b := w.Stats().PutsBeside; b != 1 {
		t.Fatalf("Stats counts %d PUTs started beside another, want 1", b)
	}
}
