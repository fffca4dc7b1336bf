package keyspace

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/stratakv/strata/lsm/sst"
)

// The keyspace layout, format version 1: how the Redis data model maps onto
// engine rows. All integers are fixed-width big-endian, so byte order is
// numeric order. The first byte of every engine key names its keyspace.
//
//	gen      the generation of a Redis database (see system rows): 4 bytes
//	key      the Redis key, any bytes (empty too)
//	version  the version of a collection, 8 bytes: new and never reused each
//	         time the key is created, so a re-created key never sees the
//	         element rows of an older one
//
// System rows: the current generation of each database, and the highest
// generation ever used.
//
//	+-----+------+--------------+        +-----------+
//	| 'y' | 0x00 | db index (1) |   ->   | gen (u32) |   absent: gen = db index
//	+-----+------+--------------+        +-----------+
//	+-----+------+                       +-----------+
//	| 'y' | 0x01 |                  ->   | gen (u32) |   absent: 15 (initialMaxGen)
//	+-----+------+                       +-----------+
//
// Databases 0..15 start in generations 0..15; FLUSHDB moves a database to
// the highest generation ever used + 1, in one batch. Rows of a generation
// no database is in are dead: unreachable at once, dropped by compaction.
//
// Metadata rows, one per live Redis key. The key runs to the end, so the
// metadata keys of one generation sort by Redis key (SCAN walks them):
//
//	+-----+-----------+---------------------+
//	| 'm' | gen (u32) | key (to the end)    |
//	+-----+-----------+---------------------+
//
//	value:
//	+------------+----------+---------------+-----------------+-----------------+
//	| format (1) | type (1) | version (u64) | expire_at (i64) | by type, below  |
//	+------------+----------+---------------+-----------------+-----------------+
//	  0            1          2               10                18
//
//	  string:          payload (to the end)
//	  hash, set, zset: count (i64)                               26 bytes in all
//	  list:            count (i64) | head (u64) | tail (u64)     42 bytes in all
//
// format is metaFormatVersion (1). type is a Type, never TypeNone.
// expire_at is absolute Unix milliseconds, 0 = never, never negative; the
// engine row carries the same expiry, so the engine hides the row when due.
// count >= 0 (empty collections are deleted, so a stored count is >= 1, but
// the format does not insist). A list holds its elements at positions
// head..tail-1, so count = tail - head; an empty list has head = tail =
// listInitialPosition, LPUSH writes head-1, RPUSH writes tail.
//
// Element rows: the elements of one version of one collection. The key
// length makes the encoding of (gen, key, version) prefix-free, so the rows
// of one collection version are exactly those under elementPrefix:
//
//	+----------+-----------+----------------+-----+---------------+--------+
//	| kind (1) | gen (u32) | len(key) (u32) | key | version (u64) | suffix |
//	+----------+-----------+----------------+-----+---------------+--------+
//
//	kind  suffix                                      value
//	'h'   field (to the end)                          field value
//	'l'   position (u64)                              element
//	's'   member (to the end)                         empty
//	'z'   'M' | member (to the end)                   score (u64, float64 bits)
//	'z'   'S' | score (u64, sortable) | member        empty
//
// A sorted set has both rows per member: 'M' finds a member's score, 'S'
// walks the set by score, then by member bytes (Redis's order). The sortable
// score is the float64's bits with the sign bit flipped if it is clear and
// every bit flipped if it is set, so byte order is numeric order; -0 is
// stored as +0 (Redis compares them equal) and NaN is never stored.
//
// Expiry index rows: every key with an expiry, in expiry order, so a sweeper
// finds the due keys of a generation in O(due):
//
//	+-----+-----------+-----------------+------------------+
//	| 'x' | gen (u32) | expire_at (i64) | key (to the end) |   ->   version (u64)
//	+-----+-----------+-----------------+------------------+
//
// expire_at > 0. An index row is current only while the key's live
// metadata has both this version and this expire_at: a key that expired
// unseen and was re-created leaves its old index row behind.

// Keyspace bytes: the first byte of every engine key. Part of the format.
const (
	kindSystem byte = 'y'
	kindMeta   byte = 'm'
	kindHash   byte = 'h'
	kindList   byte = 'l'
	kindSet    byte = 's'
	kindZSet   byte = 'z'
	kindExpiry byte = 'x'
)

const (
	// System row tags, after kindSystem. Part of the format.
	systemGenTag    byte = 0x00
	systemMaxGenTag byte = 0x01

	// initialMaxGen is the highest generation used before any flush: the
	// databases 0..15 start in generations 0..15. Part of the format.
	initialMaxGen uint32 = 15

	// Sorted-set row tags, after the version. Part of the format.
	zsetMemberTag byte = 'M'
	zsetScoreTag  byte = 'S'

	// metaFormatVersion leads every metadata value. Part of the format;
	// versions are only ever added.
	metaFormatVersion byte = 1

	// listInitialPosition is head and tail of an empty list: the middle of
	// the uint64 range, so either end can grow by about 2^63 elements before
	// its position would wrap. Part of the format.
	listInitialPosition uint64 = 1 << 63
)

// Sizes of the fixed parts.
const (
	genLen             = 4
	metaKeyHeaderLen   = 1 + genLen                  // 'm' gen
	metaValueHeaderLen = 1 + 1 + 8 + 8               // format type version expire_at
	elementHeaderLen   = 1 + genLen + 4              // kind gen len(key), then key
	expiryKeyHeaderLen = 1 + genLen + 8              // 'x' gen expire_at
	collectionMetaLen  = metaValueHeaderLen + 8      // + count
	listMetaLen        = metaValueHeaderLen + 8 + 16 // + count head tail
)

// Type is the type of a Redis key. The values are part of the format (the
// type byte of a metadata value): never renumber.
type Type uint8

const (
	TypeNone   Type = 0 // no such key; never stored
	TypeString Type = 1
	TypeHash   Type = 2
	TypeList   Type = 3
	TypeSet    Type = 4
	TypeZSet   Type = 5
)

// String returns the name TYPE replies with.
func (t Type) String() string {
	switch t {
	case TypeNone:
		return "none"
	case TypeString:
		return "string"
	case TypeHash:
		return "hash"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	}
	return "unknown"
}

// isElementKind reports whether kind is the keyspace byte of element rows.
func isElementKind(kind byte) bool {
	switch kind {
	case kindHash, kindList, kindSet, kindZSet:
		return true
	}
	return false
}

// Meta is the decoded metadata value of a key. Fields that do not belong to
// Type are zero after decoding and ignored by appendMetaValue.
type Meta struct {
	Type     Type
	Version  uint64
	ExpireAt int64 // absolute Unix ms; 0 = never
	Count    int64 // hash, set, zset, list: number of elements
	// Head and Tail delimit a list: its elements sit at positions
	// Head..Tail-1.
	Head, Tail uint64
	Payload    []byte // string: the value
}

// metaProblem returns why m cannot be stored, or "" if it can.
func metaProblem(m *Meta) string {
	if m.ExpireAt < 0 {
		return fmt.Sprintf("negative expire_at %d", m.ExpireAt)
	}
	switch m.Type {
	case TypeString:
		return ""
	case TypeHash, TypeSet, TypeZSet:
	case TypeList:
		if m.Head > m.Tail || m.Tail-m.Head != uint64(m.Count) {
			return fmt.Sprintf("list count %d does not match head %d, tail %d", m.Count, m.Head, m.Tail)
		}
	default:
		return fmt.Sprintf("bad type %d", m.Type)
	}
	if m.Count < 0 {
		return fmt.Sprintf("negative count %d", m.Count)
	}
	return ""
}

// errCorrupt is the corruption sentinel of this package: the project's one,
// sst.ErrCorruption. Wrap it with %w and say what was being decoded.
var errCorrupt = sst.ErrCorruption

// corruptionf returns an error wrapping sst.ErrCorruption that names what
// was being decoded and the offset of the problem in it.
func corruptionf(what string, off int, format string, args ...any) error {
	return fmt.Errorf("%w: keyspace: %s at offset %d: %s", errCorrupt, what, off, fmt.Sprintf(format, args...))
}

// The decoders below never panic and never copy: the slices they return
// are sub-slices of their input, valid only as long as it is (an iterator's
// key is not: copy what you keep). Returned slices are capped, so appending
// to one never writes into the input.

// appendMetaKey appends the metadata key of key in generation gen.
func appendMetaKey(dst []byte, gen uint32, key []byte) []byte {
	dst = append(dst, kindMeta)
	dst = binary.BigEndian.AppendUint32(dst, gen)
	return append(dst, key...)
}

// metaPrefix returns the prefix of every metadata key of generation gen:
// the keyspace of one database, for SCAN, DBSIZE and RANDOMKEY. It is also
// the metadata key of the empty Redis key.
func metaPrefix(gen uint32) []byte {
	return appendMetaKey(make([]byte, 0, metaKeyHeaderLen), gen, nil)
}

// decodeMetaKey decodes a metadata key.
func decodeMetaKey(b []byte) (gen uint32, key []byte, err error) {
	const what = "meta key"
	if len(b) < metaKeyHeaderLen {
		return 0, nil, corruptionf(what, len(b), "truncated at %d bytes", len(b))
	}
	if b[0] != kindMeta {
		return 0, nil, corruptionf(what, 0, "keyspace %q, want %q", b[0], kindMeta)
	}
	return binary.BigEndian.Uint32(b[1:]), b[metaKeyHeaderLen:], nil
}

// appendMetaValue appends the metadata value of m.
// REQUIRES: m is storable: Type is not TypeNone, ExpireAt >= 0, Count >= 0,
// and for a list Head <= Tail and Count = Tail - Head. Panics otherwise:
// writing such a value would corrupt the key.
func appendMetaValue(dst []byte, m Meta) []byte {
	if p := metaProblem(&m); p != "" {
		panic("keyspace: appendMetaValue: " + p)
	}
	dst = append(dst, metaFormatVersion, byte(m.Type))
	dst = binary.BigEndian.AppendUint64(dst, m.Version)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.ExpireAt))
	switch m.Type {
	case TypeString:
		dst = append(dst, m.Payload...)
	case TypeHash, TypeSet, TypeZSet:
		dst = binary.BigEndian.AppendUint64(dst, uint64(m.Count))
	case TypeList:
		dst = binary.BigEndian.AppendUint64(dst, uint64(m.Count))
		dst = binary.BigEndian.AppendUint64(dst, m.Head)
		dst = binary.BigEndian.AppendUint64(dst, m.Tail)
	}
	return dst
}

// decodeMeta decodes a metadata value. A string's Payload is a sub-slice of
// b (empty, not nil, for the empty string).
func decodeMeta(b []byte) (Meta, error) {
	const what = "meta value"
	if len(b) < metaValueHeaderLen {
		return Meta{}, corruptionf(what, len(b), "truncated at %d bytes", len(b))
	}
	if b[0] != metaFormatVersion {
		return Meta{}, corruptionf(what, 0, "unknown format version %d", b[0])
	}
	m := Meta{
		Type:     Type(b[1]),
		Version:  binary.BigEndian.Uint64(b[2:]),
		ExpireAt: int64(binary.BigEndian.Uint64(b[10:])),
	}
	want := 0
	switch m.Type {
	case TypeString:
		m.Payload = b[metaValueHeaderLen:]
		want = len(b)
	case TypeHash, TypeSet, TypeZSet:
		want = collectionMetaLen
	case TypeList:
		want = listMetaLen
	default:
		return Meta{}, corruptionf(what, 1, "bad type %d", b[1])
	}
	if len(b) != want {
		return Meta{}, corruptionf(what, min(len(b), want), "%s value of %d bytes, want %d", m.Type, len(b), want)
	}
	if m.Type != TypeString {
		m.Count = int64(binary.BigEndian.Uint64(b[metaValueHeaderLen:]))
	}
	if m.Type == TypeList {
		m.Head = binary.BigEndian.Uint64(b[metaValueHeaderLen+8:])
		m.Tail = binary.BigEndian.Uint64(b[metaValueHeaderLen+16:])
	}
	if p := metaProblem(&m); p != "" {
		return Meta{}, corruptionf(what, 10, "%s", p)
	}
	return m, nil
}

// elementPrefix returns the prefix every element row of one collection
// version shares: iterate it to read the collection. Prefixes of distinct
// (kind, gen, key, version) are never prefixes of one another.
// REQUIRES: isElementKind(kind); len(key) < 2^32. Panics otherwise.
func elementPrefix(kind byte, gen uint32, key []byte, version uint64) []byte {
	return appendElementPrefix(make([]byte, 0, elementPrefixLen(key)), kind, gen, key, version)
}

// elementPrefixLen is the length of elementPrefix's result for key.
func elementPrefixLen(key []byte) int { return elementHeaderLen + len(key) + 8 }

// appendElementPrefix appends elementPrefix(kind, gen, key, version) to dst.
func appendElementPrefix(dst []byte, kind byte, gen uint32, key []byte, version uint64) []byte {
	if !isElementKind(kind) {
		panic(fmt.Sprintf("keyspace: elementPrefix: kind %q is not an element kind", kind))
	}
	if uint64(len(key)) > math.MaxUint32 {
		panic(fmt.Sprintf("keyspace: elementPrefix: key of %d bytes", len(key)))
	}
	dst = append(dst, kind)
	dst = binary.BigEndian.AppendUint32(dst, gen)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(key)))
	dst = append(dst, key...)
	return binary.BigEndian.AppendUint64(dst, version)
}

// decodeElementKey decodes any element row key: the compaction filter
// decodes every element row with it. rest is the kind's suffix (for a
// sorted set, starting with its tag). The suffix is checked too: a list
// position is 8 bytes, a sorted-set row has a known tag, and a score row a
// valid score.
func decodeElementKey(b []byte) (kind byte, gen uint32, key []byte, version uint64, rest []byte, err error) {
	const what = "element key"
	if len(b) < elementHeaderLen {
		return 0, 0, nil, 0, nil, corruptionf(what, len(b), "truncated at %d bytes", len(b))
	}
	kind = b[0]
	if !isElementKind(kind) {
		return 0, 0, nil, 0, nil, corruptionf(what, 0, "keyspace %q is not an element keyspace", kind)
	}
	gen = binary.BigEndian.Uint32(b[1:])
	n := binary.BigEndian.Uint32(b[1+genLen:])
	if uint64(len(b)-elementHeaderLen) < uint64(n)+8 {
		return 0, 0, nil, 0, nil, corruptionf(what, len(b), "truncated: key of %d bytes and version need %d more bytes, have %d", n, uint64(n)+8, len(b)-elementHeaderLen)
	}
	end := elementHeaderLen + int(n)
	key = b[elementHeaderLen:end:end]
	version = binary.BigEndian.Uint64(b[end:])
	rest = b[end+8:]
	off := end + 8
	switch kind {
	case kindList:
		if len(rest) != 8 {
			return 0, 0, nil, 0, nil, corruptionf(what, off, "list position of %d bytes, want 8", len(rest))
		}
	case kindZSet:
		if len(rest) == 0 {
			return 0, 0, nil, 0, nil, corruptionf(what, off, "truncated before the sorted-set tag")
		}
		switch rest[0] {
		case zsetMemberTag:
		case zsetScoreTag:
			if _, _, err := decodeScore(rest[1:]); err != nil {
				return 0, 0, nil, 0, nil, corruptionf(what, off+1, "%v", err)
			}
		default:
			return 0, 0, nil, 0, nil, corruptionf(what, off, "bad sorted-set tag %q", rest[0])
		}
	}
	return kind, gen, key, version, rest, nil
}

// decodeElementOf decodes an element key that must be of kind want.
func decodeElementOf(b []byte, want byte) (gen uint32, key []byte, version uint64, rest []byte, err error) {
	kind, gen, key, version, rest, err := decodeElementKey(b)
	if err != nil {
		return 0, nil, 0, nil, err
	}
	if kind != want {
		return 0, nil, 0, nil, corruptionf("element key", 0, "keyspace %q, want %q", kind, want)
	}
	return gen, key, version, rest, nil
}

// appendHashField appends the row key of field in one hash version.
func appendHashField(dst []byte, gen uint32, key []byte, version uint64, field []byte) []byte {
	return append(appendElementPrefix(dst, kindHash, gen, key, version), field...)
}

// decodeHashField decodes a hash field row key.
func decodeHashField(b []byte) (gen uint32, key []byte, version uint64, field []byte, err error) {
	return decodeElementOf(b, kindHash)
}

// appendListIndex appends the row key of the element at position pos of
// one list version.
func appendListIndex(dst []byte, gen uint32, key []byte, version uint64, pos uint64) []byte {
	return binary.BigEndian.AppendUint64(appendElementPrefix(dst, kindList, gen, key, version), pos)
}

// decodeListIndex decodes a list element row key.
func decodeListIndex(b []byte) (gen uint32, key []byte, version uint64, pos uint64, err error) {
	gen, key, version, rest, err := decodeElementOf(b, kindList)
	if err != nil {
		return 0, nil, 0, 0, err
	}
	return gen, key, version, binary.BigEndian.Uint64(rest), nil
}

// appendSetMember appends the row key of member in one set version.
func appendSetMember(dst []byte, gen uint32, key []byte, version uint64, member []byte) []byte {
	return append(appendElementPrefix(dst, kindSet, gen, key, version), member...)
}

// decodeSetMember decodes a set member row key.
func decodeSetMember(b []byte) (gen uint32, key []byte, version uint64, member []byte, err error) {
	return decodeElementOf(b, kindSet)
}

// zsetMemberPrefix appends the prefix of the member→score rows of one
// sorted-set version.
func zsetMemberPrefix(dst []byte, gen uint32, key []byte, version uint64) []byte {
	return append(appendElementPrefix(dst, kindZSet, gen, key, version), zsetMemberTag)
}

// zsetScorePrefix appends the prefix of the score→member rows of one
// sorted-set version: iterating it walks the set in rank order.
func zsetScorePrefix(dst []byte, gen uint32, key []byte, version uint64) []byte {
	return append(appendElementPrefix(dst, kindZSet, gen, key, version), zsetScoreTag)
}

// appendZMember appends the member→score row key of member in one
// sorted-set version. Its value is appendScoreValue(score).
func appendZMember(dst []byte, gen uint32, key []byte, version uint64, member []byte) []byte {
	return append(zsetMemberPrefix(dst, gen, key, version), member...)
}

// decodeZMember decodes a member→score row key.
func decodeZMember(b []byte) (gen uint32, key []byte, version uint64, member []byte, err error) {
	gen, key, version, rest, err := decodeElementOf(b, kindZSet)
	if err != nil {
		return 0, nil, 0, nil, err
	}
	if rest[0] != zsetMemberTag {
		return 0, nil, 0, nil, corruptionf("zset member key", len(b)-len(rest), "tag %q, want %q", rest[0], zsetMemberTag)
	}
	return gen, key, version, rest[1:], nil
}

// appendZScore appends the score→member row key of (score, member) in one
// sorted-set version. With a nil member it is the smallest key of that
// score: the place to seek for ZRANGEBYSCORE.
// REQUIRES: score is not NaN (panics).
func appendZScore(dst []byte, gen uint32, key []byte, version uint64, score float64, member []byte) []byte {
	s := encodeScore(score)
	dst = append(zsetScorePrefix(dst, gen, key, version), s[:]...)
	return append(dst, member...)
}

// decodeZScore decodes a score→member row key.
func decodeZScore(b []byte) (gen uint32, key []byte, version uint64, score float64, member []byte, err error) {
	gen, key, version, rest, err := decodeElementOf(b, kindZSet)
	if err != nil {
		return 0, nil, 0, 0, nil, err
	}
	if rest[0] != zsetScoreTag {
		return 0, nil, 0, 0, nil, corruptionf("zset score key", len(b)-len(rest), "tag %q, want %q", rest[0], zsetScoreTag)
	}
	score, member, err = decodeScore(rest[1:])
	if err != nil {
		return 0, nil, 0, 0, nil, err
	}
	return gen, key, version, score, member, nil
}

// encodeScore returns the sortable encoding of a score: the encodings of
// two scores compare bytewise as the scores compare numerically, from -Inf
// to +Inf, subnormals included. -0 encodes as +0, as Redis treats them as
// one score.
// REQUIRES: !math.IsNaN(f). Redis rejects NaN scores, so the caller must
// (ErrNaN); encodeScore panics rather than store a NaN, which would sort
// beyond the infinities and read back as corruption.
func encodeScore(f float64) [8]byte {
	if math.IsNaN(f) {
		panic("keyspace: encodeScore: NaN score")
	}
	if f == 0 {
		f = 0 // -0 → +0
	}
	u := math.Float64bits(f)
	if u>>63 == 1 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], u)
	return b
}

// decodeScore decodes the sortable score at the start of b and returns the
// bytes after it. It rejects the encodings encodeScore never produces: NaNs
// and -0.
func decodeScore(b []byte) (score float64, rest []byte, err error) {
	const what = "score"
	if len(b) < 8 {
		return 0, nil, corruptionf(what, len(b), "truncated at %d bytes", len(b))
	}
	u := binary.BigEndian.Uint64(b)
	if u>>63 == 1 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	f := math.Float64frombits(u)
	if math.IsNaN(f) || (f == 0 && math.Signbit(f)) {
		return 0, nil, corruptionf(what, 0, "score bits %016x are not a stored score", u)
	}
	return f, b[8:], nil
}

// appendScoreValue appends the value of a member→score row: the score's
// float64 bits, -0 stored as +0.
// REQUIRES: !math.IsNaN(score) (panics).
func appendScoreValue(dst []byte, score float64) []byte {
	if math.IsNaN(score) {
		panic("keyspace: appendScoreValue: NaN score")
	}
	if score == 0 {
		score = 0 // -0 → +0
	}
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(score))
}

// decodeScoreValue decodes the value of a member→score row.
func decodeScoreValue(b []byte) (float64, error) {
	const what = "zset score value"
	if len(b) != 8 {
		return 0, corruptionf(what, min(len(b), 8), "%d bytes, want 8", len(b))
	}
	f := math.Float64frombits(binary.BigEndian.Uint64(b))
	if math.IsNaN(f) || (f == 0 && math.Signbit(f)) {
		return 0, corruptionf(what, 0, "bits %x are not a stored score", b)
	}
	return f, nil
}

// appendExpiryKey appends the expiry index key of key, due at at, in
// generation gen.
// REQUIRES: at > 0 (0 means no expiry and has no index row; a negative
// expire_at would sort after every positive one). Panics otherwise.
func appendExpiryKey(dst []byte, gen uint32, at int64, key []byte) []byte {
	if at <= 0 {
		panic(fmt.Sprintf("keyspace: appendExpiryKey: expire_at %d", at))
	}
	dst = append(dst, kindExpiry)
	dst = binary.BigEndian.AppendUint32(dst, gen)
	dst = binary.BigEndian.AppendUint64(dst, uint64(at))
	return append(dst, key...)
}

// expiryPrefix returns the prefix of the expiry index of generation gen.
// The keys due by time now are those from expiryPrefix(gen) up to (not
// including) appendExpiryKey(nil, gen, now+1, nil).
func expiryPrefix(gen uint32) []byte {
	dst := make([]byte, 0, expiryKeyHeaderLen)
	dst = append(dst, kindExpiry)
	return binary.BigEndian.AppendUint32(dst, gen)
}

// decodeExpiryKey decodes an expiry index key.
func decodeExpiryKey(b []byte) (gen uint32, at int64, key []byte, err error) {
	const what = "expiry key"
	if len(b) < expiryKeyHeaderLen {
		return 0, 0, nil, corruptionf(what, len(b), "truncated at %d bytes", len(b))
	}
	if b[0] != kindExpiry {
		return 0, 0, nil, corruptionf(what, 0, "keyspace %q, want %q", b[0], kindExpiry)
	}
	at = int64(binary.BigEndian.Uint64(b[1+genLen:]))
	if at <= 0 {
		return 0, 0, nil, corruptionf(what, 1+genLen, "expire_at %d", at)
	}
	return binary.BigEndian.Uint32(b[1:]), at, b[expiryKeyHeaderLen:], nil
}

// appendExpiryValue appends the value of an expiry index row: the version
// of the key it was written for.
func appendExpiryValue(dst []byte, version uint64) []byte {
	return binary.BigEndian.AppendUint64(dst, version)
}

// decodeExpiryValue decodes the value of an expiry index row.
func decodeExpiryValue(b []byte) (version uint64, err error) {
	if len(b) != 8 {
		return 0, corruptionf("expiry value", min(len(b), 8), "%d bytes, want 8", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// systemGenKey returns the key of the row holding the current generation
// of database dbIndex. Absent, the generation is dbIndex.
// REQUIRES: 0 <= dbIndex <= initialMaxGen (panics).
func systemGenKey(dbIndex int) []byte {
	if dbIndex < 0 || dbIndex > int(initialMaxGen) {
		panic(fmt.Sprintf("keyspace: systemGenKey: database %d", dbIndex))
	}
	return []byte{kindSystem, systemGenTag, byte(dbIndex)}
}

// systemMaxGenKey returns the key of the row holding the highest
// generation ever used. Absent, it is initialMaxGen.
func systemMaxGenKey() []byte {
	return []byte{kindSystem, systemMaxGenTag}
}

// appendGenValue appends the value of a system row: a generation.
func appendGenValue(dst []byte, gen uint32) []byte {
	return binary.BigEndian.AppendUint32(dst, gen)
}

// decodeGenValue decodes the value of a system row.
func decodeGenValue(b []byte) (uint32, error) {
	if len(b) != genLen {
		return 0, corruptionf("generation value", min(len(b), genLen), "%d bytes, want %d", len(b), genLen)
	}
	return binary.BigEndian.Uint32(b), nil
}
