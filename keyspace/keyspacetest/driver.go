package keyspacetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Commands is the Store API: keyspace.Store, Model, and this package's
// tests' adapter over real Redis all implement it, so one random sequence
// of Ops runs on any two of them and their Results compare.
type Commands interface {
	Get(ctx context.Context, db int, key []byte) ([]byte, bool, error)
	Set(ctx context.Context, db int, key, val []byte, o SetOptions) (old []byte, hadOld, ok bool, err error)
	IncrBy(ctx context.Context, db int, key []byte, delta int64) (int64, error)
	IncrByFloat(ctx context.Context, db int, key []byte, delta float64) (float64, error)
	Append(ctx context.Context, db int, key, val []byte) (int64, error)
	StrLen(ctx context.Context, db int, key []byte) (int64, error)

	Exists(ctx context.Context, db int, keys ...[]byte) (int64, error)
	TypeOf(ctx context.Context, db int, key []byte) (Type, error)
	Del(ctx context.Context, db int, keys ...[]byte) (int64, error)
	Rename(ctx context.Context, db int, src, dst []byte, nx bool) (bool, error)
	Expire(ctx context.Context, db int, key []byte, atMs int64, cond ExpireCond) (bool, error)
	Persist(ctx context.Context, db int, key []byte) (bool, error)
	PTTL(ctx context.Context, db int, key []byte) (int64, error)
	Scan(ctx context.Context, db int, cursor []byte, match string, count int, typ Type) (next []byte, keys [][]byte, err error)
	DBSize(ctx context.Context, db int) (int64, error)
	RandomKey(ctx context.Context, db int) ([]byte, bool, error)
	FlushDB(ctx context.Context, db int) error
	FlushAll(ctx context.Context) error

	HSet(ctx context.Context, db int, key []byte, pairs ...[2][]byte) (int64, error)
	HGet(ctx context.Context, db int, key, field []byte) ([]byte, bool, error)
	HDel(ctx context.Context, db int, key []byte, fields ...[]byte) (int64, error)
	HLen(ctx context.Context, db int, key []byte) (int64, error)
	HExists(ctx context.Context, db int, key, field []byte) (bool, error)
	HGetAll(ctx context.Context, db int, key []byte) ([][2][]byte, error)
	HIncrBy(ctx context.Context, db int, key, field []byte, delta int64) (int64, error)
	HIncrByFloat(ctx context.Context, db int, key, field []byte, delta float64) (float64, error)

	LPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error)
	RPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error)
	LPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error)
	RPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error)
	LPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error)
	RPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error)
	LLen(ctx context.Context, db int, key []byte) (int64, error)
	LIndex(ctx context.Context, db int, key []byte, i int64) ([]byte, bool, error)
	LSet(ctx context.Context, db int, key []byte, i int64, val []byte) error
	LRange(ctx context.Context, db int, key []byte, start, stop int64) ([][]byte, error)

	SAdd(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error)
	SRem(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error)
	SCard(ctx context.Context, db int, key []byte) (int64, error)
	SIsMember(ctx context.Context, db int, key, member []byte) (bool, error)
	SMembers(ctx context.Context, db int, key []byte) ([][]byte, error)

	ZAdd(ctx context.Context, db int, key []byte, o ZAddOptions, pairs ...ZMember) (int64, error)
	ZIncrBy(ctx context.Context, db int, key []byte, delta float64, member []byte) (float64, error)
	ZRem(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error)
	ZCard(ctx context.Context, db int, key []byte) (int64, error)
	ZScore(ctx context.Context, db int, key, member []byte) (float64, bool, error)
	ZRange(ctx context.Context, db int, key []byte, start, stop int64, rev bool) ([]ZMember, error)
	ZRangeByScore(ctx context.Context, db int, key []byte, min, max ScoreBound, offset, count int64, rev bool) ([]ZMember, error)
	ZRank(ctx context.Context, db int, key, member []byte, rev bool) (int64, bool, error)
}

var _ Commands = (*Model)(nil)

// Op is one command with its arguments. Which fields it uses depends on
// Kind (see opTable); the rest are zero.
//
// At is the clock, in ms, at which the op is to run: Apply does not touch
// any clock, so the caller sets the clocks of both implementations to At
// first. Ats from RandomOps start at Epoch and never decrease; the absolute
// times in an op (Set.ExpireAt, Expire's Int) are relative to its At (see
// Rebase).
type Op struct {
	Kind   OpKind
	At     int64
	DB     int
	Key    []byte
	Key2   []byte      // Rename: dst
	Args   [][]byte    // Exists, Del: keys; HDel: fields; pushes: values; SAdd, SRem, ZRem: members
	Pairs  [][2][]byte // HSet
	ZPairs []ZMember   // ZAdd
	Field  []byte      // hash field; SIsMember, ZIncrBy, ZScore, ZRank: member
	Val    []byte      // Set, Append, LSet
	Int    int64       // delta, index, start, Expire's atMs, pop and Scan count, ZRangeByScore offset
	Int2   int64       // stop; ZRangeByScore count
	Float  float64     // float delta
	Flag   bool        // Rename: nx; ZRange, ZRangeByScore, ZRank: rev
	Set    SetOptions
	Cond   ExpireCond
	ZOpt   ZAddOptions
	Min    ScoreBound
	Max    ScoreBound
	Match  string // Scan
	Type   Type   // Scan
}

// Epoch is the At of the first op RandomOps makes (2023-11-14).
const Epoch int64 = 1_700_000_000_000

// Rebase returns op moved to run at at: At and the absolute times it
// carries shift together, so TTLs stay what they were relative to At.
func (op Op) Rebase(at int64) Op {
	d := at - op.At
	op.At = at
	if op.Set.ExpireAt != 0 {
		op.Set.ExpireAt += d
	}
	if op.Kind == OpExpire {
		op.Int += d
	}
	return op
}

// InvalidOptions reports whether op combines options that Redis rejects
// while parsing the command (SET NX XX, SET KEEPTTL PXAT, EXPIRE NX GT, EXPIRE
// GT LT, ZADD NX XX, ZADD NX GT ...). RandomOps draws such ops now and
// then; an implementation that leaves those checks to its caller (the RESP
// layer) can be compared on the other ops by skipping these.
func (op Op) InvalidOptions() bool {
	switch op.Kind {
	case OpSet:
		return (op.Set.NX && op.Set.XX) || (op.Set.KeepTTL && op.Set.ExpireAt != 0) || op.Set.ExpireAt < 0
	case OpExpire:
		c := op.Cond
		return (c.NX && (c.XX || c.GT || c.LT)) || (c.GT && c.LT)
	case OpZAdd:
		o := op.ZOpt
		return (o.NX && (o.XX || o.GT || o.LT)) || (o.GT && o.LT)
	}
	return false
}

// String renders op as a command line, its At as ms after Epoch, e.g.
// `@+12 db1 SET "k1" "v" NX GET PXAT @+40`.
func (op Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "@%+d db%d %s", op.At-Epoch, op.DB, opTable[op.Kind].name)
	q := func(v []byte) { fmt.Fprintf(&b, " %q", v) }
	if op.Kind != OpExists && op.Kind != OpDel && op.Kind != OpDBSize && op.Kind != OpRandomKey &&
		op.Kind != OpFlushDB && op.Kind != OpFlushAll && op.Kind != OpScan {
		q(op.Key)
	}
	if op.Key2 != nil {
		q(op.Key2)
	}
	if op.Field != nil {
		q(op.Field)
	}
	if op.Val != nil {
		q(op.Val)
	}
	for _, a := range op.Args {
		q(a)
	}
	for _, p := range op.Pairs {
		q(p[0])
		q(p[1])
	}
	for _, z := range op.ZPairs {
		fmt.Fprintf(&b, " %v %q", z.Score, z.Member)
	}
	if s := opTable[op.Kind].extra; s != nil {
		b.WriteString(s(op))
	}
	return b.String()
}

// Result is one command's reply, in a form two implementations' replies
// compare in (Equal). Err is the error's text; when it is set every other
// field is zero. Nil marks a null reply (missing key, field, member or
// index; LPop/RPop of a missing key).
type Result struct {
	Err   string
	Nil   bool
	Int   int64
	Float float64
	Bool  bool
	Bytes []byte
	List  [][]byte
	Pairs [][2][]byte
	Z     []ZMember
	Type  Type
}

func (r Result) String() string {
	if r.Err != "" {
		return "error " + strconv.Quote(r.Err)
	}
	var parts []string
	add := func(format string, a ...any) { parts = append(parts, fmt.Sprintf(format, a...)) }
	if r.Nil {
		add("nil")
	}
	if r.Int != 0 {
		add("int %d", r.Int)
	}
	if r.Float != 0 {
		add("float %v", r.Float)
	}
	if r.Bool {
		add("true")
	}
	if r.Bytes != nil {
		add("%q", r.Bytes)
	}
	if len(r.List) > 0 {
		add("%q", r.List)
	}
	if len(r.Pairs) > 0 {
		add("%q", r.Pairs)
	}
	for _, z := range r.Z {
		add("%v:%q", z.Score, z.Member)
	}
	if r.Type != TypeNone {
		add("type %s", r.Type)
	}
	if len(parts) == 0 {
		return "zero"
	}
	return strings.Join(parts, " ")
}

// Equal reports whether a and b are the same reply. Empty and nil byte
// slices and lists are equal (Nil tells a null reply apart); floats
// compare with ==, so -0 equals 0 (Redis prints either).
func Equal(a, b Result) bool {
	if a.Err != b.Err || a.Nil != b.Nil || a.Int != b.Int || a.Bool != b.Bool || a.Type != b.Type ||
		!(a.Float == b.Float || (math.IsNaN(a.Float) && math.IsNaN(b.Float))) ||
		!bytes.Equal(a.Bytes, b.Bytes) ||
		!slices.EqualFunc(a.List, b.List, bytes.Equal) ||
		!slices.EqualFunc(a.Pairs, b.Pairs, func(x, y [2][]byte) bool {
			return bytes.Equal(x[0], y[0]) && bytes.Equal(x[1], y[1])
		}) ||
		!slices.EqualFunc(a.Z, b.Z, func(x, y ZMember) bool {
			return x.Score == y.Score && bytes.Equal(x.Member, y.Member)
		}) {
		return false
	}
	return true
}

// Apply runs op on c and returns its reply. Scan runs a whole scan, from
// the first cursor to the last, and returns the keys it saw, sorted and
// without duplicates; RandomKey returns only whether it found a key, and
// an error if the key it named does not exist.
func Apply(ctx context.Context, c Commands, op Op) Result {
	return opTable[op.Kind].apply(ctx, c, op)
}

// result builds a Result from a reply's error and its fields.
func result(err error, r Result) Result {
	if err != nil {
		return Result{Err: err.Error()}
	}
	return r
}
