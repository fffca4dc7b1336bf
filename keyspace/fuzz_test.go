package keyspace

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stratakv/strata/lsm/sst"
)

// The fuzz targets check, for arbitrary input, that each decoder never
// panics, fails only with corruption, and accepts only what its encoder
// produces: whatever decodes re-encodes to the same bytes, so every row
// has exactly one encoding. They are seeded with valid encodings of every
// kind (a fixed seed: the corpus must not change between runs).

// formatFuzzRand is the fixed-seed generator of the seed corpora.
func formatFuzzRand() *rand.Rand { return rand.New(rand.NewPCG(7, 7)) }

// formatFuzzCheckErr fails unless err is nil or wraps sst.ErrCorruption;
// it reports whether err is nil.
func formatFuzzCheckErr(t *testing.T, name string, in []byte, err error) bool {
	t.Helper()
	if err != nil && !errors.Is(err, sst.ErrCorruption) {
		t.Fatalf("%s(%x): error without corruption: %v", name, in, err)
	}
	return err == nil
}

func FuzzDecodeMeta(f *testing.F) {
	r := formatFuzzRand()
	for range 64 {
		f.Add(appendMetaValue(nil, formatRandMeta(r)))
	}
	f.Add(appendMetaValue(nil, Meta{Type: TypeString}))
	f.Add(appendMetaValue(nil, Meta{Type: TypeList, Head: listInitialPosition, Tail: listInitialPosition}))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMeta(data)
		if !formatFuzzCheckErr(t, "decodeMeta", data, err) {
			return
		}
		if re := appendMetaValue(nil, m); !bytes.Equal(re, data) {
			t.Fatalf("decodeMeta accepted %x, which re-encodes as %x", data, re)
		}
	})
}

func FuzzDecodeMetaKey(f *testing.F) {
	r := formatFuzzRand()
	for range 32 {
		f.Add(appendMetaKey(nil, formatRandGen(r), formatRandBytes(r)))
	}
	f.Add(metaPrefix(0))
	f.Fuzz(func(t *testing.T, data []byte) {
		gen, key, err := decodeMetaKey(data)
		if !formatFuzzCheckErr(t, "decodeMetaKey", data, err) {
			return
		}
		if re := appendMetaKey(nil, gen, key); !bytes.Equal(re, data) {
			t.Fatalf("decodeMetaKey accepted %x, which re-encodes as %x", data, re)
		}
	})
}

// FuzzDecodeElementKey checks decodeElementKey and, on every input, the
// decoder of each kind: exactly the one of the row's kind (and sorted-set
// tag) accepts it, and it re-encodes to the input.
func FuzzDecodeElementKey(f *testing.F) {
	r := formatFuzzRand()
	for range 96 {
		f.Add(formatRandElement(r).enc)
	}
	for _, tu := range formatAdversarialTuples()[:20] {
		f.Add(appendHashField(nil, tu.gen, tu.key, tu.version, []byte("f")))
		f.Add(appendZScore(nil, tu.gen, tu.key, tu.version, math.Inf(-1), tu.key))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kind, gen, key, version, rest, err := decodeElementKey(data)
		ok := formatFuzzCheckErr(t, "decodeElementKey", data, err)
		if ok {
			if re := append(elementPrefix(kind, gen, key, version), rest...); !bytes.Equal(re, data) {
				t.Fatalf("decodeElementKey accepted %x, which re-encodes as %x", data, re)
			}
		}
		is := func(k, tag byte) bool {
			return ok && kind == k && (k != kindZSet || rest[0] == tag)
		}
		expect := func(name string, want bool, err error, re func() []byte) {
			t.Helper()
			if got := formatFuzzCheckErr(t, name, data, err); got != want {
				t.Fatalf("%s(%x): accepted = %v, want %v (err %v)", name, data, got, want, err)
			}
			if want && !bytes.Equal(re(), data) {
				t.Fatalf("%s accepted %x, which re-encodes as %x", name, data, re())
			}
		}
		g, k, v, field, err := decodeHashField(data)
		expect("decodeHashField", is(kindHash, 0), err, func() []byte { return appendHashField(nil, g, k, v, field) })
		g, k, v, pos, err := decodeListIndex(data)
		expect("decodeListIndex", is(kindList, 0), err, func() []byte { return appendListIndex(nil, g, k, v, pos) })
		g, k, v, member, err := decodeSetMember(data)
		expect("decodeSetMember", is(kindSet, 0), err, func() []byte { return appendSetMember(nil, g, k, v, member) })
		g, k, v, member, err = decodeZMember(data)
		expect("decodeZMember", is(kindZSet, zsetMemberTag), err, func() []byte { return appendZMember(nil, g, k, v, member) })
		g, k, v, score, member, err := decodeZScore(data)
		expect("decodeZScore", is(kindZSet, zsetScoreTag), err, func() []byte { return appendZScore(nil, g, k, v, score, member) })
	})
}

func FuzzDecodeExpiryKey(f *testing.F) {
	r := formatFuzzRand()
	for range 32 {
		f.Add(appendExpiryKey(nil, formatRandGen(r), formatRandExpireAt(r), formatRandBytes(r)))
	}
	f.Add(appendExpiryKey(nil, 0, 1, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		gen, at, key, err := decodeExpiryKey(data)
		if !formatFuzzCheckErr(t, "decodeExpiryKey", data, err) {
			return
		}
		if re := appendExpiryKey(nil, gen, at, key); !bytes.Equal(re, data) {
			t.Fatalf("decodeExpiryKey accepted %x, which re-encodes as %x", data, re)
		}
	})
}

// FuzzDecodeScore covers both score encodings: the sortable one of score
// rows and the plain one of member rows.
func FuzzDecodeScore(f *testing.F) {
	r := formatFuzzRand()
	for _, s := range formatScoreEdges {
		enc := encodeScore(s)
		f.Add(enc[:])
		f.Add(appendScoreValue(nil, s))
	}
	for range 16 {
		enc := encodeScore(formatRandScore(r))
		f.Add(append(enc[:], formatRandBytes(r)...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, rest, err := decodeScore(data)
		if formatFuzzCheckErr(t, "decodeScore", data, err) {
			if enc := encodeScore(s); !bytes.Equal(append(enc[:], rest...), data) {
				t.Fatalf("decodeScore accepted %x, which re-encodes as %x", data, enc)
			}
		}
		s, err = decodeScoreValue(data)
		if formatFuzzCheckErr(t, "decodeScoreValue", data, err) {
			if re := appendScoreValue(nil, s); !bytes.Equal(re, data) {
				t.Fatalf("decodeScoreValue accepted %x, which re-encodes as %x", data, re)
			}
		}
	})
}
