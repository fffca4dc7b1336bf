package resp

import (
	"context"
	"math"
)

// HSCAN, SSCAN and ZSCAN share their cursor, options and reply head; the
// cursors are scanCursors (cursor.go).

// elemScanStart does what the element scans check, in Redis's order: the
// cursor, then the key (a missing key is an empty scan whatever the
// options, a key of another type is WRONGTYPE), then the options. size is
// the type's count command. ok=false: the reply is written.
func (c *call) elemScanStart(size func(context.Context, int, []byte) (int64, error)) (cursor []byte, o elemScanOpts, ok bool) {
	cursor, ok = scanCursors.decode(c.arg(2))
	if !ok {
		c.errorf("ERR invalid cursor")
		return nil, o, false
	}
	n, err := size(c.ctx, c.db, c.arg(1))
	if c.fail(err) {
		return nil, o, false
	}
	if n == 0 {
		c.elemScanReply(nil, 0)
		return nil, o, false
	}
	o, ok = c.elemScanOptions(3)
	return cursor, o, ok
}

// keepEmptyNames keeps the items whose name is empty: MATCH "" matches only
// the empty name for Redis, while the keyspace reads an empty pattern as
// none.
func keepEmptyNames[T any](items []T, name func(T) []byte) []T {
	kept := items[:0]
	for _, it := range items {
		if len(name(it)) == 0 {
			kept = append(kept, it)
		}
	}
	return kept
}

// elemScanOpts are the parsed options of HSCAN and SSCAN (ZSCAN's too).
type elemScanOpts struct {
	match     string // "" or "*": every element
	emptyOnly bool   // MATCH "": only the empty name matches
	count     int
}

// elemScanOptions parses [MATCH pattern] [COUNT count] from args[i:] as
// Redis's scanGenericCommand does: later options win, a COUNT below 1 is a
// syntax error, TYPE is SCAN's only.
func (c *call) elemScanOptions(i int) (elemScanOpts, bool) {
	o := elemScanOpts{count: 10}
	for ; i < c.nargs(); i += 2 {
		switch {
		case c.is(i, "count") && i+1 < c.nargs():
			n, ok := c.intArg(i + 1)
			if !ok {
				return o, false
			}
			if n < 1 {
				c.syntaxError()
				return o, false
			}
			o.count = int(min(n, math.MaxInt32))
		case c.is(i, "match") && i+1 < c.nargs():
			// The keyspace reads an empty pattern as "no pattern"; for
			// Redis it matches only the empty name.
			o.match, o.emptyOnly = c.argStr(i+1), len(c.arg(i+1)) == 0
		default:
			c.syntaxError()
			return o, false
		}
	}
	return o, true
}

// elemScanReply writes the head of a SCAN-family reply: the integer cursor
// for keyspace cursor next (nil: done), then an array of n elements, which
// the caller writes.
func (c *call) elemScanReply(next []byte, n int) {
	c.array(2)
	c.bulkString(scanCursors.encode(next))
	c.array(n)
}
