package resp

import (
	"github.com/stratakv/strata/keyspace"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// dbKey names a key in one database, as a map key.
type dbKey struct {
	db  int
	key string
}

// watchedKey is one key a client WATCHes: its stamp then (see
// keyspace.Stamp), and whether it had an expiry (if it is gone at EXEC, it
// expired, which counts as a change as in Redis).
type watchedKey struct {
	dbKey
	stamp  keyspace.Stamp
	hadTTL bool
}

func (c *client) unwatchAll() {
	c.watched = nil
	c.watching.Store(false)
}

// waiter is one blocked client, queued on each key it waits for.
type waiter struct {
	wake chan struct{} // capacity 1: a pending wake-up
	keys []dbKey
}

// blockRegistry queues blocked clients per key, first blocked first
// served: a write to a key wakes only the head of its queue, which tries
// its command and, when it got what it waited for, leaves the queue and
// wakes the next (there may be more data). signal is on every write's
// path: one atomic load while nobody is blocked.
type blockRegistry struct {
	mu     sync.Mutex
	n      atomic.Int64
	queues map[dbKey][]*waiter
}

func (b *blockRegistry) init() { b.queues = make(map[dbKey][]*waiter) }

func (b *blockRegistry) add(db int, keys [][]byte) *waiter {
	w := &waiter{wake: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		dk := dbKey{db, string(k)}
		if slices.Contains(w.keys, dk) {
			continue
		}
		w.keys = append(w.keys, dk)
		b.queues[dk] = append(b.queues[dk], w)
	}
	b.n.Add(1)
	return w
}

// remove takes w off its queues and wakes the next waiter of each of its
// keys: w may have been woken and be leaving without acting on it (timed
// out, gone), or served while more data is left. A needless wake-up only
// costs the next waiter a try.
func (b *blockRegistry) remove(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range w.keys {
		q := b.queues[k]
		if i := slices.Index(q, w); i >= 0 {
			q = slices.Delete(q, i, i+1)
		}
		if len(q) == 0 {
			delete(b.queues, k)
		} else {
			b.queues[k] = q
			wakeOne(q[0])
		}
	}
	b.n.Add(-1)
}

func (b *blockRegistry) signal(db int, keys [][]byte) {
	if b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		if q := b.queues[dbKey{db, string(k)}]; len(q) > 0 {
			wakeOne(q[0])
		}
	}
}

func wakeOne(w *waiter) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// pubsubRegistry maps channels and patterns to subscribers.
type pubsubRegistry struct {
	mu       sync.RWMutex
	channels map[string]map[*client]struct{}
	patterns map[string]map[*client]struct{}
}

func (p *pubsubRegistry) init() {
	p.channels = make(map[string]map[*client]struct{})
	p.patterns = make(map[string]map[*client]struct{})
}

func (p *pubsubRegistry) set(pattern bool) map[string]map[*client]struct{} {
	if pattern {
		return p.patterns
	}
	return p.channels
}

func (p *pubsubRegistry) subscribe(c *client, name string, pattern bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.set(pattern)
	if m[name] == nil {
		m[name] = make(map[*client]struct{})
	}
	m[name][c] = struct{}{}
}

func (p *pubsubRegistry) unsubscribe(c *client, name string, pattern bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.set(pattern)
	delete(m[name], c)
	if len(m[name]) == 0 {
		delete(m, name)
	}
}

func (p *pubsubRegistry) unsubscribeAll(c *client) {
	for ch := range c.subs {
		p.unsubscribe(c, ch, false)
	}
	for pat := range c.psubs {
		p.unsubscribe(c, pat, true)
	}
}

// monitorSet is the clients in MONITOR mode.
type monitorSet struct {
	mu      sync.Mutex
	n       atomic.Int64
	clients map[*client]struct{}
}

func (m *monitorSet) active() bool { return m.n.Load() > 0 }

func (m *monitorSet) add(c *client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clients == nil {
		m.clients = make(map[*client]struct{})
	}
	if _, ok := m.clients[c]; !ok {
		m.clients[c] = struct{}{}
		m.n.Add(1)
	}
}

func (m *monitorSet) remove(c *client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.clients[c]; ok {
		delete(m.clients, c)
		m.n.Add(-1)
	}
}

func (m *monitorSet) feed(from *client, args [][]byte) {
	line := monitorLine(from, args)
	m.mu.Lock()
	targets := make([]*client, 0, len(m.clients))
	for c := range m.clients {
		if c != from {
			targets = append(targets, c)
		}
	}
	m.mu.Unlock()
	for _, c := range targets {
		c.push(line)
	}
}

// slowlog keeps the commands slower than a threshold, newest first.
type slowlog struct {
	mu        sync.Mutex
	entries   []slowEntry
	nextID    int64
	threshold atomic.Int64 // microseconds; negative: off
	maxLen    atomic.Int64
}

type slowEntry struct {
	id       int64
	at       time.Time
	duration time.Duration
	args     [][]byte
	addr     string
	name     string
}

func (l *slowlog) init() {
	l.threshold.Store(10000)
	l.maxLen.Store(128)
}

func (l *slowlog) record(c *client, args [][]byte, d time.Duration) {
	th := l.threshold.Load()
	if th < 0 || d.Microseconds() < th {
		return
	}
	kept := make([][]byte, 0, min(len(args), 32))
	for i, a := range args {
		if i == 31 && len(args) > 32 {
			kept = append(kept, []byte("... ("+strconv.Itoa(len(args)-31)+" more arguments)"))
			break
		}
		if len(a) > 128 {
			a = append(a[:128:128], "... ("+strconv.Itoa(len(a)-128)+" more bytes)"...)
		} else {
			a = append([]byte(nil), a...)
		}
		kept = append(kept, a)
	}
	c.info.Lock()
	name := c.info.name
	c.info.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append([]slowEntry{{id: l.nextID, at: time.Now(), duration: d, args: kept, addr: c.addr, name: name}}, l.entries...)
	l.nextID++
	if m := int(l.maxLen.Load()); len(l.entries) > m {
		l.entries = l.entries[:m]
	}
}
