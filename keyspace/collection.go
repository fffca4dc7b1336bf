package keyspace

import (
	"bytes"
	"context"
	"errors"

	"github.com/stratakv/strata/lsm"
)

// A collection (hash, list, set, sorted set) is a metadata row holding its
// type, version, expiry and count, and one element row per element under
// elementPrefix(kind, gen, key, version). Commands read the metadata, then
// write element rows and the updated metadata in one batch.

// elementKind returns the element-row keyspace of a collection type.
func elementKind(t Type) (byte, bool) {
	switch t {
	case TypeHash:
		return kindHash, true
	case TypeList:
		return kindList, true
	case TypeSet:
		return kindSet, true
	case TypeZSet:
		return kindZSet, true
	}
	return 0, false
}

// collection is one collection being read or changed by a command.
// REQUIRES: the key's stripe is locked for changes.
type collection struct {
	s      *Store
	gen    uint32
	key    []byte
	meta   Meta
	old    Meta
	exists bool
	// recent: the metadata row is in the engine's mutable memtable, so
	// leaving it unchanged costs reads nothing (see finish)
	recent bool
	// The element rows' common prefix (see prefix): the first plen bytes of
	// pbuf, or long if set (a prefix too long for pbuf, or one made
	// elsewhere). Never a slice of the collection itself, so that a
	// collection can live on its command's stack (see openCollectionInto).
	plen int
	pbuf [48]byte
	long []byte
}

// prefix returns the element rows' common prefix.
func (c *collection) prefix() []byte {
	if c.long != nil {
		return c.long
	}
	return c.pbuf[:c.plen:c.plen]
}

// openCollection loads key as a collection of type t. With create, a
// missing key becomes an empty collection with a new version (written only
// if elements are added).
func (s *Store) openCollection(ctx context.Context, db int, key []byte, t Type, create bool) (*collection, bool, error) {
	c := new(collection)
	ok, err := s.openCollectionInto(c, ctx, db, key, t, create)
	if !ok || err != nil {
		return nil, ok, err
	}
	return c, true, nil
}

// openCollectionInto is openCollection filling *c, which the hot write
// commands (LPUSH, HSET, SADD, ZADD and the pops) keep on their stacks: a
// collection allocated per command was the largest allocation of each
// (288 bytes), and its garbage a share of their CPU.
func (s *Store) openCollectionInto(c *collection, ctx context.Context, db int, key []byte, t Type, create bool) (bool, error) {
	if err := checkDB(db); err != nil {
		return false, err
	}
	gen := s.gen(db)
	m, ok, recent, err := s.getTypedRecent(ctx, gen, key, t)
	if err != nil {
		return false, err
	}
	if !ok && !create {
		return false, nil
	}
	*c = collection{s: s, gen: gen, key: key, meta: m, old: m, exists: ok, recent: recent}
	if !ok {
		c.meta = Meta{Type: t, Version: s.newVersion()}
	}
	kind, _ := elementKind(t)
	if n := elementPrefixLen(key); n <= len(c.pbuf) {
		appendElementPrefix(c.pbuf[:0], kind, gen, key, c.meta.Version)
		c.plen = n
	} else {
		c.long = appendElementPrefix(make([]byte, 0, n), kind, gen, key, c.meta.Version)
	}
	return true, nil
}

// elem returns the engine key of the element with the given suffix.
func (c *collection) elem(suffix []byte) []byte {
	return c.appendElem(make([]byte, 0, len(c.prefix())+len(suffix)), suffix)
}

// appendElem appends the engine key of the element with the given suffix
// to dst: callers that only pass the key on build it on the stack.
func (c *collection) appendElem(dst, suffix []byte) []byte {
	return append(append(dst, c.prefix()...), suffix...)
}

// putElem adds the element row with the given suffix to b. Its key is
// built on the stack: the batch copies it.
func (c *collection) putElem(b *lsm.Batch, suffix, value []byte) {
	var kbuf [128]byte
	b.Put(c.appendElem(kbuf[:0], suffix), value)
}

// deleteElem adds the deletion of the element row with the given suffix
// to b.
func (c *collection) deleteElem(b *lsm.Batch, suffix []byte) {
	var kbuf [128]byte
	b.Delete(c.appendElem(kbuf[:0], suffix))
}

// get reads an element row. Its key is built on the stack.
func (c *collection) get(ctx context.Context, suffix []byte) ([]byte, bool, error) {
	var kbuf [128]byte
	v, err := c.s.get(ctx, c.appendElem(kbuf[:0], suffix))
	if errors.Is(err, lsm.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// has reports whether the element row exists, without copying its value:
// what HSET, SADD and SREM need to know to keep the count.
func (c *collection) has(ctx context.Context, suffix []byte) (bool, error) {
	if c.s.tx != nil {
		_, ok, err := c.get(ctx, suffix)
		return ok, err
	}
	var kbuf [128]byte
	err := c.s.db.View(ctx, c.appendElem(kbuf[:0], suffix), func([]byte) error { return nil })
	if errors.Is(err, lsm.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// finish adds the metadata change to b, deleting the key when the
// collection is empty (as Redis does), and commits.
func (c *collection) finish(ctx context.Context, b *lsm.Batch) error {
	switch {
	case c.meta.Count > 0 && c.recent && sameMeta(c.meta, c.old):
		// Nothing the metadata holds changed (HSET of an existing field,
		// ZADD of a new score): the element rows are the whole change. A
		// row not in the mutable memtable is rewritten all the same, so a
		// collection's next commands find it there: skipping it regardless
		// left HSET on an established hash no cheaper, its metadata reads
		// going to the SSTs.
	case c.meta.Count > 0:
		putMeta(b, c.gen, c.key, c.meta, c.old, c.exists)
	case c.exists:
		deleteMeta(b, c.gen, c.key, c.old)
	}
	return c.s.commit(ctx, b)
}

// sameMeta reports whether a and b encode the same metadata.
func sameMeta(a, b Meta) bool {
	return a.Type == b.Type && a.Version == b.Version && a.ExpireAt == b.ExpireAt && a.Count == b.Count &&
		a.Head == b.Head && a.Tail == b.Tail && bytes.Equal(a.Payload, b.Payload)
}

// scan calls fn for every element row (suffix, value) in order.
func (c *collection) scan(ctx context.Context, fn func(suffix, value []byte) error) error {
	it := c.s.newIter(ctx, lsm.IterOptions{Prefix: c.prefix()})
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key()[len(c.prefix()):], it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// distinct returns items without repeats, first occurrence first: a
// command naming a field or member twice counts it once.
func distinct(items [][]byte) [][]byte {
	if len(items) < 2 { // the common single member, without a map
		return items
	}
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, it := range items {
		if !seen[string(it)] {
			seen[string(it)] = true
			out = append(out, it)
		}
	}
	return out
}
