package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

var (
	// ErrFenced means a newer writer owns the bucket; this writer must stop.
	ErrFenced = errors.New("wal: fenced by a newer writer")
	// ErrClosed is returned by a writer after Close or Abandon.
	ErrClosed = errors.New("wal: closed")
)

// Options configure a Writer.
type Options struct {
	// Epoch is the writer epoch stamped on every object (see format.go).
	Epoch uint64
	// FlushInterval is the minimum time between the starts of two flushes.
	// 0 (local disk) flushes as soon as the PUT in flight ends; on S3 an
	// interval bounds the PUT rate, and a batch that has waited an interval
	// starts a PUT beside the one in flight, so a write waits about an
	// interval plus a PUT, not two PUTs (see loop and overlapWaitLocked).
	FlushInterval time.Duration
	// Inflight is how many PUTs may be in flight at once (1..MaxInflight):
	// object id starts only when every object up to id-Inflight is
	// acknowledged. Objects are acknowledged in id order whatever order
	// their PUTs finish in. Default 4: a local disk merges concurrent fsyncs into one journal
	// commit, and S3 PUT latency overlaps.
	Inflight int
	// MaxObjectBytes cuts a flush early once this many bytes are taken (a
	// batch is never split). Default 8 MiB.
	MaxObjectBytes int
	// Compression of WAL object blocks.
	Compression sst.Compression
	// RetryDelay is the first pause after a failed PUT; it doubles up to 2s.
	RetryDelay time.Duration
	// Hedge is how long a PUT may run before an identical second one is
	// started (see hedge.go). 0: adaptive, four times the usual PUT time
	// and at least 50ms; negative: never hedge.
	Hedge time.Duration
	// Pacer, if set, makes encoding step aside while clients are active
	// (see sst.Pacer).
	Pacer  *sst.Pacer
	Logger *slog.Logger
}

func (o *Options) ensureDefaults() {
	if o.Inflight <= 0 {
		o.Inflight = 4
	}
	o.Inflight = min(o.Inflight, MaxInflight)
	if o.MaxObjectBytes <= 0 {
		o.MaxObjectBytes = 8 << 20
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 20 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Stats count what the writer did.
type Stats struct {
	Objects    uint64 // WAL objects stored
	Bytes      uint64 // bytes stored
	Batches    uint64 // batches appended
	PutRetries uint64 // failed PUT attempts that were retried
	PutHedges  uint64 // PUTs slow enough that a second, identical one was started
	// PutsBeside counts PUTs started while another was in flight: for a
	// backlog, or for a batch that waited a flush interval.
	PutsBeside uint64

	// PutSeconds is the time from the start of an object's first PUT
	// attempt to its success, per stored object; ObjectBatches is the
	// number of batches (group commit's group) per stored object.
	PutSeconds    Histogram
	ObjectBatches Histogram
}

// Stored names a WAL object that is in the bucket and the highest seq in it
// (0 for a fence).
type Stored struct {
	ID     uint64
	MaxSeq uint64
}

// pipelineMinBytes is the backlog that starts a PUT while another is in
// flight.
const pipelineMinBytes = 1 << 20

// putResult is the outcome of one object's PUT, waiting to be acknowledged
// in id order.
type putResult struct {
	maxSeq  uint64
	batches int
	bytes   int
	took    time.Duration
	err     error
}

// maxRejoinWait bounds the quiet gap that ends a wait for released
// writers, and how long any arrival counts as their return (see
// rejoinWaitLocked). A writer behind a network client needs the reply's
// round trip and the next command's parsing to come back: hundreds of
// microseconds on a loaded machine, more than the 200µs this once was,
// which split 50 RESP clients on a 20 ms store into halves of 25 per PUT.
const maxRejoinWait = 2 * time.Millisecond

// Writer appends batches to the WAL with group commit.
type Writer struct {
	bkt  objstore.Bucket
	opts Options

	// spare holds the memory of stored objects, for encoding the next
	// ones in: a second's object under everysec is megabytes, and fresh
	// memory costs a page fault each 4 KiB.
	spareMu sync.Mutex
	spare   [][]byte

	mu           sync.Mutex
	pending      rowQueue // appended, not yet taken by a flush
	pendingBytes int
	pendingTick  int64
	pendingSince time.Time // with a FlushInterval: no later than the oldest pending batch's Append
	// pendingBatches counts batches in pending. rejoin* let the writers
	// released by the last acknowledged object rejoin the next one: see
	// rejoinWaitLocked.
	pendingBatches int
	rejoinTarget   int
	rejoinBy       time.Time            // the wait's end at the latest
	rejoinGap      time.Duration        // the wait ends early after this long without a batch
	rejoinSeen     int                  // pendingBatches when the wait last saw batches arrive
	rejoinFirm     time.Time            // until then any arrival is progress; after, only a crowd's
	rejoinSteady   float64              // batches a gap brings at the rate they came during the PUT
	nextID         uint64               // id of the next object to start
	ackedID        uint64               // every object below this id is stored (or the writer failed)
	results        map[uint64]putResult // finished PUTs above ackedID
	inflight       int
	err            error         // sticky: ErrFenced or ErrClosed
	durableCh      chan struct{} // closed and replaced when durableSeq moves or err is set
	history        []Stored      // stored objects not yet reported by FlushedThrough
	closing        bool
	// loopWaits is what the sleeping loop waits for, so that Append wakes
	// it only when its batch can change the loop's decision: under load a
	// wake-up per batch was a goroutine switch per write, for nothing while
	// a PUT is in flight.
	loopWaits waitReason

	durableSeq atomic.Uint64
	failed     atomic.Bool // err is set: Append will fail
	kick       chan struct{}
	puts       chan func() // a PUT for an idle putter to run; see run
	done       chan struct{}
	abandon    chan struct{}
	putEWMA    atomic.Int64 // moving average of PUT times, ns: the hedge delay and the overlap wait read it
	stats      struct {
		objects, bytes, batches, retries, hedges, beside atomic.Uint64
		putSeconds, objectBatches                        *histogram
	}
}

// waitReason is what the writer's loop sleeps until.
type waitReason uint8

const (
	waitKick     waitReason = iota // only a kick: a finished PUT, Close, an error
	waitAppend                     // any batch (the writer is idle)
	waitRejoin                     // pendingBatches reaching rejoinTarget
	waitFullSize                   // a whole object's worth pending (waitInterval)
	waitBacklog                    // pipelineMinBytes pending, to start a second PUT
)

// Bucket bounds of the writer's histograms.
var (
	putSecondsBounds    = []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5}
	objectBatchesBounds = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}
)

// NewWriter starts a writer whose first object is firstID. durableSeq is the
// highest seq already durable (replayed or flushed); history lists the
// objects below firstID not yet known to be flushed (replayed objects and the
// fence), in id order, so FlushedThrough can report them.
func NewWriter(bkt objstore.Bucket, firstID, durableSeq uint64, history []Stored, opts Options) *Writer {
	opts.ensureDefaults()
	w := &Writer{
		bkt:       bkt,
		opts:      opts,
		nextID:    firstID,
		ackedID:   firstID,
		results:   make(map[uint64]putResult),
		history:   history,
		durableCh: make(chan struct{}),
		kick:      make(chan struct{}, 1),
		puts:      make(chan func()),
		done:      make(chan struct{}),
		abandon:   make(chan struct{}),
	}
	w.stats.putSeconds = newHistogram(putSecondsBounds...)
	w.stats.objectBatches = newHistogram(objectBatchesBounds...)
	w.durableSeq.Store(durableSeq)
	go w.loop()
	return w
}

// Append queues one batch: rows that all carry the same seq, written at
// clock time tick. It copies the rows, not the bytes their Key and Value
// point to, which must not change afterwards.
// REQUIRES: callers append in seq order (the engine holds its commit lock).
func (w *Writer) Append(rows []sst.Row, tick int64) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	for _, r := range rows {
		w.pendingBytes += len(r.Key) + len(r.Value) + 16
	}
	if w.pendingBatches == 0 && w.opts.FlushInterval > 0 {
		w.pendingSince = time.Now() // only the overlap rule reads it
	}
	w.pending.push(rows)
	w.pendingBatches++
	w.pendingTick = max(w.pendingTick, tick)
	var wake bool
	switch w.loopWaits {
	case waitAppend:
		wake = true
	case waitRejoin:
		wake = w.pendingBatches >= w.rejoinTarget
	case waitFullSize:
		wake = w.pendingBytes >= w.opts.MaxObjectBytes
	case waitBacklog:
		wake = w.pendingBytes >= pipelineMinBytes
	}
	w.mu.Unlock()
	w.stats.batches.Add(1)
	if wake {
		w.wake()
	}
	return nil
}

// DurableSeq returns the highest seq stored in the WAL.
func (w *Writer) DurableSeq() uint64 { return w.durableSeq.Load() }

// WaitDurable blocks until seq is durable, the writer fails, or ctx ends.
func (w *Writer) WaitDurable(ctx context.Context, seq uint64) error {
	for {
		if w.durableSeq.Load() >= seq {
			return nil
		}
		w.mu.Lock()
		ch, err := w.durableCh, w.err
		w.mu.Unlock()
		if w.durableSeq.Load() >= seq {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Failed reports whether the writer has stopped (fenced, closed, or a PUT
// failed), so that Append would fail. It takes no lock.
func (w *Writer) Failed() bool { return w.failed.Load() }

// Err returns the writer's sticky error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// FlushedThrough returns the largest id W such that every object stored by
// this writer up to W holds only seqs <= seq, or 0 if none. The engine
// records it as replay_after_wal_id once seq is in an SST.
func (w *Writer) FlushedThrough(seq uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var id uint64
	n := 0
	for _, h := range w.history {
		if h.MaxSeq > seq {
			break
		}
		id = h.ID
		n++
	}
	w.history = w.history[n:]
	return id
}

// Stats returns counters of the writer's work.
func (w *Writer) Stats() Stats {
	return Stats{
		Objects:    w.stats.objects.Load(),
		Bytes:      w.stats.bytes.Load(),
		Batches:    w.stats.batches.Load(),
		PutRetries: w.stats.retries.Load(),
		PutHedges:  w.stats.hedges.Load(),
		PutsBeside: w.stats.beside.Load(),

		PutSeconds:    w.stats.putSeconds.snapshot(),
		ObjectBatches: w.stats.objectBatches.snapshot(),
	}
}

// Close stores everything appended so far, then stops the writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	w.wake()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	if err == ErrClosed {
		err = nil
	}
	w.setErrLocked(ErrClosed)
	return err
}

// Abandon stops the writer without storing what is pending, as a crash
// would; PUTs already in flight may still land. Used by tests that simulate
// a crash.
func (w *Writer) Abandon() {
	w.mu.Lock()
	w.setErrLocked(ErrClosed)
	w.mu.Unlock()
	close(w.abandon)
	<-w.done
}

// REQUIRES: w.mu held.
func (w *Writer) setErrLocked(err error) {
	if w.err == nil {
		w.err = err
		w.failed.Store(true)
		close(w.durableCh)
		w.durableCh = make(chan struct{})
	}
}

func (w *Writer) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// loop starts PUTs: as soon as there is something to write and a PUT slot
// is free (with no interval, once the PUT in flight ends), no sooner than
// FlushInterval after the previous start. It ends
// when the writer failed, or is closing with nothing pending or in flight.
func (w *Writer) loop() {
	defer close(w.done)
	var lastStart time.Time
	timer := newShortTimer() // a rejoin wait's, or an overlap's
	defer timer.Close()
	for {
		w.mu.Lock()
		idle := w.pending.len() == 0
		// The window, not just the count, is bounded: object id may start
		// only once every id up to id-Inflight is acknowledged. A fenced
		// writer therefore never stores anything above fence+MaxInflight-1.
		windowFull := w.nextID >= w.ackedID+uint64(w.opts.Inflight)
		// A second PUT beside one in flight only pays off for a large
		// backlog: small concurrent PUTs split the waiting writers into
		// small groups, and concurrent fsyncs each get slower (measured: 16
		// writers on local disk did 4x fewer writes/s with 4 small PUTs in
		// flight). With a flush interval, a batch that has waited a whole
		// interval also starts one (overlapWaitLocked): on an object store, a
		// write that just missed a PUT waited for it to end and then for its
		// own, so p99 was twice the PUT time. Starting a PUT an interval
		// after every start instead (a fixed grid) bounded the tail too, but
		// split a returning crowd of clients over the grid's ticks: 50
		// clients on a 20 ms store made 1.6k SETs/s at p50 32 ms, against
		// 1.9k at 24 ms for one PUT at a time.
		backlogOnly := w.inflight > 0 && w.pendingBytes < pipelineMinBytes
		var overlapWait time.Duration
		if backlogOnly && w.opts.FlushInterval > 0 {
			// Idle, the loop waits for the first batch (waitAppend), whose
			// Append starts the overlap's clock.
			if !idle {
				overlapWait = w.overlapWaitLocked(lastStart)
			}
			backlogOnly = overlapWait > 0
		}
		full := windowFull || backlogOnly
		stop := (w.err != nil && w.inflight == 0) || (w.closing && idle && w.inflight == 0)
		failed := w.err != nil
		rejoin := w.rejoinWaitLocked()
		waiting := rejoin > 0 && !idle && !full && !failed
		overlapping := overlapWait > 0 && !windowFull && !failed
		switch {
		case stop || failed || windowFull:
			w.loopWaits = waitKick
		case full:
			w.loopWaits = waitBacklog
		case idle:
			w.loopWaits = waitAppend
		case waiting:
			w.loopWaits = waitRejoin
		default:
			w.loopWaits = waitKick
		}
		w.mu.Unlock()
		if stop {
			return
		}
		if idle || full || failed || rejoin > 0 {
			var timeout <-chan time.Time
			switch {
			case waiting:
				timer.Reset(rejoin)
				timeout = timer.C
			case overlapping:
				timer.Reset(overlapWait)
				timeout = timer.C
			}
			select {
			case <-w.kick:
			case <-timeout:
				if waiting {
					w.mu.Lock()
					if !w.rejoinProgressLocked() {
						w.rejoinTarget = 0
					}
					w.mu.Unlock()
				}
			case <-w.abandon:
				return
			}
			if timeout != nil {
				timer.Stop()
			}
			continue
		}
		if wait := w.opts.FlushInterval - time.Since(lastStart); wait > 0 && !lastStart.IsZero() {
			if !w.waitInterval(wait) {
				return
			}
			if w.Err() != nil {
				continue // a PUT in flight failed meanwhile: nothing more may start
			}
		}
		lastStart = time.Now()
		w.start()
	}
}

// waitInterval waits out the rest of the flush interval, d, unless a whole
// object's worth (MaxObjectBytes) is pending or the writer is closing. The
// interval bounds how often small objects are PUT; it must not bound the
// write rate to MaxObjectBytes per interval, which under everysec's 1 s
// held a 30 MB/s load to 8 MB/s. It returns false if the writer is
// abandoned.
func (w *Writer) waitInterval(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		w.mu.Lock()
		enough := w.pendingBytes >= w.opts.MaxObjectBytes || w.closing
		w.loopWaits = waitFullSize
		if enough {
			w.loopWaits = waitKick
		}
		w.mu.Unlock()
		if enough {
			return true
		}
		select {
		case <-t.C:
			return true
		case <-w.kick: // an Append: look at pending again
		case <-w.abandon:
			return false
		}
	}
}

// overlapWaitLocked returns how long pending batches should still wait
// before a PUT starts beside the one in flight, which started at
// lastStart: until the oldest has waited a flush interval, or, if the PUT
// in flight is due to end within half an interval of that, until half an
// interval after its expected end. The writers that PUT releases then find
// these batches still pending and join them (see rejoinWaitLocked), where
// a PUT started just before it ended would leave them for the next one: a
// crowd of clients would split into groups that alternate, each waiting
// an interval more (without this wait, 50 clients on a 20 ms store with a
// 10 ms interval had a p50 of 25 or 33 ms from one run to the next).
// REQUIRES: w.mu held, FlushInterval > 0, pending not empty.
func (w *Writer) overlapWaitLocked(lastStart time.Time) time.Duration {
	iv := w.opts.FlushInterval
	at := w.pendingSince.Add(iv)
	if end := lastStart.Add(time.Duration(w.putEWMA.Load())); at.After(end.Add(-iv/2)) && at.Before(end.Add(iv/2)) {
		at = end.Add(iv / 2)
	}
	return time.Until(at)
}

// rejoinWaitLocked returns how long the next flush should still wait for
// writers to rejoin, or 0 to start now.
//
// Without it, group commit splits N steady writers into two alternating
// halves: while one object is stored the other half queues, and the moment
// it is stored, the next flush leaves with only the queued half, because the
// released half takes a while to come back with new batches. Waiting until
// as many batches are pending as the last object released plus those
// already queued makes each PUT carry all N.
//
// The wait lasts at most twice the last PUT's time, and ends sooner once a
// quarter of that PUT's time (at most maxRejoinWait) passes with no new
// batch: writers that do not come back (done, or thinking between
// requests) cost that short gap, while a returning crowd, whose batches
// keep arriving while the CPU works through them, is waited for. A quarter
// of the PUT's time as the whole wait left most of 50 busy clients behind
// on local disk (20 writes per PUT); up to twice it, 34 per PUT and 5-15%
// more SETs/s.
//
// Past maxRejoinWait, arrivals count as a returning crowd only above the
// rate batches came in during the PUT (twice it): writers that arrive
// steadily whatever the WAL does (an open-loop load, clients thinking
// between requests) are no crowd, and waiting for them would add up to
// twice a PUT to every write. Before that the wait was capped at
// maxRejoinWait, which on a store of 20 ms cut the crowd short: 500
// clients, whose replies and next requests keep two CPUs busy for 10-15
// ms, came back in time for about 270 of them per PUT, and each write
// waited for two PUTs.
// REQUIRES: w.mu held.
func (w *Writer) rejoinWaitLocked() time.Duration {
	if w.inflight > 0 || w.closing || w.pendingBatches >= w.rejoinTarget {
		return 0
	}
	return min(max(time.Until(w.rejoinBy), 0), w.rejoinGap)
}

// finishRejoin sets up the wait for the writers that an object stored at
// now releases: released batches, after a PUT that took took.
// REQUIRES: w.mu held.
func (w *Writer) finishRejoin(released int, took time.Duration, now time.Time) {
	w.rejoinTarget = released + w.pendingBatches
	w.rejoinBy = now.Add(2 * took)
	w.rejoinFirm = now.Add(maxRejoinWait)
	w.rejoinGap = min(took/4, maxRejoinWait)
	w.rejoinSeen = w.pendingBatches
	// The batches pending now came in during the PUT.
	w.rejoinSteady = float64(w.pendingBatches) * float64(w.rejoinGap) / float64(max(took, 1))
}

// rejoinProgressLocked reports, when a rejoin wait's timer fires, whether
// batches arrived since it was set (past maxRejoinWait, more than a steady
// load brings) and time is left: the wait goes on.
// REQUIRES: w.mu held.
func (w *Writer) rejoinProgressLocked() bool {
	now := time.Now()
	arrived := w.pendingBatches - w.rejoinSeen
	if arrived <= 0 || !now.Before(w.rejoinBy) {
		return false
	}
	if !now.Before(w.rejoinFirm) && float64(arrived) <= 2*w.rejoinSteady {
		return false
	}
	w.rejoinSeen = w.pendingBatches
	return true
}

// take removes up to MaxObjectBytes of whole batches from pending and
// assigns them the next id.
func (w *Writer) take() (rows takenRows, size int, tick int64, id uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, batches := w.pending.len(), w.pendingBatches
	size = w.pendingBytes
	if size >= w.opts.MaxObjectBytes {
		n, batches, size = w.cut()
	}
	rows = w.pending.take(n, batches)
	w.pendingBatches -= batches
	w.pendingBytes -= size
	tick = w.pendingTick
	if w.pending.len() == 0 {
		w.pendingBytes = 0
	}
	id = w.nextID
	w.nextID++
	if w.inflight > 0 {
		w.stats.beside.Add(1)
	}
	w.inflight++
	return rows, size, tick, id
}

// cut finds where an object of at least MaxObjectBytes of whole batches
// ends in pending: its rows, batches and size. Only a backlog of more than
// an object's worth is walked; a take of everything pending needs the
// counts alone.
// REQUIRES: w.mu held.
func (w *Writer) cut() (n, batches, size int) {
	var seq uint64
	w.pending.scan(func(r *sst.Row) bool {
		if n == 0 || r.Seq != seq {
			if n > 0 && size >= w.opts.MaxObjectBytes {
				return false // at a batch boundary, with an object's worth taken
			}
			batches++
		}
		seq = r.Seq
		size += len(r.Key) + len(r.Value) + 16
		n++
		return true
	})
	return n, batches, size
}

// release gives the rows of an encoded object back to pending's free
// chunks.
func (w *Writer) release(rows takenRows) {
	w.mu.Lock()
	w.pending.release(rows)
	w.mu.Unlock()
}

// start takes pending batches and stores them as one object in the
// background.
func (w *Writer) start() {
	rows, size, tick, id := w.take()
	maxSeq, batches := rows.lastSeq(), rows.batches
	w.run(func() {
		start := time.Now()
		data, err := encodeSegments(rows.segs, size, tick, header{epoch: w.opts.Epoch, id: id}, w.opts.Compression, w.opts.Pacer, w.takeSpare())
		w.release(rows)
		done := false
		if err != nil {
			err = fmt.Errorf("wal: encode object %d: %w", id, err)
		} else {
			done, err = w.put(id, data)
		}
		if done {
			w.giveSpare(data) // before the acknowledgement, which tests wait for
		}
		w.finish(id, putResult{maxSeq: maxSeq, batches: batches, bytes: len(data), took: time.Since(start), err: err})
	})
}

// run runs put on an idle putter goroutine, or on a new one if none is
// idle. A putter stays for the writer's next PUT rather than exiting: a
// new goroutine per object grew its stack again for every object (the
// encoding and the upload's calls go deeper than a goroutine's first
// stack), a copy that cost about as much CPU as the object's encoding.
// Putters exit when the loop has ended (done), after which nothing starts
// a PUT. A new one starts only when none is idle, and at most Inflight are
// busy, so there are about that many (a few more if PUTs are started while
// putters that just finished have not yet gone idle).
func (w *Writer) run(put func()) {
	select {
	case w.puts <- put:
	default:
		go w.putter(put)
	}
}

func (w *Writer) putter(put func()) {
	for {
		put()
		select {
		case put = <-w.puts:
		case <-w.done:
			return
		}
	}
}

// maxSpares is how many objects' memory the writer keeps: as many as are
// usually in flight.
const maxSpares = 2

// takeSpare returns the memory of an object stored before, or nil.
func (w *Writer) takeSpare() []byte {
	w.spareMu.Lock()
	defer w.spareMu.Unlock()
	if n := len(w.spare); n > 0 {
		b := w.spare[n-1]
		w.spare[n-1] = nil
		w.spare = w.spare[:n-1]
		return b
	}
	return nil
}

// giveSpare keeps b, an object's memory nothing uses any more, for the
// next object, unless the writer has enough or b is larger than an object
// is cut at (an outsized batch's object is not kept).
func (w *Writer) giveSpare(b []byte) {
	if cap(b) > 2*w.opts.MaxObjectBytes {
		return
	}
	w.spareMu.Lock()
	defer w.spareMu.Unlock()
	if len(w.spare) < maxSpares {
		w.spare = append(w.spare, b[:0])
	}
}

// finish records a PUT's outcome and acknowledges every object stored in
// an unbroken run of ids. A failed object stops the writer: no later
// object is acknowledged, even if its PUT succeeded.
func (w *Writer) finish(id uint64, r putResult) {
	w.mu.Lock()
	w.inflight--
	w.results[id] = r
	moved := false
	for w.err == nil {
		next, ok := w.results[w.ackedID]
		if !ok {
			break
		}
		delete(w.results, w.ackedID)
		if next.err != nil {
			w.setErrLocked(next.err)
			w.opts.Logger.Error("wal writer stopped", "err", next.err)
			break
		}
		w.history = append(w.history, Stored{ID: w.ackedID, MaxSeq: next.maxSeq})
		// The writers this object releases are expected back with the ones
		// already queued; see rejoinWaitLocked.
		w.finishRejoin(next.batches, next.took, time.Now())
		w.durableSeq.Store(next.maxSeq)
		w.stats.objects.Add(1)
		w.stats.bytes.Add(uint64(next.bytes))
		w.stats.putSeconds.observe(next.took.Seconds())
		w.stats.objectBatches.observe(float64(next.batches))
		w.ackedID++
		moved = true
	}
	if moved {
		close(w.durableCh)
		w.durableCh = make(chan struct{})
	}
	w.mu.Unlock()
	w.wake()
}

// put stores object id with create-if-absent, retrying transient errors
// until it succeeds, is fenced, or the writer is abandoned. A conflict after
// a failed attempt, or in a hedged attempt, may be our own PUT having
// landed: the object is read back and compared before calling it a fence.
// done reports that no upload can still be reading data: the first and
// only attempt stored it, unhedged (a hedge's loser may outlive its
// attempt, and an HTTP transport may go on reading a failed request's
// body after it returned).
func (w *Writer) put(id uint64, data []byte) (done bool, err error) {
	name := blob.WALName(id)
	delay := w.opts.RetryDelay
	failedBefore := false
	for {
		hedged, err := w.attempt(name, data)
		if err == nil {
			return !failedBefore && !hedged, nil
		}
		if w.bkt.IsConditionNotMetErr(err) {
			// After a failed attempt or beside a hedge, the object may be
			// our own.
			if (failedBefore || hedged) && w.sameContent(name, data) {
				return false, nil
			}
			return false, fmt.Errorf("%w: wal object %d already exists", ErrFenced, id)
		}
		if werr := w.Err(); werr != nil {
			return false, werr // an earlier object failed: this one can never be acknowledged
		}
		failedBefore = true
		w.stats.retries.Add(1)
		w.opts.Logger.Warn("wal put failed, retrying", "object", name, "err", err, "delay", delay)
		select {
		case <-time.After(delay):
		case <-w.abandon:
			return false, ErrClosed
		}
		delay = min(2*delay, 2*time.Second)
	}
}

func (w *Writer) sameContent(name string, data []byte) bool {
	rc, err := w.bkt.Get(context.Background(), name)
	if err != nil {
		return false
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	return err == nil && bytes.Equal(got, data)
}
