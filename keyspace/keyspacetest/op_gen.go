package keyspacetest

import (
	"math"
	"math/rand/v2"
)

// RandomOps returns n random ops. The key space is small (ten keys and a
// few odd ones in dbs 0, 1 and 15; few fields and members) so commands
// collide on the same keys: wrong types, deletes and re-creation with
// another type, renames onto live keys. Values include non-numbers and
// edge numbers; TTLs are short relative to At, which advances a few ms now
// and then, so keys expire during a run. Invalid option combinations (SET
// NX XX, ZADD NX GT, EXPIRE NX GT ...) appear now and then.
func RandomOps(rnd *rand.Rand, n int) []Op {
	g := &opGen{rnd: rnd, at: Epoch}
	total := 0
	for _, s := range opTable {
		total += s.weight
	}
	ops := make([]Op, 0, n)
	for range n {
		if rnd.IntN(10) == 0 {
			g.at += 1 + rnd.Int64N(40)
		}
		pick := rnd.IntN(total)
		kind := OpKind(0)
		for ; pick >= opTable[kind].weight; kind++ {
			pick -= opTable[kind].weight
		}
		g.home = kind.home()
		op := Op{Kind: kind, At: g.at, DB: g.db()}
		opTable[kind].gen(g, &op)
		ops = append(ops, op)
	}
	return ops
}

// opGen draws the arguments of ops.
type opGen struct {
	rnd  *rand.Rand
	at   int64
	home Type // the type of the op being drawn; TypeNone for key commands
}

// home returns the type of value the command works on, TypeNone for the
// commands on keys of any type.
func (k OpKind) home() Type {
	switch {
	case k <= OpStrLen:
		return TypeString
	case k <= OpFlushAll:
		return TypeNone
	case k <= OpHIncrByFloat:
		return TypeHash
	case k <= OpLRange:
		return TypeList
	case k <= OpSMembers:
		return TypeSet
	}
	return TypeZSet
}

var (
	genKeyNames = []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"}
	// Odd keys: the empty key, and keys with glob metacharacters.
	genOddKeys    = []string{"", "k*", "k?x", "[k]", `k\`, "k\x00\xff"}
	genFieldVals  = []string{"f0", "f1", "f2", "f3"}
	genMemberList = []string{"m0", "m1", "m2", "m3", "m4", ""}
	genValueList  = []string{
		"", "a", "bb", "hello", "0", "1", "10", "-3", "01", "-0", "+1", " 1", "1.5", "-2.25",
		"3.0000000000000004", "1e3", "inf", "0x10", "9223372036854775807", "-9223372036854775808",
		"\x00\xff",
	}
	genInts   = []int64{-3, -2, -1, 0, 1, 2, 3, 10, 100, math.MaxInt64, math.MinInt64, 1 << 62}
	genFloats = []float64{0, 0.1, 0.2, -0.5, 1.5, 2, 10.5, -10.5, 3.0000000000000004, 1e-3, 1e15, 0.3, -1e-17}
	genScores = []float64{-2, -1, 0, 0.5, 1, 1, 2, 3.25, 1e-3}
	// genTTLs are ms from At: past, now, and near and far future.
	genTTLs = []int64{-1000, -1, 0, 1, 2, 5, 10, 20, 40, 80, 200, 1000, 3_600_000}
	// genPatterns exercise every glob feature over the key names.
	genPatterns = []string{
		"*", "k?", "k[0-2]", "k[^0-2]", "*1*", `k\*`, "[a-k]*", "k[", "\\k0", "k[2-0]", "?", "[]]*",
		"*x", "k?x", "[\\[]*", "**", "k*[",
	}
)

func (g *opGen) pick(n int) int { return g.rnd.IntN(n) }
func (g *opGen) pct(p int) bool { return g.rnd.IntN(100) < p }

func (g *opGen) db() int {
	switch p := g.pick(10); {
	case p < 7:
		return 0
	case p < 9:
		return 1
	}
	return 15
}

// key draws a key. A typed command mostly draws one of the two keys of its
// type (k0 k1 strings, k2 k3 hashes, ... k8 k9 sorted sets), so that
// collections grow; else, and for key commands, any key.
func (g *opGen) key() []byte {
	switch {
	case g.pct(4):
		return []byte(genOddKeys[g.pick(len(genOddKeys))])
	case g.home != TypeNone && g.pct(80):
		return []byte(genKeyNames[2*int(g.home-TypeString)+g.pick(2)])
	}
	return []byte(genKeyNames[g.pick(len(genKeyNames))])
}

func (g *opGen) value() []byte  { return []byte(genValueList[g.pick(len(genValueList))]) }
func (g *opGen) field() []byte  { return []byte(genFieldVals[g.pick(len(genFieldVals))]) }
func (g *opGen) member() []byte { return []byte(genMemberList[g.pick(len(genMemberList))]) }
func (g *opGen) count() int     { return 1 + g.pick(3) }

func (g *opGen) int() int64 {
	if g.pct(80) {
		return int64(g.pick(7) - 3)
	}
	return genInts[g.pick(len(genInts))]
}

func (g *opGen) float() float64 {
	if g.pct(2) {
		return math.Inf(1 - 2*g.pick(2))
	}
	return genFloats[g.pick(len(genFloats))]
}

func (g *opGen) score() float64 {
	if g.pct(5) {
		return math.Inf(1 - 2*g.pick(2))
	}
	s := genScores[g.pick(len(genScores))]
	if g.pct(10) {
		s = -s
	}
	return s
}

func (g *opGen) expireAt() int64 { return g.at + genTTLs[g.pick(len(genTTLs))] }

// index draws a list index or range end: mostly near the ends, sometimes
// far outside.
func (g *opGen) index() int64 {
	if g.pct(10) {
		return int64(g.pick(201) - 100)
	}
	return int64(g.pick(11) - 5)
}

func genNothing(*opGen, *Op)     {}
func genKey(g *opGen, op *Op)    { op.Key = g.key() }
func genKeyVal(g *opGen, op *Op) { op.Key, op.Val = g.key(), g.value() }

func genKeys(g *opGen, op *Op) {
	for range g.count() {
		op.Args = append(op.Args, g.key())
	}
}

func genSet(g *opGen, op *Op) {
	genKeyVal(g, op)
	op.Set = SetOptions{NX: g.pct(15), XX: g.pct(15), Get: g.pct(30), KeepTTL: g.pct(15)}
	if g.pct(25) {
		op.Set.ExpireAt = g.expireAt()
	}
}

func genIncrBy(g *opGen, op *Op)      { op.Key, op.Int = g.key(), g.int() }
func genIncrByFloat(g *opGen, op *Op) { op.Key, op.Float = g.key(), g.float() }

func genRename(g *opGen, op *Op) {
	op.Key, op.Key2, op.Flag = g.key(), g.key(), g.pct(40)
}

func genExpire(g *opGen, op *Op) {
	op.Key, op.Int = g.key(), g.expireAt()
	op.Cond = ExpireCond{NX: g.pct(15), XX: g.pct(15), GT: g.pct(15), LT: g.pct(15)}
}

func genScan(g *opGen, op *Op) {
	op.Match = genPatterns[g.pick(len(genPatterns))]
	op.Int = int64(g.pick(5)) // 0: the default count
	if g.pct(30) {
		op.Type = Type(1 + g.pick(5))
	}
}

func genHSet(g *opGen, op *Op) {
	op.Key = g.key()
	for range g.count() {
		op.Pairs = append(op.Pairs, [2][]byte{g.field(), g.value()})
	}
}

func genField(g *opGen, op *Op) { op.Key, op.Field = g.key(), g.field() }

func genFields(g *opGen, op *Op) {
	op.Key = g.key()
	for range g.count() {
		op.Args = append(op.Args, g.field())
	}
}

func genHIncrBy(g *opGen, op *Op)      { genField(g, op); op.Int = g.int() }
func genHIncrByFloat(g *opGen, op *Op) { genField(g, op); op.Float = g.float() }

func genValues(g *opGen, op *Op) {
	op.Key = g.key()
	for range g.count() {
		op.Args = append(op.Args, g.value())
	}
}

func genPop(g *opGen, op *Op) {
	op.Key = g.key()
	op.Int = int64(g.pick(4)) // 0..3: 0 pops nothing from a list that exists
}

func genIndex(g *opGen, op *Op) { op.Key, op.Int = g.key(), int64(g.pick(9)-4) }
func genLSet(g *opGen, op *Op)  { genIndex(g, op); op.Val = g.value() }
func genRange(g *opGen, op *Op) { op.Key, op.Int, op.Int2 = g.key(), g.index(), g.index() }

func genMember(g *opGen, op *Op) { op.Key, op.Field = g.key(), g.member() }

func genMembers(g *opGen, op *Op) {
	op.Key = g.key()
	for range g.count() {
		op.Args = append(op.Args, g.member())
	}
}

func genZAdd(g *opGen, op *Op) {
	op.Key = g.key()
	op.ZOpt = ZAddOptions{NX: g.pct(12), XX: g.pct(12), GT: g.pct(12), LT: g.pct(12), CH: g.pct(25)}
	for range g.count() {
		op.ZPairs = append(op.ZPairs, ZMember{Score: g.score(), Member: g.member()})
	}
}

func genZIncrBy(g *opGen, op *Op) {
	op.Key, op.Field = g.key(), g.member()
	op.Float = g.score()
	if g.pct(30) {
		op.Float = g.float()
	}
}

func genZRange(g *opGen, op *Op) { genRange(g, op); op.Flag = g.pct(30) }

func genZRangeByScore(g *opGen, op *Op) {
	op.Key, op.Flag = g.key(), g.pct(30)
	bound := func() ScoreBound {
		if g.pct(15) {
			return ScoreBound{Value: math.Inf(1 - 2*g.pick(2))}
		}
		return ScoreBound{Value: g.score(), Exclusive: g.pct(30)}
	}
	op.Min, op.Max = bound(), bound()
	if op.Min.Value > op.Max.Value && g.pct(80) {
		op.Min, op.Max = op.Max, op.Min
	}
	op.Int, op.Int2 = 0, -1
	if g.pct(40) {
		op.Int, op.Int2 = int64(g.pick(5)-1), int64(g.pick(5)-1)
	}
}

func genZRank(g *opGen, op *Op) { genMember(g, op); op.Flag = g.pct(30) }
