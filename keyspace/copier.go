package keyspace

// copier copies the many small slices of a reply (a list range, a hash's
// fields and values, a set's members) out of the engine into shared chunks,
// so a reply of n elements costs a few allocations instead of n (LRANGE of
// 100 made 100, each also work for the garbage collector). A chunk
// is never reallocated, so every copy stays valid, and each is capped so an
// append to it cannot reach its neighbour. The copies keep their chunks
// alive together, so a copier serves one reply's result (or one walk whose
// callers build such a result), not data that outlives it.
type copier struct{ buf []byte }

const (
	copierFirstChunk = 512
	copierMaxChunk   = 64 << 10
)

// copy returns a copy of b: nil for nil, empty but not nil for empty (a nil
// element would be sent as a null bulk).
func (c *copier) copy(b []byte) []byte {
	switch {
	case b == nil:
		return nil
	case len(b) == 0:
		return []byte{}
	}
	if len(b) > cap(c.buf)-len(c.buf) {
		n := min(max(2*cap(c.buf), copierFirstChunk), copierMaxChunk)
		if len(b) > n/4 {
			return append(make([]byte, 0, len(b)), b...) // large: its own, the chunk stays
		}
		c.buf = make([]byte, 0, n)
	}
	start := len(c.buf)
	c.buf = append(c.buf, b...)
	return c.buf[start:len(c.buf):len(c.buf)]
}
