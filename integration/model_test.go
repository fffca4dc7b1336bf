package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/stratakv/strata/lsm"
)

// expiryTolerance is how close to a read's clock an expiry may be for the
// key to read either way (invariant 4).
const expiryTolerance = 100 // ms

// op is one change of a batch, as the model records it.
type op struct {
	key      string
	value    []byte // nil for a delete
	expireAt int64  // ms since the epoch by the engine clock; 0 = never
}

// model is the acknowledged state of every key ever written: the newest
// acknowledged change per key. Keys are striped across writers, one writer
// per key, so the newest acknowledged change is the engine's newest row.
type model struct {
	mu   sync.Mutex
	rows map[string]op
}

func newModel() *model { return &model{rows: make(map[string]op)} }

// apply records the changes of one acknowledged batch, in batch order.
func (m *model) apply(ops []op) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range ops {
		m.rows[o.key] = o
	}
}

// keys returns every key ever written, sorted.
func (m *model) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// check compares one read of key with the model. The read saw the engine
// clock somewhere in [before, after]; found and got are what it returned.
func (m *model) check(key string, got []byte, found bool, before, after int64) error {
	m.mu.Lock()
	o, written := m.rows[key]
	m.mu.Unlock()
	switch {
	case found && !written:
		return fmt.Errorf("%s: present (%s), but never written", key, short(got))
	case found && o.value == nil:
		return fmt.Errorf("%s: present (%s), want deleted", key, short(got))
	case found && !bytes.Equal(got, o.value):
		return fmt.Errorf("%s: value %s, want %s (expire_at %d)", key, short(got), short(o.value), o.expireAt)
	case found && o.expireAt != 0 && o.expireAt <= before-expiryTolerance:
		return fmt.Errorf("%s: present, but expired at %d; the read's clock was >= %d", key, o.expireAt, before)
	case !found && written && o.value != nil && (o.expireAt == 0 || o.expireAt > after+expiryTolerance):
		return fmt.Errorf("%s: absent, want %s (expire_at %d; the read's clock was <= %d)", key, short(o.value), o.expireAt, after)
	}
	return nil
}

// checkGet reads key with db.Get and checks it against the model.
func (m *model) checkGet(ctx context.Context, db *lsm.DB, key string) error {
	before := db.Now()
	v, err := db.Get(ctx, []byte(key))
	after := db.Now()
	found := err == nil
	if err != nil && !errors.Is(err, lsm.ErrNotFound) {
		return fmt.Errorf("get %s: %w", key, err)
	}
	return m.check(key, v, found, before, after)
}

// census counts the model's keys by state at the engine clock now.
type census struct{ live, expired, deleted int }

func (m *model) census(now int64) census {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c census
	for _, o := range m.rows {
		switch {
		case o.value == nil:
			c.deleted++
		case o.expireAt != 0 && o.expireAt <= now:
			c.expired++
		default:
			c.live++
		}
	}
	return c
}

// short abbreviates a value for error messages: values begin with their key
// and the writer's op number, which is what tells two of them apart.
func short(v []byte) string {
	if len(v) > 32 {
		return fmt.Sprintf("%q…(%d bytes)", v[:32], len(v))
	}
	return fmt.Sprintf("%q", v)
}
