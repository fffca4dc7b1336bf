package keyspacetest

import "math"

// script builds a fixed sequence of ops for TestModelAgainstRedisScripted.
// Every op runs on db 0 unless db says otherwise.
type script struct {
	at  int64
	db  int
	ops []Op
}

func (s *script) add(op Op) *script {
	op.At, op.DB = s.at, s.db
	s.ops = append(s.ops, op)
	return s
}

func (s *script) sleep(ms int64) *script { s.at += ms; return s }
func (s *script) use(db int) *script     { s.db = db; return s }

func b(s string) []byte { return []byte(s) }

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = b(s)
	}
	return out
}

func (s *script) get(k string) *script { return s.add(Op{Kind: OpGet, Key: b(k)}) }
func (s *script) set(k, v string, o SetOptions) *script {
	if o.ExpireAt != 0 {
		o.ExpireAt += s.at // relative in scripts
	}
	return s.add(Op{Kind: OpSet, Key: b(k), Val: b(v), Set: o})
}
func (s *script) pttl(k string) *script   { return s.add(Op{Kind: OpPTTL, Key: b(k)}) }
func (s *script) typeOf(k string) *script { return s.add(Op{Kind: OpTypeOf, Key: b(k)}) }
func (s *script) exists(k ...string) *script {
	return s.add(Op{Kind: OpExists, Args: bs(k...)})
}
func (s *script) del(k ...string) *script { return s.add(Op{Kind: OpDel, Args: bs(k...)}) }
func (s *script) incrBy(k string, d int64) *script {
	return s.add(Op{Kind: OpIncrBy, Key: b(k), Int: d})
}
func (s *script) incrByFloat(k string, d float64) *script {
	return s.add(Op{Kind: OpIncrByFloat, Key: b(k), Float: d})
}
func (s *script) expire(k string, rel int64, c ExpireCond) *script {
	return s.add(Op{Kind: OpExpire, Key: b(k), Int: s.at + rel, Cond: c})
}
func (s *script) rename(src, dst string, nx bool) *script {
	return s.add(Op{Kind: OpRename, Key: b(src), Key2: b(dst), Flag: nx})
}
func (s *script) hset(k string, fv ...string) *script {
	op := Op{Kind: OpHSet, Key: b(k)}
	for i := 0; i+1 < len(fv); i += 2 {
		op.Pairs = append(op.Pairs, [2][]byte{b(fv[i]), b(fv[i+1])})
	}
	return s.add(op)
}
func (s *script) lrange(k string, start, stop int64) *script {
	return s.add(Op{Kind: OpLRange, Key: b(k), Int: start, Int2: stop})
}
func (s *script) zadd(k string, o ZAddOptions, pairs ...any) *script {
	op := Op{Kind: OpZAdd, Key: b(k), ZOpt: o}
	for i := 0; i+1 < len(pairs); i += 2 {
		op.ZPairs = append(op.ZPairs, ZMember{Score: pairs[i].(float64), Member: b(pairs[i+1].(string))})
	}
	return s.add(op)
}
func (s *script) zrange(k string, start, stop int64, rev bool) *script {
	return s.add(Op{Kind: OpZRange, Key: b(k), Int: start, Int2: stop, Flag: rev})
}
func (s *script) zbyscore(k string, lo, hi ScoreBound, off, n int64, rev bool) *script {
	return s.add(Op{Kind: OpZRangeByScore, Key: b(k), Min: lo, Max: hi, Int: off, Int2: n, Flag: rev})
}
func (s *script) scan(match string, count int64, t Type) *script {
	return s.add(Op{Kind: OpScan, Match: match, Int: count, Type: t})
}

var (
	inf  = math.Inf(1)
	ninf = math.Inf(-1)
)

func incl(f float64) ScoreBound { return ScoreBound{Value: f} }
func excl(f float64) ScoreBound { return ScoreBound{Value: f, Exclusive: true} }

func newScript() *script { return &script{at: Epoch} }

var scripts = []struct {
	name string
	ops  []Op
}{
	{"set-options", newScript().
		set("k", "v", SetOptions{}).set("k", "w", SetOptions{NX: true}).get("k").
		set("k", "w", SetOptions{XX: true}).set("missing", "v", SetOptions{XX: true}).exists("missing").
		set("k", "x", SetOptions{Get: true}).set("k", "y", SetOptions{NX: true, Get: true}).
		set("new", "y", SetOptions{NX: true, Get: true}).set("gone", "y", SetOptions{XX: true, Get: true}).
		set("k", "z", SetOptions{ExpireAt: 1000}).pttl("k").
		set("k", "a", SetOptions{}).pttl("k").
		set("k", "b", SetOptions{ExpireAt: 1000}).set("k", "c", SetOptions{KeepTTL: true}).pttl("k").get("k").
		set("k", "d", SetOptions{NX: true, XX: true}).set("k", "d", SetOptions{KeepTTL: true, ExpireAt: 5}).
		set("past", "v", SetOptions{ExpireAt: -5}).get("past").exists("past").
		hset("h", "f", "1").set("h", "v", SetOptions{Get: true}).set("h", "v", SetOptions{NX: true, Get: true}).
		typeOf("h").set("h", "v", SetOptions{}).typeOf("h").get("h").ops},
	{"incrby", newScript().
		incrBy("n", 5).incrBy("n", -7).get("n").
		set("s", "abc", SetOptions{}).incrBy("s", 1).
		set("s", "01", SetOptions{}).incrBy("s", 1).set("s", "-0", SetOptions{}).incrBy("s", 1).
		set("s", "+1", SetOptions{}).incrBy("s", 1).set("s", " 1", SetOptions{}).incrBy("s", 1).
		set("max", "9223372036854775807", SetOptions{}).incrBy("max", 1).incrBy("max", -1).
		set("min", "-9223372036854775808", SetOptions{}).incrBy("min", -1).incrBy("min", math.MaxInt64).
		hset("h", "f", "1").incrBy("h", 1).
		set("t", "1", SetOptions{ExpireAt: 1000}).incrBy("t", 1).pttl("t").ops},
	{"incrbyfloat", newScript().
		incrByFloat("f", 0.1).incrByFloat("f", 0.2).get("f").
		incrByFloat("g", 3.0000000000000004).incrByFloat("g", 4.4e-16).get("g").
		set("e", "1e3", SetOptions{}).incrByFloat("e", 1).
		set("x", "0x10", SetOptions{}).incrByFloat("x", 1).
		set("i", "inf", SetOptions{}).incrByFloat("i", 1).
		set("sp", " 1", SetOptions{}).incrByFloat("sp", 1).
		incrByFloat("d", inf).exists("d").
		incrByFloat("z", 10.5).incrByFloat("z", -10.5).get("z").
		incrByFloat("tiny", -1e-17).incrByFloat("tiny2", 1e-20).get("tiny2").
		incrByFloat("big", 1e17).incrByFloat("big", 0.5).
		incrByFloat("huge", 1e308).incrByFloat("huge", 1e308).get("huge").
		set("t", "1", SetOptions{ExpireAt: 1000}).incrByFloat("t", 1.5).pttl("t").ops},
	{"append-strlen", newScript().
		add(Op{Kind: OpAppend, Key: b("a"), Val: b("he")}).add(Op{Kind: OpAppend, Key: b("a"), Val: b("llo")}).
		add(Op{Kind: OpStrLen, Key: b("a")}).add(Op{Kind: OpStrLen, Key: b("missing")}).
		add(Op{Kind: OpRPush, Key: b("l"), Args: bs("x")}).add(Op{Kind: OpStrLen, Key: b("l")}).
		add(Op{Kind: OpAppend, Key: b("l"), Val: b("x")}).add(Op{Kind: OpGet, Key: b("l")}).ops},
	{"expire", newScript().
		set("k", "v", SetOptions{}).
		expire("k", 1000, ExpireCond{GT: true}).expire("k", 1000, ExpireCond{XX: true}).
		expire("k", 1000, ExpireCond{NX: true}).expire("k", 2000, ExpireCond{NX: true}).pttl("k").
		expire("k", 2000, ExpireCond{GT: true}).expire("k", 3000, ExpireCond{LT: true}).
		expire("k", 500, ExpireCond{LT: true, XX: true}).pttl("k").
		add(Op{Kind: OpPersist, Key: b("k")}).add(Op{Kind: OpPersist, Key: b("k")}).pttl("k").
		expire("k", 500, ExpireCond{LT: true}).pttl("k").
		expire("k", 1, ExpireCond{NX: true, XX: true}).expire("k", 1, ExpireCond{GT: true, LT: true}).
		expire("k", 1, ExpireCond{NX: true, GT: true}).expire("k", 1, ExpireCond{NX: true, LT: true}).
		expire("missing", 1000, ExpireCond{}).expire("missing", 1, ExpireCond{GT: true, LT: true}).
		expire("k", -1, ExpireCond{}).exists("k").pttl("k").
		set("k", "v", SetOptions{}).expire("k", 0, ExpireCond{}).exists("k").
		set("s", "v", SetOptions{}).expire("s", 40, ExpireCond{}).exists("s").sleep(60).exists("s").
		pttl("s").typeOf("s").get("s").ops},
	{"rename", newScript().
		rename("missing", "x", false).rename("missing", "x", true).rename("missing", "missing", false).
		set("k", "v", SetOptions{ExpireAt: 5000}).rename("k", "k", false).rename("k", "k", true).
		rename("k", "j", false).exists("k").get("j").pttl("j").
		hset("h", "f", "1").rename("j", "h", true).rename("j", "h", false).typeOf("h").get("h").pttl("h").
		set("a", "1", SetOptions{}).rename("h", "a", false).pttl("a").ops},
	{"del-exists", newScript().
		set("k", "v", SetOptions{}).exists("k", "k", "missing").del("k", "k", "missing").exists("k").
		set("", "empty key", SetOptions{}).exists("").get("").ops},
	{"hash", newScript().
		hset("h", "f", "1", "f", "2").add(Op{Kind: OpHGet, Key: b("h"), Field: b("f")}).
		add(Op{Kind: OpHIncrBy, Key: b("h"), Field: b("f"), Int: 5}).
		add(Op{Kind: OpHIncrBy, Key: b("h"), Field: b("n"), Int: -3}).
		hset("h", "x", "abc").add(Op{Kind: OpHIncrBy, Key: b("h"), Field: b("x"), Int: 1}).
		add(Op{Kind: OpHIncrByFloat, Key: b("h"), Field: b("x"), Float: 1}).
		add(Op{Kind: OpHIncrByFloat, Key: b("h"), Field: b("g"), Float: inf}).
		add(Op{Kind: OpHIncrByFloat, Key: b("new"), Field: b("g"), Float: inf}).exists("new").
		add(Op{Kind: OpHIncrByFloat, Key: b("h"), Field: b("f"), Float: 0.1}).
		hset("h", "max", "9223372036854775807").add(Op{Kind: OpHIncrBy, Key: b("h"), Field: b("max"), Int: 1}).
		add(Op{Kind: OpHGetAll, Key: b("h")}).add(Op{Kind: OpHLen, Key: b("h")}).
		add(Op{Kind: OpHExists, Key: b("h"), Field: b("f")}).
		add(Op{Kind: OpHDel, Key: b("h"), Args: bs("f", "f", "n", "x", "max", "zz")}).
		add(Op{Kind: OpHDel, Key: b("h"), Args: bs("g")}).typeOf("h").exists("h").
		set("s", "v", SetOptions{}).hset("s", "f", "1").add(Op{Kind: OpHGet, Key: b("s"), Field: b("f")}).ops},
	{"list", newScript().
		add(Op{Kind: OpLPush, Key: b("l"), Args: bs("a", "b", "c")}).lrange("l", 0, -1).
		add(Op{Kind: OpLPop, Key: b("l"), Int: 0}).add(Op{Kind: OpLPop, Key: b("missing"), Int: 0}).
		add(Op{Kind: OpLPop, Key: b("missing"), Int: 2}).
		add(Op{Kind: OpRPush, Key: b("l"), Args: bs("d", "e")}).
		add(Op{Kind: OpLIndex, Key: b("l"), Int: -1}).add(Op{Kind: OpLIndex, Key: b("l"), Int: 5}).
		add(Op{Kind: OpLSet, Key: b("l"), Int: -1, Val: b("E")}).add(Op{Kind: OpLSet, Key: b("l"), Int: 5, Val: b("x")}).
		add(Op{Kind: OpLSet, Key: b("l"), Int: -6, Val: b("x")}).add(Op{Kind: OpLSet, Key: b("missing"), Int: 0, Val: b("x")}).
		lrange("l", -100, 100).lrange("l", 3, 1).lrange("l", -1, -2).lrange("l", -2, -1).lrange("l", 10, 20).
		add(Op{Kind: OpLPop, Key: b("l"), Int: 2}).
		add(Op{Kind: OpLPushX, Key: b("missing"), Args: bs("x")}).exists("missing").
		add(Op{Kind: OpRPushX, Key: b("l"), Args: bs("y", "z")}).
		add(Op{Kind: OpRPop, Key: b("l"), Int: 10}).exists("l").typeOf("l").
		set("s", "v", SetOptions{}).add(Op{Kind: OpLPop, Key: b("s"), Int: 0}).
		add(Op{Kind: OpLSet, Key: b("s"), Int: 0, Val: b("x")}).lrange("s", 0, -1).ops},
	{"set", newScript().
		add(Op{Kind: OpSAdd, Key: b("s"), Args: bs("b", "a", "b", "")}).add(Op{Kind: OpSMembers, Key: b("s")}).
		add(Op{Kind: OpSIsMember, Key: b("s"), Field: b("")}).add(Op{Kind: OpSCard, Key: b("s")}).
		add(Op{Kind: OpSRem, Key: b("s"), Args: bs("a", "a", "b", "", "x")}).exists("s").
		add(Op{Kind: OpSMembers, Key: b("missing")}).ops},
	{"zset", newScript().
		zadd("z", ZAddOptions{NX: true, XX: true}, 1.0, "a").zadd("z", ZAddOptions{GT: true, LT: true}, 1.0, "a").
		zadd("z", ZAddOptions{NX: true, GT: true}, 1.0, "a").zadd("z", ZAddOptions{NX: true, XX: true, GT: true}, 1.0, "a").
		zadd("z", ZAddOptions{XX: true, GT: true}, 1.0, "a").exists("z").
		zadd("z", ZAddOptions{}, 1.0, "b", 1.0, "a", 2.0, "c", -1.0, "d", 1.0, "b").
		zadd("z", ZAddOptions{CH: true}, 5.0, "a", 5.0, "a", 7.0, "e").
		zadd("z", ZAddOptions{GT: true, CH: true}, 4.0, "a", 6.0, "c").
		zadd("z", ZAddOptions{LT: true, CH: true}, 4.0, "a", 9.0, "f").
		zadd("z", ZAddOptions{XX: true, CH: true}, 0.0, "a", 1.0, "g").
		zadd("z", ZAddOptions{NX: true}, 3.0, "a", 3.0, "h").
		zrange("z", 0, -1, false).zrange("z", -2, -1, false).zrange("z", 0, 1, true).zrange("z", 5, 100, false).
		zbyscore("z", incl(1), incl(3), 0, -1, false).zbyscore("z", excl(1), incl(3), 0, -1, false).
		zbyscore("z", ScoreBound{Value: ninf}, ScoreBound{Value: inf}, 1, 2, false).
		zbyscore("z", ScoreBound{Value: ninf}, excl(3), 1, 2, true).
		zbyscore("z", incl(3), incl(1), 0, -1, false).zbyscore("z", excl(1), excl(1), 0, -1, false).
		zbyscore("z", ScoreBound{Value: ninf}, ScoreBound{Value: inf}, -1, 2, false).
		zbyscore("z", ScoreBound{Value: ninf}, ScoreBound{Value: inf}, 1, 0, false).
		add(Op{Kind: OpZRank, Key: b("z"), Field: b("b")}).add(Op{Kind: OpZRank, Key: b("z"), Field: b("b"), Flag: true}).
		add(Op{Kind: OpZRank, Key: b("z"), Field: b("nope")}).
		add(Op{Kind: OpZIncrBy, Key: b("z"), Field: b("i"), Float: inf}).
		add(Op{Kind: OpZIncrBy, Key: b("z"), Field: b("i"), Float: ninf}).
		add(Op{Kind: OpZIncrBy, Key: b("z"), Field: b("b"), Float: 0.1}).
		add(Op{Kind: OpZIncrBy, Key: b("z"), Field: b("b"), Float: 0.2}).
		zadd("z", ZAddOptions{}, math.Copysign(0, -1), "negzero").
		add(Op{Kind: OpZScore, Key: b("z"), Field: b("negzero")}).
		add(Op{Kind: OpZScore, Key: b("z"), Field: b("i")}).
		add(Op{Kind: OpZRem, Key: b("z"), Args: bs("a", "b", "c", "d", "e", "f", "h", "i", "negzero", "a")}).
		add(Op{Kind: OpZCard, Key: b("z")}).exists("z").
		zadd("gone", ZAddOptions{XX: true}, 1.0, "a").exists("gone").
		set("s", "v", SetOptions{}).zadd("s", ZAddOptions{}, 1.0, "a").
		zadd("s", ZAddOptions{NX: true, XX: true}, 1.0, "a").zrange("s", 0, -1, false).ops},
	{"scan-flush", newScript().
		set("k1", "v", SetOptions{}).set("k2", "v", SetOptions{}).set("", "v", SetOptions{}).
		hset("h1", "f", "v").add(Op{Kind: OpSAdd, Key: b("k*"), Args: bs("m")}).
		scan("*", 1, TypeNone).scan("k?", 2, TypeNone).scan(`k\*`, 0, TypeNone).scan("*", 0, TypeHash).
		scan("k*", 3, TypeString).
		add(Op{Kind: OpDBSize}).add(Op{Kind: OpRandomKey}).
		set("t", "v", SetOptions{ExpireAt: 30}).sleep(50).add(Op{Kind: OpDBSize}).scan("", 0, TypeNone).
		use(1).set("one", "v", SetOptions{}).add(Op{Kind: OpDBSize}).add(Op{Kind: OpFlushDB}).
		add(Op{Kind: OpDBSize}).add(Op{Kind: OpRandomKey}).
		use(0).add(Op{Kind: OpDBSize}).use(15).set("x", "v", SetOptions{}).
		add(Op{Kind: OpFlushAll}).use(0).add(Op{Kind: OpDBSize}).use(15).exists("x").ops},
}
