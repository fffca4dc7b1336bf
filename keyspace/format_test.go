package keyspace

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/lsm/sst"
)

// The helpers of this file are prefixed with "format" because other test
// files of the package are written independently.

// formatTestRand returns a generator seeded from KEYSPACE_FORMAT_SEED or
// the clock, and logs the seed so a failure can be replayed.
func formatTestRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KEYSPACE_FORMAT_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KEYSPACE_FORMAT_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with KEYSPACE_FORMAT_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// formatAlphabet makes random keys collide with each other and with the
// bytes of the encoding (keyspace bytes, tags, 0x00 and 0xff runs).
var formatAlphabet = []byte{0x00, 0x01, 0xff, 0x80, 0x7f, 'a', 'b', 'm', 'h', 'l', 's', 'z', 'x', 'y', 'M', 'S'}

// formatRandBytes returns adversarial bytes: mostly short, from a small
// alphabet, sometimes empty or long.
func formatRandBytes(r *rand.Rand) []byte {
	var n int
	switch x := r.IntN(10); {
	case x < 5:
		n = r.IntN(5)
	case x < 9:
		n = 5 + r.IntN(12)
	default:
		n = r.IntN(300)
	}
	b := make([]byte, n)
	for i := range b {
		if r.IntN(10) < 7 {
			b[i] = formatAlphabet[r.IntN(len(formatAlphabet))]
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

// formatRandUint64 returns a random uint64, often an edge value.
func formatRandUint64(r *rand.Rand) uint64 {
	edges := []uint64{0, 1, 2, 255, 256, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, 1<<63 + 1, math.MaxUint64 - 1, math.MaxUint64}
	if r.IntN(4) == 0 {
		return edges[r.IntN(len(edges))]
	}
	return r.Uint64() >> r.IntN(64)
}

func formatRandGen(r *rand.Rand) uint32 {
	if r.IntN(2) == 0 {
		return uint32(r.IntN(20))
	}
	return uint32(formatRandUint64(r))
}

// formatRandExpireAt returns a valid expiry-index time (> 0).
func formatRandExpireAt(r *rand.Rand) int64 {
	if r.IntN(4) == 0 {
		return []int64{1, 2, 1 << 31, 1<<32 + 1, math.MaxInt64 - 1, math.MaxInt64}[r.IntN(6)]
	}
	return 1 + r.Int64N(math.MaxInt64)>>r.IntN(63)
}

// formatRandMeta returns a random storable Meta.
func formatRandMeta(r *rand.Rand) Meta {
	m := Meta{Type: Type(1 + r.IntN(5)), Version: formatRandUint64(r)}
	if r.IntN(2) == 0 {
		m.ExpireAt = formatRandExpireAt(r)
	}
	switch m.Type {
	case TypeString:
		m.Payload = formatRandBytes(r)
	case TypeList:
		switch r.IntN(3) {
		case 0:
			m.Head = listInitialPosition - r.Uint64N(1000)
		case 1:
			m.Head = listInitialPosition + r.Uint64N(1000)
		default:
			m.Head = r.Uint64()
		}
		n := r.Uint64N(min(math.MaxUint64-m.Head, math.MaxInt64) + 1)
		if r.IntN(2) == 0 {
			n = min(n, 100)
		}
		m.Count, m.Tail = int64(n), m.Head+n
	default:
		m.Count = int64(formatRandUint64(r) >> 1)
	}
	return m
}

// formatRandScore returns a random non-NaN score: an edge value, any bit
// pattern, or an ordinary number.
func formatRandScore(r *rand.Rand) float64 {
	switch r.IntN(3) {
	case 0:
		return formatScoreEdges[r.IntN(len(formatScoreEdges))]
	case 1:
		for {
			if f := math.Float64frombits(r.Uint64()); !math.IsNaN(f) {
				return f
			}
		}
	}
	return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(20)))
}

// formatScoreEdges are scores in ascending order (-0 and 0 are equal).
var formatScoreEdges = []float64{
	math.Inf(-1),
	-math.MaxFloat64,
	-1e300,
	-2,
	-1,
	-0.5,
	-0x1p-1022,               // smallest normal
	-(0x1p-1022 - 0x1p-1074), // largest subnormal
	-0x1p-1073,
	-0x1p-1074, // smallest subnormal
	math.Copysign(0, -1),
	0,
	0x1p-1074,
	0x1p-1073,
	0x1p-1022 - 0x1p-1074,
	0x1p-1022,
	0.5,
	1,
	2,
	1e300,
	math.MaxFloat64,
	math.Inf(1),
}

func formatMetaEqual(a, b Meta) bool {
	return a.Type == b.Type && a.Version == b.Version && a.ExpireAt == b.ExpireAt && a.Count == b.Count &&
		a.Head == b.Head && a.Tail == b.Tail && bytes.Equal(a.Payload, b.Payload)
}

func formatMustCorrupt(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: decoded, want corruption", what)
	}
	if !errors.Is(err, sst.ErrCorruption) {
		t.Fatalf("%s: error %v does not wrap sst.ErrCorruption", what, err)
	}
	if !strings.Contains(err.Error(), "keyspace: ") {
		t.Fatalf("%s: error %q lacks the package prefix", what, err)
	}
}

func formatSign(c int) int { return cmp.Compare(c, 0) }

func TestFormatTypeString(t *testing.T) {
	want := map[Type]string{TypeNone: "none", TypeString: "string", TypeHash: "hash", TypeList: "list", TypeSet: "set", TypeZSet: "zset", 6: "unknown", 255: "unknown"}
	for typ, s := range want {
		if got := typ.String(); got != s {
			t.Errorf("Type(%d).String() = %q, want %q", typ, got, s)
		}
	}
}

// TestFormatGolden pins the bytes of every row kind: the format never
// changes, it only gets new versions.
func TestFormatGolden(t *testing.T) {
	k := []byte("k")
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"system gen", systemGenKey(3), "79 00 03"},
		{"system max gen", systemMaxGenKey(), "79 01"},
		{"gen value", appendGenValue(nil, 16), "00000010"},
		{"meta prefix", metaPrefix(1), "6d 00000001"},
		{"meta key", appendMetaKey(nil, 0x01020304, []byte("ab")), "6d 01020304 6162"},
		{"string meta", appendMetaValue(nil, Meta{Type: TypeString, Version: 7, ExpireAt: 0x0102, Payload: []byte("v")}),
			"01 01 0000000000000007 0000000000000102 76"},
		{"hash meta", appendMetaValue(nil, Meta{Type: TypeHash, Version: 1, Count: 3}),
			"01 02 0000000000000001 0000000000000000 0000000000000003"},
		{"set meta", appendMetaValue(nil, Meta{Type: TypeSet, Version: 1, Count: 3}),
			"01 04 0000000000000001 0000000000000000 0000000000000003"},
		{"zset meta", appendMetaValue(nil, Meta{Type: TypeZSet, Version: 1, Count: 3}),
			"01 05 0000000000000001 0000000000000000 0000000000000003"},
		{"list meta", appendMetaValue(nil, Meta{Type: TypeList, Version: 2, Count: 2, Head: 1<<63 - 1, Tail: 1<<63 + 1}),
			"01 03 0000000000000002 0000000000000000 0000000000000002 7fffffffffffffff 8000000000000001"},
		{"element prefix", elementPrefix(kindHash, 1, k, 9), "68 00000001 00000001 6b 0000000000000009"},
		{"hash field", appendHashField(nil, 1, k, 9, []byte("f")), "68 00000001 00000001 6b 0000000000000009 66"},
		{"list index", appendListIndex(nil, 1, k, 9, listInitialPosition), "6c 00000001 00000001 6b 0000000000000009 8000000000000000"},
		{"set member", appendSetMember(nil, 1, k, 9, []byte("m")), "73 00000001 00000001 6b 0000000000000009 6d"},
		{"zset member", appendZMember(nil, 1, k, 9, []byte("m")), "7a 00000001 00000001 6b 0000000000000009 4d 6d"},
		{"zset score", appendZScore(nil, 1, k, 9, 1.5, []byte("m")), "7a 00000001 00000001 6b 0000000000000009 53 bff8000000000000 6d"},
		{"zset neg score", appendZScore(nil, 1, k, 9, -1.5, nil), "7a 00000001 00000001 6b 0000000000000009 53 4007ffffffffffff"},
		{"zset score value", appendScoreValue(nil, 1.5), "3ff8000000000000"},
		{"zset -0 value", appendScoreValue(nil, math.Copysign(0, -1)), "0000000000000000"},
		{"expiry prefix", expiryPrefix(1), "78 00000001"},
		{"expiry key", appendExpiryKey(nil, 1, 1000, k), "78 00000001 00000000000003e8 6b"},
		{"expiry value", appendExpiryValue(nil, 9), "0000000000000009"},
	}
	for _, c := range cases {
		want, err := hex.DecodeString(strings.ReplaceAll(c.want, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.got, want) {
			t.Errorf("%s: got %x, want %x", c.name, c.got, want)
		}
	}
	scores := []struct {
		f    float64
		want string
	}{
		{math.Inf(-1), "000fffffffffffff"},
		{math.Copysign(0, -1), "8000000000000000"},
		{0, "8000000000000000"},
		{math.Inf(1), "fff0000000000000"},
	}
	for _, c := range scores {
		if got := encodeScore(c.f); hex.EncodeToString(got[:]) != c.want {
			t.Errorf("encodeScore(%v) = %x, want %s", c.f, got, c.want)
		}
	}
	if listInitialPosition != 1<<63 || metaFormatVersion != 1 || initialMaxGen != 15 {
		t.Errorf("format constants changed")
	}
}

func TestFormatMetaValueRoundTrip(t *testing.T) {
	r := formatTestRand(t)
	for range 20000 {
		m := formatRandMeta(r)
		dst := formatRandBytes(r)
		keep := slices.Clone(dst)
		enc := appendMetaValue(dst, m)
		if !bytes.Equal(enc[:len(keep)], keep) {
			t.Fatalf("appendMetaValue changed dst")
		}
		got, err := decodeMeta(enc[len(keep):])
		if err != nil {
			t.Fatalf("decodeMeta(%+v): %v", m, err)
		}
		if !formatMetaEqual(got, m) {
			t.Fatalf("round trip: got %+v, want %+v", got, m)
		}
	}
	// Fields that do not belong to the type are not stored.
	m := Meta{Type: TypeHash, Version: 3, Count: 2, Head: 5, Tail: 9, Payload: []byte("p")}
	got, err := decodeMeta(appendMetaValue(nil, m))
	if err != nil || !formatMetaEqual(got, Meta{Type: TypeHash, Version: 3, Count: 2}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	got, err = decodeMeta(appendMetaValue(nil, Meta{Type: TypeString}))
	if err != nil || got.Payload == nil || len(got.Payload) != 0 {
		t.Fatalf("empty string: got %+v, %v; want an empty, non-nil payload", got, err)
	}
}

func TestFormatMetaKeyRoundTripAndOrder(t *testing.T) {
	r := formatTestRand(t)
	type entry struct {
		gen uint32
		key []byte
		enc []byte
	}
	var entries []entry
	for range 5000 {
		gen, key := uint32(r.IntN(3)), formatRandBytes(r)
		if r.IntN(10) == 0 {
			gen = formatRandGen(r)
		}
		enc := appendMetaKey(nil, gen, key)
		g, k, err := decodeMetaKey(enc)
		if err != nil || g != gen || !bytes.Equal(k, key) {
			t.Fatalf("decodeMetaKey(%x) = %d, %x, %v; want %d, %x", enc, g, k, err, gen, key)
		}
		if !bytes.HasPrefix(enc, metaPrefix(gen)) {
			t.Fatalf("meta key %x not under metaPrefix(%d)", enc, gen)
		}
		entries = append(entries, entry{gen, key, enc})
	}
	for range 50000 {
		a, b := entries[r.IntN(len(entries))], entries[r.IntN(len(entries))]
		want := cmp.Compare(a.gen, b.gen)
		if want == 0 {
			want = bytes.Compare(a.key, b.key)
		}
		if got := formatSign(bytes.Compare(a.enc, b.enc)); got != want {
			t.Fatalf("meta keys (%d,%x) vs (%d,%x): compare %d, want %d", a.gen, a.key, b.gen, b.key, got, want)
		}
		if a.gen != b.gen && bytes.HasPrefix(a.enc, metaPrefix(b.gen)) {
			t.Fatalf("meta key of gen %d under metaPrefix(%d)", a.gen, b.gen)
		}
	}
	// metaPrefix is the key of the empty Redis key, the smallest of its
	// generation.
	if g, k, err := decodeMetaKey(metaPrefix(7)); err != nil || g != 7 || len(k) != 0 {
		t.Fatalf("decodeMetaKey(metaPrefix(7)) = %d, %x, %v", g, k, err)
	}
}

// formatElement is one element row key built by an encoder, with what its
// decoders must return.
type formatElement struct {
	kind    byte
	gen     uint32
	key     []byte
	version uint64
	tag     byte    // sorted sets: zsetMemberTag or zsetScoreTag
	suffix  []byte  // field, member
	pos     uint64  // list
	score   float64 // sorted-set score rows
	enc     []byte
}

func formatRandElement(r *rand.Rand) formatElement {
	e := formatElement{
		kind:    []byte{kindHash, kindList, kindSet, kindZSet}[r.IntN(4)],
		gen:     formatRandGen(r),
		key:     formatRandBytes(r),
		version: formatRandUint64(r),
		suffix:  formatRandBytes(r),
	}
	switch e.kind {
	case kindHash:
		e.enc = appendHashField(nil, e.gen, e.key, e.version, e.suffix)
	case kindSet:
		e.enc = appendSetMember(nil, e.gen, e.key, e.version, e.suffix)
	case kindList:
		e.suffix, e.pos = nil, formatRandUint64(r)
		e.enc = appendListIndex(nil, e.gen, e.key, e.version, e.pos)
	case kindZSet:
		if r.IntN(2) == 0 {
			e.tag = zsetMemberTag
			e.enc = appendZMember(nil, e.gen, e.key, e.version, e.suffix)
		} else {
			e.tag, e.score = zsetScoreTag, formatRandScore(r)
			if e.score == 0 {
				e.score = 0 // stored as +0
			}
			e.enc = appendZScore(nil, e.gen, e.key, e.version, e.score, e.suffix)
		}
	}
	return e
}

// check decodes e.enc with decodeElementKey and the decoder of its kind,
// and checks that the decoders of the other kinds reject it.
func (e *formatElement) check(t *testing.T) {
	t.Helper()
	kind, gen, key, version, rest, err := decodeElementKey(e.enc)
	if err != nil || kind != e.kind || gen != e.gen || !bytes.Equal(key, e.key) || version != e.version {
		t.Fatalf("decodeElementKey(%x) = %q, %d, %x, %d, %v; want %q, %d, %x, %d", e.enc, kind, gen, key, version, err, e.kind, e.gen, e.key, e.version)
	}
	if want := elementPrefix(e.kind, e.gen, e.key, e.version); !bytes.HasPrefix(e.enc, want) || !bytes.Equal(rest, e.enc[len(want):]) {
		t.Fatalf("element %x: prefix %x, rest %x", e.enc, want, rest)
	}
	check := func(name string, ok bool, gen uint32, key []byte, version uint64, err error) {
		t.Helper()
		if !ok {
			if !errors.Is(err, sst.ErrCorruption) {
				t.Fatalf("%s(%x) of a %q row: err %v, want corruption", name, e.enc, e.kind, err)
			}
			return
		}
		if err != nil || gen != e.gen || !bytes.Equal(key, e.key) || version != e.version {
			t.Fatalf("%s(%x) = %d, %x, %d, %v", name, e.enc, gen, key, version, err)
		}
	}
	g, k, v, field, err := decodeHashField(e.enc)
	check("decodeHashField", e.kind == kindHash, g, k, v, err)
	if err == nil && !bytes.Equal(field, e.suffix) {
		t.Fatalf("decodeHashField: field %x, want %x", field, e.suffix)
	}
	g, k, v, member, err := decodeSetMember(e.enc)
	check("decodeSetMember", e.kind == kindSet, g, k, v, err)
	if err == nil && !bytes.Equal(member, e.suffix) {
		t.Fatalf("decodeSetMember: member %x, want %x", member, e.suffix)
	}
	g, k, v, pos, err := decodeListIndex(e.enc)
	check("decodeListIndex", e.kind == kindList, g, k, v, err)
	if err == nil && pos != e.pos {
		t.Fatalf("decodeListIndex: pos %d, want %d", pos, e.pos)
	}
	g, k, v, member, err = decodeZMember(e.enc)
	check("decodeZMember", e.kind == kindZSet && e.tag == zsetMemberTag, g, k, v, err)
	if err == nil && !bytes.Equal(member, e.suffix) {
		t.Fatalf("decodeZMember: member %x, want %x", member, e.suffix)
	}
	g, k, v, score, member, err := decodeZScore(e.enc)
	check("decodeZScore", e.kind == kindZSet && e.tag == zsetScoreTag, g, k, v, err)
	if err == nil && (!bytes.Equal(member, e.suffix) || math.Float64bits(score) != math.Float64bits(e.score)) {
		t.Fatalf("decodeZScore: %v %x, want %v %x", score, member, e.score, e.suffix)
	}
}

func TestFormatElementRoundTrip(t *testing.T) {
	r := formatTestRand(t)
	for range 20000 {
		e := formatRandElement(r)
		e.check(t)
	}
	// The prefix helpers agree with the row encoders.
	k := []byte("key")
	if !bytes.HasPrefix(appendZMember(nil, 1, k, 2, []byte("m")), zsetMemberPrefix(nil, 1, k, 2)) ||
		!bytes.HasPrefix(appendZScore(nil, 1, k, 2, 3, []byte("m")), zsetScorePrefix(nil, 1, k, 2)) ||
		!bytes.Equal(zsetScorePrefix(nil, 1, k, 2), append(elementPrefix(kindZSet, 1, k, 2), 'S')) {
		t.Fatal("sorted-set prefixes disagree with the row encoders")
	}
}

// formatAdversarialTuples are (gen, key, version) triples built so that a
// naive encoding (no key length) would make one prefix another.
func formatAdversarialTuples() []formatElement {
	be64 := func(v uint64) string {
		var b [8]byte
		for i := range b {
			b[i] = byte(v >> (56 - 8*i))
		}
		return string(b[:])
	}
	keys := []string{
		"", "a", "a\x00", "a\x00\x00\x00\x00", "a" + be64(1), "a" + be64(1) + "f", "a" + be64(0),
		"\x00\x00\x00\x01a", "\x00\x00\x00\x01a" + be64(1), "\x00", "\x00\x00\x00\x00", "\xff\xff\xff\xff",
		"ab", "b", strings.Repeat("\x00", 13),
	}
	versions := []uint64{0, 1, 0x6100000000000000, 1 << 63, math.MaxUint64}
	gens := []uint32{0, 1, 0x61, math.MaxUint32}
	var out []formatElement
	for _, k := range keys {
		for _, v := range versions {
			for _, g := range gens {
				out = append(out, formatElement{gen: g, key: []byte(k), version: v})
			}
		}
	}
	return out
}

// TestFormatElementPrefixFree checks that the element rows of one
// collection version are exactly the rows under its elementPrefix: no
// prefix of one (kind, gen, key, version) is a prefix of another's, so an
// iteration never strays into another key or version.
func TestFormatElementPrefixFree(t *testing.T) {
	r := formatTestRand(t)
	tuples := formatAdversarialTuples()
	for range 300 {
		tuples = append(tuples, formatElement{gen: formatRandGen(r), key: formatRandBytes(r), version: formatRandUint64(r)})
	}
	kinds := []byte{kindHash, kindList, kindSet, kindZSet}
	type built struct {
		t      formatElement
		kind   byte
		prefix []byte
		row    []byte
	}
	var all []built
	for _, tu := range tuples {
		for _, kind := range kinds {
			p := elementPrefix(kind, tu.gen, tu.key, tu.version)
			// The row's suffix is chosen to mimic another tuple's encoding.
			other := tuples[r.IntN(len(tuples))]
			suffix := elementPrefix(kind, other.gen, other.key, other.version)[r.IntN(elementHeaderLen):]
			row := append(slices.Clone(p), suffix...)
			switch kind {
			case kindList:
				row = appendListIndex(nil, tu.gen, tu.key, tu.version, r.Uint64())
			case kindZSet:
				row = appendZMember(nil, tu.gen, tu.key, tu.version, suffix)
			}
			all = append(all, built{tu, kind, p, row})
		}
	}
	same := func(a, b built) bool {
		return a.kind == b.kind && a.t.gen == b.t.gen && bytes.Equal(a.t.key, b.t.key) && a.t.version == b.t.version
	}
	for i := range all {
		for j := range all {
			a, b := all[i], all[j]
			if same(a, b) {
				continue
			}
			if bytes.HasPrefix(b.prefix, a.prefix) || bytes.HasPrefix(b.row, a.prefix) {
				t.Fatalf("prefix of (%q, %d, %x, %d) %x is a prefix of (%q, %d, %x, %d) row %x",
					a.kind, a.t.gen, a.t.key, a.t.version, a.prefix, b.kind, b.t.gen, b.t.key, b.t.version, b.row)
			}
		}
		kind, gen, key, version, _, err := decodeElementKey(all[i].row)
		if err != nil || kind != all[i].kind || gen != all[i].t.gen || !bytes.Equal(key, all[i].t.key) || version != all[i].t.version {
			t.Fatalf("decodeElementKey(%x) = %q, %d, %x, %d, %v", all[i].row, kind, gen, key, version, err)
		}
	}
}

// TestFormatElementOrder checks that iterating one collection version
// yields hash fields and set members in byte order, list elements in
// position order, and sorted-set score rows in (score, member) order.
func TestFormatElementOrder(t *testing.T) {
	r := formatTestRand(t)
	key := []byte("k")
	for range 200 {
		a, b := formatRandBytes(r), formatRandBytes(r)
		want := bytes.Compare(a, b)
		for _, enc := range []func([]byte) []byte{
			func(x []byte) []byte { return appendHashField(nil, 1, key, 2, x) },
			func(x []byte) []byte { return appendSetMember(nil, 1, key, 2, x) },
			func(x []byte) []byte { return appendZMember(nil, 1, key, 2, x) },
		} {
			if got := formatSign(bytes.Compare(enc(a), enc(b))); got != want {
				t.Fatalf("rows of %x and %x compare %d, want %d", a, b, got, want)
			}
		}
	}
	type zrow struct {
		score  float64
		member []byte
		enc    []byte
	}
	var rows []zrow
	for range 2000 {
		s := formatRandScore(r)
		if r.IntN(4) == 0 && len(rows) > 0 {
			s = rows[r.IntN(len(rows))].score // ties, ordered by member
		}
		m := formatRandBytes(r)
		rows = append(rows, zrow{s, m, appendZScore(nil, 1, key, 2, s, m)})
	}
	slices.SortFunc(rows, func(a, b zrow) int { return bytes.Compare(a.enc, b.enc) })
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a.score > b.score || (a.score == b.score && bytes.Compare(a.member, b.member) > 0) {
			t.Fatalf("score rows out of order: (%v, %x) before (%v, %x)", a.score, a.member, b.score, b.member)
		}
	}
}

func TestFormatScoreOrder(t *testing.T) {
	edges := formatScoreEdges
	for i := range edges {
		for j := range edges {
			a, b := encodeScore(edges[i]), encodeScore(edges[j])
			if got, want := formatSign(bytes.Compare(a[:], b[:])), cmp.Compare(edges[i], edges[j]); got != want {
				t.Fatalf("encodeScore(%v) vs encodeScore(%v): compare %d, want %d", edges[i], edges[j], got, want)
			}
		}
	}
	r := formatTestRand(t)
	for range 200000 {
		x, y := formatRandScore(r), formatRandScore(r)
		if r.IntN(8) == 0 {
			y = math.Nextafter(x, math.Inf(int(r.IntN(2))*2-1)) // neighbours
		}
		a, b := encodeScore(x), encodeScore(y)
		if got, want := formatSign(bytes.Compare(a[:], b[:])), cmp.Compare(x, y); got != want {
			t.Fatalf("encodeScore(%v) vs encodeScore(%v): compare %d, want %d", x, y, got, want)
		}
	}
}

func TestFormatScoreRoundTrip(t *testing.T) {
	r := formatTestRand(t)
	check := func(f float64) {
		want := f
		if want == 0 {
			want = 0
		}
		enc := encodeScore(f)
		in := append(enc[:], 'm')
		got, rest, err := decodeScore(in)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) || string(rest) != "m" {
			t.Fatalf("decodeScore(encodeScore(%v)) = %v, %q, %v", f, got, rest, err)
		}
		v, err := decodeScoreValue(appendScoreValue(nil, f))
		if err != nil || math.Float64bits(v) != math.Float64bits(want) {
			t.Fatalf("decodeScoreValue(appendScoreValue(%v)) = %v, %v", f, v, err)
		}
	}
	for _, f := range formatScoreEdges {
		check(f)
	}
	for range 100000 {
		check(formatRandScore(r))
	}
}

func TestFormatListPositionOrder(t *testing.T) {
	r := formatTestRand(t)
	key := []byte("k")
	positions := []uint64{0, 1, listInitialPosition - 2, listInitialPosition - 1, listInitialPosition, listInitialPosition + 1, math.MaxUint64}
	for range 1000 {
		positions = append(positions, formatRandUint64(r))
	}
	for range 20000 {
		a, b := positions[r.IntN(len(positions))], positions[r.IntN(len(positions))]
		ea, eb := appendListIndex(nil, 1, key, 2, a), appendListIndex(nil, 1, key, 2, b)
		if got := formatSign(bytes.Compare(ea, eb)); got != cmp.Compare(a, b) {
			t.Fatalf("positions %d, %d: compare %d", a, b, got)
		}
	}
	// LPUSH writes head-1, RPUSH writes tail: pushes on either side of an
	// empty list keep the elements in list order.
	m := Meta{Type: TypeList, Head: listInitialPosition, Tail: listInitialPosition}
	var rows [][]byte
	var want []int
	for i := range 100 {
		if r.IntN(2) == 0 {
			m.Head--
			rows = append(rows, appendListIndex(nil, 1, key, 2, m.Head))
			want = append([]int{i}, want...)
		} else {
			rows = append(rows, appendListIndex(nil, 1, key, 2, m.Tail))
			m.Tail++
			want = append(want, i)
		}
		m.Count++
	}
	if _, err := decodeMeta(appendMetaValue(nil, m)); err != nil {
		t.Fatal(err)
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(rows[a], rows[b]) })
	if !slices.Equal(idx, want) {
		t.Fatalf("list rows sort as %v, want %v", idx, want)
	}
}

func TestFormatExpiryRoundTripAndOrder(t *testing.T) {
	r := formatTestRand(t)
	type entry struct {
		gen uint32
		at  int64
		key []byte
		enc []byte
	}
	var entries []entry
	for range 5000 {
		e := entry{gen: uint32(r.IntN(3)), at: formatRandExpireAt(r), key: formatRandBytes(r)}
		if r.IntN(3) == 0 && len(entries) > 0 {
			e.at = entries[r.IntN(len(entries))].at
		}
		e.enc = appendExpiryKey(nil, e.gen, e.at, e.key)
		g, at, k, err := decodeExpiryKey(e.enc)
		if err != nil || g != e.gen || at != e.at || !bytes.Equal(k, e.key) {
			t.Fatalf("decodeExpiryKey(%x) = %d, %d, %x, %v", e.enc, g, at, k, err)
		}
		if !bytes.HasPrefix(e.enc, expiryPrefix(e.gen)) {
			t.Fatalf("expiry key %x not under expiryPrefix(%d)", e.enc, e.gen)
		}
		entries = append(entries, e)
	}
	for range 50000 {
		a, b := entries[r.IntN(len(entries))], entries[r.IntN(len(entries))]
		want := cmp.Or(cmp.Compare(a.gen, b.gen), cmp.Compare(a.at, b.at), bytes.Compare(a.key, b.key))
		if got := formatSign(bytes.Compare(a.enc, b.enc)); got != want {
			t.Fatalf("expiry keys (%d,%d,%x) vs (%d,%d,%x): compare %d, want %d", a.gen, a.at, a.key, b.gen, b.at, b.key, got, want)
		}
	}
	// The sweeper's range: everything due by now sorts below the bound
	// built from now+1, everything later above it.
	now := int64(1_700_000_000_000)
	bound := appendExpiryKey(nil, 1, now+1, nil)
	for _, at := range []int64{1, now - 1, now, now + 1, now + 2, math.MaxInt64} {
		enc := appendExpiryKey(nil, 1, at, []byte("\xff\xff"))
		if due := bytes.Compare(enc, bound) < 0; due != (at <= now) {
			t.Fatalf("expire_at %d: below bound = %v", at, due)
		}
	}
	for _, v := range []uint64{0, 1, math.MaxUint64} {
		if got, err := decodeExpiryValue(appendExpiryValue(nil, v)); err != nil || got != v {
			t.Fatalf("expiry value %d: got %d, %v", v, got, err)
		}
	}
}

func TestFormatSystemRows(t *testing.T) {
	seen := map[string]bool{string(systemMaxGenKey()): true}
	var prev []byte
	for db := 0; db <= int(initialMaxGen); db++ {
		k := systemGenKey(db)
		if seen[string(k)] || k[0] != kindSystem || bytes.Compare(prev, k) >= 0 {
			t.Fatalf("systemGenKey(%d) = %x: duplicate or out of order", db, k)
		}
		seen[string(k)] = true
		prev = k
	}
	for _, g := range []uint32{0, 15, 16, math.MaxUint32} {
		if got, err := decodeGenValue(appendGenValue(nil, g)); err != nil || got != g {
			t.Fatalf("gen value %d: got %d, %v", g, got, err)
		}
	}
}

// TestFormatKeyspacesDisjoint checks that the first byte tells every row
// kind apart, so no encoder can produce another kind's key.
func TestFormatKeyspacesDisjoint(t *testing.T) {
	kinds := []byte{kindSystem, kindMeta, kindHash, kindList, kindSet, kindZSet, kindExpiry}
	seen := map[byte]bool{}
	for _, k := range kinds {
		if seen[k] {
			t.Fatalf("keyspace byte %q used twice", k)
		}
		seen[k] = true
		if isElementKind(k) != bytes.ContainsRune([]byte("hlsz"), rune(k)) {
			t.Fatalf("isElementKind(%q) wrong", k)
		}
	}
	k := []byte("k")
	firsts := map[byte][]byte{
		kindSystem: systemGenKey(0), kindMeta: appendMetaKey(nil, 1, k), kindHash: appendHashField(nil, 1, k, 1, nil),
		kindList: appendListIndex(nil, 1, k, 1, 0), kindSet: appendSetMember(nil, 1, k, 1, nil),
		kindZSet: appendZMember(nil, 1, k, 1, nil), kindExpiry: appendExpiryKey(nil, 1, 1, k),
	}
	for want, enc := range firsts {
		if enc[0] != want {
			t.Fatalf("key %x starts with %q, want %q", enc, enc[0], want)
		}
	}
	if systemMaxGenKey()[0] != kindSystem || zsetMemberTag == zsetScoreTag {
		t.Fatal("system or sorted-set tags collide")
	}
}

// formatDecoder is one decoder under test, with a generator of its valid
// inputs. Every prefix of a valid input shorter than must bytes is
// malformed; strict decoders reject any other length too.
type formatDecoder struct {
	name   string
	decode func([]byte) error
	valid  func(r *rand.Rand) (enc []byte, must int)
}

func formatDecoders() []formatDecoder {
	elem := func(kind byte, tag byte) func(r *rand.Rand) ([]byte, int) {
		return func(r *rand.Rand) ([]byte, int) {
			for {
				e := formatRandElement(r)
				if e.kind != kind || (kind == kindZSet && e.tag != tag) {
					continue
				}
				n := len(elementPrefix(e.kind, e.gen, e.key, e.version))
				switch {
				case kind == kindList:
					n = len(e.enc) + 1 // strict
				case tag == zsetMemberTag:
					n++
				case tag == zsetScoreTag:
					n += 9
				}
				return e.enc, n
			}
		}
	}
	anyElem := func(r *rand.Rand) ([]byte, int) {
		e := formatRandElement(r)
		return elem(e.kind, e.tag)(r)
	}
	return []formatDecoder{
		{"decodeMeta", func(b []byte) error { _, err := decodeMeta(b); return err }, func(r *rand.Rand) ([]byte, int) {
			m := formatRandMeta(r)
			enc := appendMetaValue(nil, m)
			if m.Type == TypeString {
				return enc, metaValueHeaderLen
			}
			return enc, len(enc) + 1 // strict
		}},
		{"decodeMetaKey", func(b []byte) error { _, _, err := decodeMetaKey(b); return err }, func(r *rand.Rand) ([]byte, int) {
			return appendMetaKey(nil, formatRandGen(r), formatRandBytes(r)), metaKeyHeaderLen
		}},
		{"decodeElementKey", func(b []byte) error { _, _, _, _, _, err := decodeElementKey(b); return err }, anyElem},
		{"decodeHashField", func(b []byte) error { _, _, _, _, err := decodeHashField(b); return err }, elem(kindHash, 0)},
		{"decodeListIndex", func(b []byte) error { _, _, _, _, err := decodeListIndex(b); return err }, elem(kindList, 0)},
		{"decodeSetMember", func(b []byte) error { _, _, _, _, err := decodeSetMember(b); return err }, elem(kindSet, 0)},
		{"decodeZMember", func(b []byte) error { _, _, _, _, err := decodeZMember(b); return err }, elem(kindZSet, zsetMemberTag)},
		{"decodeZScore", func(b []byte) error { _, _, _, _, _, err := decodeZScore(b); return err }, elem(kindZSet, zsetScoreTag)},
		{"decodeScore", func(b []byte) error { _, _, err := decodeScore(b); return err }, func(r *rand.Rand) ([]byte, int) {
			s := encodeScore(formatRandScore(r))
			return append(s[:], formatRandBytes(r)...), 8
		}},
		{"decodeScoreValue", func(b []byte) error { _, err := decodeScoreValue(b); return err }, func(r *rand.Rand) ([]byte, int) {
			return appendScoreValue(nil, formatRandScore(r)), 9
		}},
		{"decodeExpiryKey", func(b []byte) error { _, _, _, err := decodeExpiryKey(b); return err }, func(r *rand.Rand) ([]byte, int) {
			return appendExpiryKey(nil, formatRandGen(r), formatRandExpireAt(r), formatRandBytes(r)), expiryKeyHeaderLen
		}},
		{"decodeExpiryValue", func(b []byte) error { _, err := decodeExpiryValue(b); return err }, func(r *rand.Rand) ([]byte, int) {
			return appendExpiryValue(nil, formatRandUint64(r)), 9
		}},
		{"decodeGenValue", func(b []byte) error { _, err := decodeGenValue(b); return err }, func(r *rand.Rand) ([]byte, int) {
			return appendGenValue(nil, formatRandGen(r)), 5
		}},
	}
}

// TestFormatDecodersRejectTruncation cuts valid inputs at every length:
// shorter than the fixed part is corruption; anything may be decoded or
// rejected, but only with corruption, and nothing panics.
func TestFormatDecodersRejectTruncation(t *testing.T) {
	r := formatTestRand(t)
	for _, d := range formatDecoders() {
		for range 300 {
			enc, must := d.valid(r)
			if err := d.decode(enc); err != nil {
				t.Fatalf("%s(%x): %v on a valid input", d.name, enc, err)
			}
			for i := 0; i < len(enc); i++ {
				err := d.decode(enc[:i:i])
				if i < must {
					formatMustCorrupt(t, err, d.name+"("+hex.EncodeToString(enc[:i])+")")
				} else if err != nil && !errors.Is(err, sst.ErrCorruption) {
					t.Fatalf("%s(%x): %v", d.name, enc[:i], err)
				}
			}
			if must > len(enc) { // strict: longer is malformed too
				formatMustCorrupt(t, d.decode(append(slices.Clone(enc), 0)), d.name+" with a trailing byte")
			}
		}
	}
}

// TestFormatDecodersRejectGarbage feeds random bytes and mutated valid
// inputs to every decoder: each decodes or fails with corruption, never
// panics.
func TestFormatDecodersRejectGarbage(t *testing.T) {
	r := formatTestRand(t)
	for _, d := range formatDecoders() {
		for range 3000 {
			var in []byte
			if r.IntN(2) == 0 {
				in = formatRandBytes(r)
			} else {
				in, _ = d.valid(r)
				for range 1 + r.IntN(3) {
					if len(in) > 0 {
						in[r.IntN(len(in))] = byte(r.Uint32())
					}
				}
			}
			if err := d.decode(in); err != nil && !errors.Is(err, sst.ErrCorruption) {
				t.Fatalf("%s(%x): %v", d.name, in, err)
			}
		}
	}
}

// TestFormatDecodersRejectMalformed lists malformed inputs of every kind.
func TestFormatDecodersRejectMalformed(t *testing.T) {
	hx := func(s string) []byte {
		b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	meta := func(s string) error { _, err := decodeMeta(hx(s)); return err }
	elem := func(s string) error { _, _, _, _, _, err := decodeElementKey(hx(s)); return err }
	cases := []struct {
		name string
		err  error
	}{
		{"meta empty", meta("")},
		{"meta format 0", meta("00 02 0000000000000001 0000000000000000 0000000000000003")},
		{"meta format 2", meta("02 02 0000000000000001 0000000000000000 0000000000000003")},
		{"meta type none", meta("01 00 0000000000000001 0000000000000000")},
		{"meta type 6", meta("01 06 0000000000000001 0000000000000000 0000000000000003")},
		{"meta type 255", meta("01 ff 0000000000000001 0000000000000000")},
		{"meta negative expiry", meta("01 01 0000000000000001 8000000000000000 76")},
		{"meta negative expiry -1", meta("01 02 0000000000000001 ffffffffffffffff 0000000000000003")},
		{"meta negative count", meta("01 04 0000000000000001 0000000000000000 ffffffffffffffff")},
		{"meta hash trailing byte", meta("01 02 0000000000000001 0000000000000000 0000000000000003 00")},
		{"meta hash short", meta("01 02 0000000000000001 0000000000000000 00000000000003")},
		{"meta list as hash", meta("01 03 0000000000000001 0000000000000000 0000000000000003")},
		{"meta list count mismatch", meta("01 03 0000000000000001 0000000000000000 0000000000000003 8000000000000000 8000000000000002")},
		{"meta list head after tail", meta("01 03 0000000000000001 0000000000000000 0000000000000000 8000000000000002 8000000000000001")},
		{"meta list wraps", meta("01 03 0000000000000001 0000000000000000 ffffffffffffffff 0000000000000001 0000000000000000")},
		{"meta list count negative", meta("01 03 0000000000000001 0000000000000000 8000000000000000 0000000000000000 8000000000000000")},
		{"meta key empty", func() error { _, _, err := decodeMetaKey(nil); return err }()},
		{"meta key short", func() error { _, _, err := decodeMetaKey(hx("6d 000000")); return err }()},
		{"meta key wrong keyspace", func() error { _, _, err := decodeMetaKey(hx("78 00000001 6b")); return err }()},
		{"element empty", elem("")},
		{"element meta keyspace", elem("6d 00000001 00000001 6b 0000000000000009 66")},
		{"element expiry keyspace", elem("78 00000001 00000001 6b 0000000000000009 66")},
		{"element system keyspace", elem("79 00000001 00000001 6b 0000000000000009 66")},
		{"element huge key length", elem("68 00000001 ffffffff 6b 0000000000000009 66")},
		{"element key length off by one", elem("68 00000001 00000009 6b 0000000000000009")},
		{"element no version", elem("68 00000001 00000001 6b 00000000000000")},
		{"list short position", elem("6c 00000001 00000001 6b 0000000000000009 80000000000000")},
		{"list long position", elem("6c 00000001 00000001 6b 0000000000000009 8000000000000000 00")},
		{"list no position", elem("6c 00000001 00000001 6b 0000000000000009")},
		{"zset no tag", elem("7a 00000001 00000001 6b 0000000000000009")},
		{"zset bad tag", elem("7a 00000001 00000001 6b 0000000000000009 58 6d")},
		{"zset lowercase tag", elem("7a 00000001 00000001 6b 0000000000000009 6d 6d")},
		{"zset short score", elem("7a 00000001 00000001 6b 0000000000000009 53 bff80000000000")},
		{"zset NaN score", elem("7a 00000001 00000001 6b 0000000000000009 53 fff8000000000000 6d")},
		{"zset negative NaN score", elem("7a 00000001 00000001 6b 0000000000000009 53 0007ffffffffffff")},
		{"zset -0 score", elem("7a 00000001 00000001 6b 0000000000000009 53 7fffffffffffffff")},
		{"member of a score row", func() error {
			_, _, _, _, err := decodeZMember(appendZScore(nil, 1, []byte("k"), 1, 2, []byte("m")))
			return err
		}()},
		{"score of a member row", func() error {
			_, _, _, _, _, err := decodeZScore(appendZMember(nil, 1, []byte("k"), 1, []byte("m")))
			return err
		}()},
		{"hash field of a set row", func() error {
			_, _, _, _, err := decodeHashField(appendSetMember(nil, 1, []byte("k"), 1, []byte("m")))
			return err
		}()},
		{"expiry key short", func() error { _, _, _, err := decodeExpiryKey(hx("78 00000001 00000000000003")); return err }()},
		{"expiry key wrong keyspace", func() error { _, _, _, err := decodeExpiryKey(hx("6d 00000001 00000000000003e8 6b")); return err }()},
		{"expiry key at 0", func() error { _, _, _, err := decodeExpiryKey(hx("78 00000001 0000000000000000 6b")); return err }()},
		{"expiry key negative at", func() error { _, _, _, err := decodeExpiryKey(hx("78 00000001 ffffffffffffffff 6b")); return err }()},
		{"expiry value short", func() error { _, err := decodeExpiryValue(hx("00000000000009")); return err }()},
		{"expiry value long", func() error { _, err := decodeExpiryValue(hx("000000000000000900")); return err }()},
		{"gen value short", func() error { _, err := decodeGenValue(hx("000010")); return err }()},
		{"gen value long", func() error { _, err := decodeGenValue(hx("0000001000")); return err }()},
		{"score value NaN", func() error { _, err := decodeScoreValue(hx("7ff8000000000001")); return err }()},
		{"score value -0", func() error { _, err := decodeScoreValue(hx("8000000000000000")); return err }()},
		{"score value short", func() error { _, err := decodeScoreValue(hx("3ff80000000000")); return err }()},
		{"score short", func() error { _, _, err := decodeScore(hx("3ff80000000000")); return err }()},
	}
	for _, c := range cases {
		formatMustCorrupt(t, c.err, c.name)
	}
}

// TestFormatDecodersDoNotCopy checks that decoders return sub-slices of
// their input, capped so that appending to them cannot clobber it.
func TestFormatDecodersDoNotCopy(t *testing.T) {
	aliases := func(sub, in []byte) bool {
		for i := range in {
			if len(sub) > 0 && &in[i] == &sub[0] {
				return true
			}
		}
		return false
	}
	key := []byte("the-key")
	check := func(name string, sub, in []byte) {
		t.Helper()
		if !aliases(sub, in) {
			t.Fatalf("%s: result does not alias the input", name)
		}
		before := slices.Clone(in)
		_ = append(sub, "clobber"...)
		if !bytes.Equal(before, in) {
			t.Fatalf("%s: appending to the result changed the input", name)
		}
	}
	in := appendMetaKey(nil, 1, key)
	_, k, _ := decodeMetaKey(in)
	check("decodeMetaKey", k, in)
	in = appendMetaValue(nil, Meta{Type: TypeString, Payload: []byte("payload")})
	m, _ := decodeMeta(in)
	check("decodeMeta", m.Payload, in)
	in = appendHashField(nil, 1, key, 2, []byte("field"))
	_, _, k, _, rest, _ := decodeElementKey(in)
	check("decodeElementKey key", k, in)
	check("decodeElementKey rest", rest, in)
	_, k, _, f, _ := decodeHashField(in)
	check("decodeHashField key", k, in)
	check("decodeHashField field", f, in)
	in = appendZScore(nil, 1, key, 2, 1, []byte("member"))
	_, k, _, _, mem, _ := decodeZScore(in)
	check("decodeZScore key", k, in)
	check("decodeZScore member", mem, in)
	in = appendExpiryKey(nil, 1, 5, key)
	_, _, k, _ = decodeExpiryKey(in)
	check("decodeExpiryKey", k, in)
}

func TestFormatEncodersPanic(t *testing.T) {
	nan := math.NaN()
	cases := map[string]func(){
		"encodeScore NaN":           func() { encodeScore(nan) },
		"appendZScore NaN":          func() { appendZScore(nil, 1, nil, 1, nan, nil) },
		"appendScoreValue NaN":      func() { appendScoreValue(nil, nan) },
		"appendExpiryKey 0":         func() { appendExpiryKey(nil, 1, 0, nil) },
		"appendExpiryKey negative":  func() { appendExpiryKey(nil, 1, -5, nil) },
		"meta type none":            func() { appendMetaValue(nil, Meta{}) },
		"meta type 9":               func() { appendMetaValue(nil, Meta{Type: 9}) },
		"meta negative expiry":      func() { appendMetaValue(nil, Meta{Type: TypeString, ExpireAt: -1}) },
		"meta negative count":       func() { appendMetaValue(nil, Meta{Type: TypeSet, Count: -1}) },
		"meta list count mismatch":  func() { appendMetaValue(nil, Meta{Type: TypeList, Count: 1, Head: 5, Tail: 5}) },
		"meta list head after tail": func() { appendMetaValue(nil, Meta{Type: TypeList, Head: 6, Tail: 5}) },
		"elementPrefix meta kind":   func() { elementPrefix(kindMeta, 1, nil, 1) },
		"systemGenKey -1":           func() { systemGenKey(-1) },
		"systemGenKey 16":           func() { systemGenKey(16) },
	}
	for name, fn := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}
