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
	// FlushInterval is the minimum time between the starts of two flushes.
	// 0 (local disk) flushes as soon as the previous flush ends; on S3 a few
	// tens of milliseconds bound the PUT rate.
	FlushInterval time.Duration
	// MaxObjectBytes cuts a flush early once this many bytes are taken (a
	// batch is never split). Default 8 MiB.
	MaxObjectBytes int
	// Compression of WAL object blocks.
	Compression sst.Compression
	// RetryDelay is the first pause after a failed PUT; it doubles up to 2s.
	RetryDelay time.Duration
	Logger     *slog.Logger
}

func (o *Options) ensureDefaults() {
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
}

// Stored names a WAL object that is in the bucket and the highest seq in it
// (0 for a fence).
type Stored struct {
	ID     uint64
	MaxSeq uint64
}

// Writer appends batches to the WAL with group commit.
type Writer struct {
	bkt  objstore.Bucket
	opts Options

	mu           sync.Mutex
	pending      []sst.Row // appended, not yet taken by a flush
	pendingBytes int
	pendingTick  int64
	nextID       uint64
	err          error         // sticky: ErrFenced or ErrClosed
	durableCh    chan struct{} // closed and replaced when durableSeq moves or err is set
	history      []Stored      // stored objects not yet reported by FlushedThrough
	closing      bool

	durableSeq atomic.Uint64
	kick       chan struct{}
	done       chan struct{}
	abandon    chan struct{}
	stats      struct{ objects, bytes, batches, retries atomic.Uint64 }
}

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
		history:   history,
		durableCh: make(chan struct{}),
		kick:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		abandon:   make(chan struct{}),
	}
	w.durableSeq.Store(durableSeq)
	go w.loop()
	return w
}

// Append queues one batch: rows that all carry the same seq, written at
// clock time tick. The rows' slices must not change afterwards.
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
	w.pending = append(w.pending, rows...)
	w.pendingTick = max(w.pendingTick, tick)
	w.mu.Unlock()
	w.stats.batches.Add(1)
	select {
	case w.kick <- struct{}{}:
	default:
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
	}
}

// Close stores everything appended so far, then stops the writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
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
// would. Used by tests that simulate a crash.
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
		close(w.durableCh)
		w.durableCh = make(chan struct{})
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	var lastStart time.Time
	for {
		w.mu.Lock()
		idle := len(w.pending) == 0
		stop := w.err != nil || (w.closing && idle)
		w.mu.Unlock()
		if stop {
			return
		}
		if idle {
			select {
			case <-w.kick:
			case <-w.abandon:
				return
			}
			continue
		}
		if wait := w.opts.FlushInterval - time.Since(lastStart); wait > 0 && !lastStart.IsZero() {
			select {
			case <-time.After(wait):
			case <-w.abandon:
				return
			}
		}
		lastStart = time.Now()
		if !w.flushOne() {
			return
		}
	}
}

// take removes up to MaxObjectBytes of whole batches from pending.
func (w *Writer) take() (rows []sst.Row, tick int64, id uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, size := 0, 0
	for n < len(w.pending) {
		seq := w.pending[n].Seq
		m := n
		for m < len(w.pending) && w.pending[m].Seq == seq {
			size += len(w.pending[m].Key) + len(w.pending[m].Value) + 16
			m++
		}
		n = m
		if size >= w.opts.MaxObjectBytes {
			break
		}
	}
	rows = w.pending[:n:n]
	w.pending = w.pending[n:]
	w.pendingBytes -= size
	tick = w.pendingTick
	if len(w.pending) == 0 {
		w.pending = nil
		w.pendingBytes = 0
	}
	return rows, tick, w.nextID
}

// flushOne stores one object. It returns false when the writer must stop.
func (w *Writer) flushOne() bool {
	rows, tick, id := w.take()
	data, err := encode(rows, tick, w.opts.Compression)
	if err != nil {
		w.fail(fmt.Errorf("wal: encode object %d: %w", id, err))
		return false
	}
	if err := w.put(id, data); err != nil {
		w.fail(err)
		return false
	}
	maxSeq := rows[len(rows)-1].Seq
	w.stats.objects.Add(1)
	w.stats.bytes.Add(uint64(len(data)))
	w.mu.Lock()
	w.nextID = id + 1
	w.history = append(w.history, Stored{ID: id, MaxSeq: maxSeq})
	w.durableSeq.Store(maxSeq)
	close(w.durableCh)
	w.durableCh = make(chan struct{})
	w.mu.Unlock()
	return true
}

func (w *Writer) fail(err error) {
	w.mu.Lock()
	w.setErrLocked(err)
	w.mu.Unlock()
	w.opts.Logger.Error("wal writer stopped", "err", err)
}

// put stores object id with create-if-absent, retrying transient errors
// until it succeeds, is fenced, or the writer is abandoned. A conflict after
// a failed attempt may be our own earlier attempt having landed: the object
// is read back and compared before calling it a fence.
func (w *Writer) put(id uint64, data []byte) error {
	name := blob.WALName(id)
	delay := w.opts.RetryDelay
	failedBefore := false
	for {
		err := w.bkt.Upload(context.Background(), name, bytes.NewReader(data), objstore.WithIfNotExists())
		if err == nil {
			return nil
		}
		if w.bkt.IsConditionNotMetErr(err) {
			if failedBefore && w.sameContent(name, data) {
				return nil
			}
			return fmt.Errorf("%w: wal object %d already exists", ErrFenced, id)
		}
		failedBefore = true
		w.stats.retries.Add(1)
		w.opts.Logger.Warn("wal put failed, retrying", "object", name, "err", err, "delay", delay)
		select {
		case <-time.After(delay):
		case <-w.abandon:
			return ErrClosed
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

func encode(rows []sst.Row, tick int64, c sst.Compression) ([]byte, error) {
	b := sst.NewBuilder(sst.BuilderOptions{Unordered: true, Compression: c, BloomBitsPerKey: 0})
	for _, r := range rows {
		if err := b.Add(r); err != nil {
			return nil, err
		}
	}
	b.SetClockTick(tick)
	data, _, err := b.Finish()
	return data, err
}
