package resp

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"sync"
)

// SCAN-family cursors (SCAN, HSCAN, SSCAN, ZSCAN).
//
// keyspace.Scan resumes from a cursor of bytes (the smallest key after the
// last one it examined); Redis clients want an unsigned integer, and some
// parse it as a signed 64-bit one. A cursor is therefore a number below
// 2^63 that is one of:
//
//	0                       start a scan; as a reply: the scan is complete
//	len<<56 | bytes         inline: a keyspace cursor of 1 to 7 bytes (keys
//	                        of up to 6 bytes), big-endian in the low 56 bits,
//	                        zero-padded; len is 1..7, so the value is in
//	                        [2^56, 2^59)
//	1<<62 | id              an entry of the cursor table, for longer cursors
//
// Inline cursors need no state: they survive restarts and are never
// evicted. The table is bounded (scanTableEntries entries and
// scanTableBytes bytes of cursors, least recently issued evicted first), so
// a client that waits while thousands of other scans run, or a server
// restart, can lose a long cursor: the next SCAN with it replies "ERR
// invalid cursor", as Redis does for a malformed one, rather than silently
// restarting (which could loop forever) or resuming elsewhere. Table ids
// start at a random point so an id from before a restart is almost surely
// unknown rather than someone else's. Any other number is an invalid
// cursor too; Redis accepts every integer, but only cursors it returned
// are meaningful there as well.
//
// One table serves every Server in the process: ids are unique across
// them, and a cursor is only a position in key order, so using one on
// another server or database is harmless.

const (
	scanInlineMax    = 7
	scanTableFlag    = uint64(1) << 62
	scanTableEntries = 4096
	scanTableBytes   = 64 << 20
)

var scanCursors = newCursorTable(scanTableEntries, scanTableBytes)

// cursorTable maps integer cursor ids to keyspace cursors, bounded, least
// recently issued first out. Entries are issued once and looked up by the
// next SCAN of the same iteration, so insertion order is the LRU order.
type cursorTable struct {
	mu       sync.Mutex
	maxN     int
	maxBytes int
	bytes    int
	next     uint64            // the next id
	ids      map[uint64][]byte // id → cursor
	order    []uint64          // ids in issue order (a ring: head is the oldest)
	head     int
}

func newCursorTable(maxN, maxBytes int) *cursorTable {
	return &cursorTable{
		maxN: maxN, maxBytes: maxBytes,
		next: rand.Uint64() >> 3, // room below 2^62 for a long while
		ids:  make(map[uint64][]byte),
	}
}

// encode returns the integer text for keyspace cursor cur (nil: "0").
func (t *cursorTable) encode(cur []byte) string {
	switch {
	case cur == nil:
		return "0"
	case len(cur) >= 1 && len(cur) <= scanInlineMax:
		v := uint64(len(cur)) << 56
		for i, b := range cur {
			v |= uint64(b) << (48 - 8*i)
		}
		return strconv.FormatUint(v, 10)
	}
	return strconv.FormatUint(scanTableFlag|t.put(cur), 10)
}

// decode returns the keyspace cursor for the integer text arg: nil for
// "0" (and "", which Redis's strtoul reads as 0), false if arg is not a
// cursor encode made (or one since evicted).
func (t *cursorTable) decode(arg []byte) ([]byte, bool) {
	if len(arg) == 0 {
		return nil, true
	}
	if len(arg) > 20 || arg[0] < '0' || arg[0] > '9' {
		return nil, false
	}
	v, err := strconv.ParseUint(string(arg), 10, 64)
	switch {
	case err != nil:
		return nil, false
	case v == 0:
		return nil, true
	case v&^(scanTableFlag-1) == scanTableFlag:
		return t.get(v &^ scanTableFlag)
	case v>>59 != 0:
		return nil, false
	}
	n := int(v >> 56)
	if n == 0 || v&(1<<(56-8*n)-1) != 0 {
		return nil, false
	}
	cur := make([]byte, n)
	for i := range cur {
		cur[i] = byte(v >> (48 - 8*i))
	}
	return cur, true
}

func (t *cursorTable) put(cur []byte) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := t.next & (scanTableFlag - 1)
	t.next++
	t.ids[id] = bytes.Clone(cur)
	t.bytes += len(cur)
	t.order = append(t.order, id)
	for len(t.ids) > t.maxN || (t.bytes > t.maxBytes && len(t.ids) > 1) {
		old := t.order[t.head]
		t.head++
		t.bytes -= len(t.ids[old])
		delete(t.ids, old)
	}
	if t.head > len(t.order)/2 { // compact the ring now and then
		t.order = append(t.order[:0], t.order[t.head:]...)
		t.head = 0
	}
	return id
}

func (t *cursorTable) get(id uint64) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, ok := t.ids[id]
	return cur, ok
}
