package resp

import (
	"context"
	"sync"
	"time"

	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/lsm"
)

// Counting a database's keys is a scan of its metadata rows (DBSIZE is
// O(keys), docs/DESIGN.md), about 0.3 s for a million keys here, and
// monitoring polls INFO all the time: redis-cli --stat every second, an
// exporter every few. So INFO keyspace counts afresh only while counting is
// cheap. Once a count has taken longer than countBudget and found at least
// countLarge keys (the second, so that a hiccup on a small keyspace does
// not make its count stale), INFO serves that count and starts a recount in
// the background when the count is older than countSpacing times its
// duration. Polling INFO then costs at most about 1/countSpacing of a core,
// and the count it serves was started at most about countSpacing+1 of its
// own durations ago (10 s for a million keys). DBSIZE always counts.
const (
	countBudget  = 5 * time.Millisecond
	countSpacing = 30
	countLarge   = 10000
)

// dbCount is one database's line in INFO keyspace.
type dbCount struct{ keys, expires int64 }

// keyCounter holds the last count of every database's keys.
type keyCounter struct {
	budget  time.Duration // countBudget; tests change it
	spacing int           // countSpacing
	large   int64         // countLarge

	mu      sync.Mutex
	counts  [keyspace.NumDBs]dbCount
	at      time.Time     // when the last count started; zero: none to serve
	took    time.Duration // how long it ran
	total   int64         // the keys it found
	epoch   uint64        // bumped by FLUSHDB and FLUSHALL: older counts are void
	running chan struct{} // closed when the count under way ends; nil: none
}

// keyCounts returns the counts INFO keyspace shows.
func (s *Server) keyCounts(ctx context.Context) ([keyspace.NumDBs]dbCount, error) {
	k := &s.keyCount
	k.mu.Lock()
	for {
		if k.serves() {
			age := time.Since(k.at)
			if k.running == nil && age > k.took*time.Duration(k.spacing) {
				s.countInBackground()
			}
			counts := k.counts
			k.mu.Unlock()
			return counts, nil
		}
		if k.running == nil {
			break
		}
		// A count is under way and there is no cheap one to serve: wait.
		done := k.running
		k.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return [keyspace.NumDBs]dbCount{}, ctx.Err()
		}
		k.mu.Lock()
	}
	done, epoch := k.begin()
	k.mu.Unlock()
	return s.countKeys(ctx, epoch, done)
}

// countInBackground starts a count that INFO does not wait for. The
// caller holds k.mu and is a client, so s.conns is above zero and Close
// waits for the count, which its context ends early.
func (s *Server) countInBackground() {
	done, epoch := s.keyCount.begin()
	s.conns.Add(1)
	go func() {
		defer s.conns.Done()
		if _, err := s.countKeys(s.ctx, epoch, done); err != nil && s.ctx.Err() == nil {
			s.log.Warn("counting keys for INFO keyspace", "err", err)
		}
	}()
}

// begin marks a count as under way: done is closed when it ends, and epoch
// tells whether a flush came meanwhile. REQUIRES: k.mu held.
func (k *keyCounter) begin() (done chan struct{}, epoch uint64) {
	k.running = make(chan struct{})
	return k.running, k.epoch
}

// countKeys counts every database and, unless a flush came since epoch,
// keeps the result for keyCounts. It ends the count that done marks.
func (s *Server) countKeys(ctx context.Context, epoch uint64, done chan struct{}) ([keyspace.NumDBs]dbCount, error) {
	var counts [keyspace.NumDBs]dbCount
	start := time.Now()
	var total int64
	var err error
	for db := range keyspace.NumDBs {
		if counts[db].keys, counts[db].expires, err = s.store.KeyStats(ctx, db); err != nil {
			break
		}
		total += counts[db].keys
	}
	k := &s.keyCount
	k.mu.Lock()
	if err == nil && k.epoch == epoch {
		k.counts, k.at, k.took, k.total = counts, start, time.Since(start), total
	}
	k.running = nil
	close(done)
	k.mu.Unlock()
	return counts, err
}

// KeyCountFigures are INFO keyspace's count figures, for INFO's Strata
// section and /metrics: how long the last count took, and how old the count
// INFO serves is (0 while INFO counts afresh).
func (s *Server) KeyCountFigures() []lsm.Figure {
	age, took := s.keyCount.lastCount()
	return []lsm.Figure{
		{Name: "keyspace_count_seconds", Kind: lsm.Gauge, Value: took.Seconds(),
			Help: "How long INFO keyspace's last count of the keys took."},
		{Name: "keyspace_count_age_seconds", Kind: lsm.Gauge, Value: age.Seconds(),
			Help: "How old the key count INFO keyspace serves is; 0 while it counts afresh."},
	}
}

// lastCount says how long the last count took and how old the count INFO
// keyspace would serve is: 0 when INFO would count afresh.
func (k *keyCounter) lastCount() (age, took time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.serves() {
		return 0, k.took
	}
	return time.Since(k.at), k.took
}

// serves reports whether INFO serves the last count rather than counting.
// REQUIRES: k.mu held.
func (k *keyCounter) serves() bool {
	return !k.at.IsZero() && k.took > k.budget && k.total >= k.large
}

// keysFlushed voids the last count: the next INFO counts again.
func (s *Server) keysFlushed() {
	k := &s.keyCount
	k.mu.Lock()
	k.epoch++
	k.at = time.Time{}
	k.mu.Unlock()
}
