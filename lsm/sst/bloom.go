package sst

import (
	"math"

	"github.com/cespare/xxhash/v2"
)

// Part of the format: the filter probes and hash (format.go: "Filter block").
const (
	maxBloomProbes = 30
	minBloomBits   = 64 // tiny filters have too few bits to mean anything
	// maxBloomBits keeps a probe's position (x*m)>>32 exact in 64 bits.
	maxBloomBits = 1 << 32
)

// bloomHash is the one hash of a user key the filter uses.
func bloomHash(key []byte) uint64 { return xxhash.Sum64(key) }

// bloomProbes is k = bitsPerKey * ln 2, the false-positive optimum.
func bloomProbes(bitsPerKey int) int {
	k := int(math.Round(float64(bitsPerKey) * math.Ln2))
	return min(max(k, 1), maxBloomProbes)
}

// appendBloomFilter builds a filter block over the hashes of distinct keys.
// It yields through y now and then: a filter of millions of keys takes
// milliseconds.
func appendBloomFilter(dst []byte, hashes []uint64, bitsPerKey int, y *Yielder) []byte {
	if len(hashes) == 0 || bitsPerKey <= 0 {
		return dst
	}
	nbits := min(max(uint64(len(hashes))*uint64(bitsPerKey), minBloomBits), maxBloomBits)
	nbytes := (nbits + 7) / 8
	nbits = nbytes * 8
	start := len(dst)
	dst = append(dst, make([]byte, nbytes)...)
	bits := dst[start:]
	k := bloomProbes(bitsPerKey)
	for n, h := range hashes {
		if n%(16*yieldRows) == 0 && n > 0 {
			y.Yield()
		}
		h1, h2 := uint32(h), uint32(h>>32)
		for i := 0; i < k; i++ {
			pos := (uint64(h1) * nbits) >> 32
			bits[pos>>3] |= 1 << (pos & 7)
			h1 += h2
		}
	}
	return append(dst, byte(k))
}

// bloomFilter is a decoded filter block; empty means "no filter".
type bloomFilter []byte

// parseBloomFilter validates a filter block.
func parseBloomFilter(b []byte) (bloomFilter, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if k := b[len(b)-1]; len(b) < 2 || k == 0 || k > maxBloomProbes || uint64(len(b)-1) > maxBloomBits/8 {
		return nil, errBadFilter
	}
	return bloomFilter(b), nil
}

// mayContain reports whether the key with hash h may be in the filter.
// Without a filter every key may be present.
func (f bloomFilter) mayContain(h uint64) bool {
	if len(f) < 2 {
		return true
	}
	bits := f[:len(f)-1]
	nbits := uint64(len(bits)) * 8
	k := int(f[len(f)-1])
	h1, h2 := uint32(h), uint32(h>>32)
	for i := 0; i < k; i++ {
		pos := (uint64(h1) * nbits) >> 32
		if bits[pos>>3]&(1<<(pos&7)) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}
