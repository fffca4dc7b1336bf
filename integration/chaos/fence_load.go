package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

const fenceWriters = 8 // writers per server

// fenceLoad is the write load on one server: fenceWriters clients, each
// setting unique fields of its own hash and recording what it was told.
type fenceLoad struct {
	inst    int // which server start this load writes to: it names the keys
	writers []*fenceWriter
	cancel  context.CancelFunc
	done    chan struct{}
}

// fenceWriter is one writer's record. mu guards it: the campaign reads it
// while the writer runs.
type fenceWriter struct {
	key string

	mu       sync.Mutex
	seq      uint64      // writes sent
	acks     []fenceAck  // acknowledged writes, in order
	errs     []fenceFail // failed writes, in order
	lateAcks int         // acknowledgements after this writer's first error
}

type fenceAck struct {
	seq uint64
	at  time.Time
}

type fenceFail struct {
	at   time.Time
	text string
}

func fenceValue(key string, seq uint64) string { return fmt.Sprintf("%s.%d", key, seq) }

// startFenceLoad starts the writers against addr.
func startFenceLoad(ctx context.Context, addr string, inst int) *fenceLoad {
	ctx, cancel := context.WithCancel(ctx)
	l := &fenceLoad{inst: inst, cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	for i := range fenceWriters {
		w := &fenceWriter{key: fmt.Sprintf("fence:%d:%d", inst, i)}
		l.writers = append(l.writers, w)
		wg.Go(func() { w.run(ctx, addr) })
	}
	go func() { wg.Wait(); close(l.done) }()
	return l
}

// stop ends the writers and waits for them.
func (l *fenceLoad) stop() {
	l.cancel()
	<-l.done
}

func (w *fenceWriter) run(ctx context.Context, addr string) {
	rdb := crashClient(addr)
	defer rdb.Close()
	for ctx.Err() == nil {
		w.mu.Lock()
		w.seq++
		seq := w.seq
		w.mu.Unlock()
		err := rdb.HSet(context.Background(), w.key, strconv.FormatUint(seq, 10), fenceValue(w.key, seq)).Err()
		now := time.Now()
		w.mu.Lock()
		if err == nil {
			w.acks = append(w.acks, fenceAck{seq, now})
			if len(w.errs) > 0 {
				w.lateAcks++
			}
		} else {
			w.errs = append(w.errs, fenceFail{now, err.Error()})
		}
		w.mu.Unlock()
		if err != nil {
			// A fenced server answers at once: do not spin on it.
			sleepCtx(ctx, 5*time.Millisecond)
		}
	}
}

// firstError is when the writer first failed, zero if it never has.
func (w *fenceWriter) firstError() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) == 0 {
		return time.Time{}
	}
	return w.errs[0].at
}

// waitFenced waits until every writer has had a write fail, or timeout
// passes, and returns when the last of them first failed.
func (l *fenceLoad) waitFenced(ctx context.Context, timeout time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(timeout)
	for {
		var last time.Time
		all := true
		for _, w := range l.writers {
			at := w.firstError()
			if at.IsZero() {
				all = false
				break
			}
			last = maxTime(last, at)
		}
		if all {
			return last, true
		}
		if time.Now().After(deadline) || !sleepCtx(ctx, 10*time.Millisecond) {
			return time.Time{}, false
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// fenceTally is what one load's writers were told.
type fenceTally struct {
	acked, lateAcks   int
	fenced, other     int
	otherTexts        []string  // distinct texts of non-fence errors
	lastAck, firstAck time.Time // over all writers
}

func (l *fenceLoad) tally() fenceTally {
	var t fenceTally
	for _, w := range l.writers {
		w.mu.Lock()
		t.acked += len(w.acks)
		t.lateAcks += w.lateAcks
		if n := len(w.acks); n > 0 {
			t.lastAck = maxTime(t.lastAck, w.acks[n-1].at)
			if t.firstAck.IsZero() || w.acks[0].at.Before(t.firstAck) {
				t.firstAck = w.acks[0].at
			}
		}
		for _, e := range w.errs {
			if strings.Contains(e.text, "fenced") {
				t.fenced++
				continue
			}
			t.other++
			if len(t.otherTexts) < 5 && !slices.Contains(t.otherTexts, e.text) {
				t.otherTexts = append(t.otherTexts, e.text)
			}
		}
		w.mu.Unlock()
	}
	return t
}

// acksAfter counts the load's acknowledgements received after t.
func (l *fenceLoad) acksAfter(t time.Time) int {
	n := 0
	for _, w := range l.writers {
		w.mu.Lock()
		for i := len(w.acks) - 1; i >= 0 && w.acks[i].at.After(t); i-- {
			n++
		}
		w.mu.Unlock()
	}
	return n
}

// verify reads the load's hashes through rdb: every acknowledged field must
// be there with its value, and no field the writer never sent. It returns
// the acknowledged writes checked, those lost, and the problems found.
// REQUIRES: the load is stopped.
func (l *fenceLoad) verify(ctx context.Context, rdb *redis.Client) (checked, lost int, problems []string, err error) {
	for _, w := range l.writers {
		got, err := rdb.HGetAll(ctx, w.key).Result()
		if err != nil {
			return checked, lost, problems, fmt.Errorf("HGETALL %s: %w", w.key, err)
		}
		for _, a := range w.acks {
			checked++
			f := strconv.FormatUint(a.seq, 10)
			if got[f] != fenceValue(w.key, a.seq) {
				lost++
				if len(problems) < 10 {
					problems = append(problems, fmt.Sprintf("%s field %s, acknowledged at %s, reads %q",
						w.key, f, a.at.Format("15:04:05.000"), got[f]))
				}
			}
		}
		for f, v := range got {
			seq, err := strconv.ParseUint(f, 10, 64)
			if err != nil || seq == 0 || seq > w.seq || v != fenceValue(w.key, seq) {
				problems = append(problems, fmt.Sprintf("%s holds %q = %q, which its writer never sent", w.key, f, v))
			}
		}
	}
	return checked, lost, problems, nil
}

// fenceProbe sends one write on a new connection and returns its error.
func fenceProbe(ctx context.Context, addr string) error {
	rdb := crashClient(addr)
	defer rdb.Close()
	err := rdb.Set(ctx, "fence:probe", "x", 0).Err()
	var rerr redis.Error
	if err != nil && !errors.As(err, &rerr) {
		return fmt.Errorf("not an error reply: %w", err)
	}
	return err
}
