package sst

import "context"

// Batched point lookups read their data blocks in few requests: the blocks
// that a batch of keys needs and the cache lacks are joined into spans of
// neighbouring blocks, each fetched by one ranged read and put in the
// cache, so that the lookups that follow find them there. An MGET of 100
// consecutive 1 KB values needs some 25 data blocks of one table: 25
// requests one by one, one request as a span.
const (
	// maxSpanBytes bounds one span's read, as it bounds a scan's readahead.
	maxSpanBytes = maxReadahead
	// maxSpanGap is the most bytes of unneeded blocks a span reads to join
	// two needed ones: on an object store another request costs far more
	// than a few kilobytes more of one.
	maxSpanGap = 32 << 10
)

// A Span is a byte range of one table holding data blocks that lookups need
// and the block cache lacks (see Reader.MissingSpans).
type Span struct {
	r      *Reader
	off, n uint64
	blocks []blockHandle // the needed blocks, ascending
}

// Bytes is the span's length: what Load reads.
func (s *Span) Bytes() int64 { return int64(s.n) }

// Blocks is how many needed blocks the span holds.
func (s *Span) Blocks() int { return len(s.blocks) }

// MissingSpans returns, joined into spans, the data blocks that Lookup of
// each of keys would read from the object: blocks already cached, and keys
// the filter rules out or no block can hold, need nothing. Blocks at most
// maxSpanGap apart share a span of at most maxSpanBytes; keys in ascending
// order join best (in any other order a block may be in two spans).
// A Reader without a block cache has nowhere to keep what a span would
// read, so it returns none.
func (r *Reader) MissingSpans(ctx context.Context, keys [][]byte) ([]Span, error) {
	if r.cache == nil || len(keys) == 0 {
		return nil, nil
	}
	f, err := r.filterBlock(ctx)
	if err != nil {
		return nil, err
	}
	x, err := r.indexBlock(ctx)
	if err != nil {
		return nil, err
	}
	var spans []Span
	last := -1 // the index entry of the last block considered
	for _, key := range keys {
		if !f.mayContain(bloomHash(key)) {
			continue
		}
		i := x.search(key)
		if i == x.n || i == last {
			continue
		}
		e := x.entry(i)
		if e.compareFirstKey(key) > 0 {
			continue // between two blocks
		}
		last = i
		h := e.handle
		if _, ok := r.cache.peek(r.id, h.offset); ok {
			continue
		}
		if n := len(spans); n > 0 {
			s := &spans[n-1]
			if h.offset >= s.off+s.n && h.offset-(s.off+s.n) <= maxSpanGap && h.end()-s.off <= maxSpanBytes {
				s.n = h.end() - s.off
				s.blocks = append(s.blocks, h)
				continue
			}
		}
		spans = append(spans, Span{r: r, off: h.offset, n: h.length + trailerLen, blocks: []blockHandle{h}})
	}
	return spans, nil
}

// Load reads the span in one request and puts its needed blocks in the
// block cache, each checked against its checksum and counted one cache
// miss.
func (s *Span) Load(ctx context.Context) error {
	r := s.r
	buf, err := r.read(ctx, int64(s.off), int64(s.n))
	if err != nil {
		return err
	}
	for _, h := range s.blocks {
		b, _, err := decodeBlockOwned(buf[h.offset-s.off:], h.length)
		if err != nil {
			return corruptErr(r.name, int64(h.offset), err)
		}
		r.cache.setFetched(r.id, h.offset, b)
	}
	return nil
}
