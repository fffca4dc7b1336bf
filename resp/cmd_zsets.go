package resp

import (
	"math"
	"strconv"

	"github.com/stratakv/strata/keyspace"
)

var zsetCommands = []*command{
	{name: "zadd", arity: -4, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 3, handler: cmdZAdd,
		group: "sorted-set", summary: "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist."},
	{name: "zincrby", arity: 4, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 3, handler: cmdZIncrBy,
		group: "sorted-set", summary: "Increments the score of a member in a sorted set."},
	{name: "zrem", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdZRem,
		group: "sorted-set", summary: "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed."},
	{name: "zscore", arity: 3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdZScore,
		group: "sorted-set", summary: "Returns the score of a member in a sorted set."},
	{name: "zmscore", arity: -3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdZMScore,
		group: "sorted-set", summary: "Returns the score of one or more members in a sorted set."},
	{name: "zcard", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdZCard,
		group: "sorted-set", summary: "Returns the number of members in a sorted set."},
	{name: "zcount", arity: 4, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdZCount,
		group: "sorted-set", summary: "Returns the count of members in a sorted set that have scores within a range."},
	{name: "zlexcount", arity: 4, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdZLexCount,
		group: "sorted-set", summary: "Returns the number of members in a sorted set within a lexicographical range."},
	{name: "zrank", arity: 3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdZRank,
		group: "sorted-set", summary: "Returns the index of a member in a sorted set ordered by ascending scores."},
	{name: "zrevrank", arity: 3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdZRank,
		group: "sorted-set", summary: "Returns the index of a member in a sorted set ordered by descending scores."},
	{name: "zrange", arity: -4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZRange,
		group: "sorted-set", summary: "Returns members in a sorted set within a range of indexes."},
	{name: "zrangebyscore", arity: -4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZRange,
		group: "sorted-set", summary: "Returns members in a sorted set within a range of scores."},
	{name: "zrevrangebyscore", arity: -4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZRange,
		group: "sorted-set", summary: "Returns members in a sorted set within a range of scores in reverse order."},
	{name: "zrangebylex", arity: -4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZRange,
		group: "sorted-set", summary: "Returns members in a sorted set within a lexicographical range."},
	{name: "zrevrangebylex", arity: -4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZRange,
		group: "sorted-set", summary: "Returns members in a sorted set within a lexicographical range in reverse order."},
	{name: "zrevrange", arity: -4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZRange,
		group: "sorted-set", summary: "Returns members in a sorted set within a range of indexes in reverse order."},
	{name: "zrangestore", arity: -5, flags: flagWrite, first: 1, last: 2, step: 1, handler: cmdZRange,
		group: "sorted-set", summary: "Stores a range of members from sorted set in a key."},
	{name: "zpopmin", arity: -2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdZPop,
		group: "sorted-set", summary: "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."},
	{name: "zpopmax", arity: -2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdZPop,
		group: "sorted-set", summary: "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."},
	{name: "bzpopmin", arity: -3, flags: flagWrite | flagBlocking | flagFast | flagNoScript, first: 1, last: -2, step: 1, handler: cmdBZPop,
		group: "sorted-set", summary: "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."},
	{name: "bzpopmax", arity: -3, flags: flagWrite | flagBlocking | flagFast | flagNoScript, first: 1, last: -2, step: 1, handler: cmdBZPop,
		group: "sorted-set", summary: "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped."},
	{name: "zmpop", arity: -4, flags: flagWrite, keys: numkeysKeys(1, false), handler: cmdZMPop,
		group: "sorted-set", summary: "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped."},
	{name: "bzmpop", arity: -5, flags: flagWrite | flagBlocking, keys: numkeysKeys(2, false), handler: cmdZMPop,
		group: "sorted-set", summary: "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."},
	{name: "zrandmember", arity: -2, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZRandMember,
		group: "sorted-set", summary: "Returns one or more random members from a sorted set."},
	{name: "zremrangebyrank", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdZRemRange,
		group: "sorted-set", summary: "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed."},
	{name: "zremrangebyscore", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdZRemRange,
		group: "sorted-set", summary: "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed."},
	{name: "zremrangebylex", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdZRemRange,
		group: "sorted-set", summary: "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed."},
	{name: "zunionstore", arity: -4, flags: flagWrite, first: 1, last: 1, step: 1, keys: numkeysKeys(2, true), handler: cmdZAlgebra,
		group: "sorted-set", summary: "Stores the union of multiple sorted sets in a key."},
	{name: "zinterstore", arity: -4, flags: flagWrite, first: 1, last: 1, step: 1, keys: numkeysKeys(2, true), handler: cmdZAlgebra,
		group: "sorted-set", summary: "Stores the intersect of multiple sorted sets in a key."},
	{name: "zdiffstore", arity: -4, flags: flagWrite, first: 1, last: 1, step: 1, keys: numkeysKeys(2, true), handler: cmdZAlgebra,
		group: "sorted-set", summary: "Stores the difference of multiple sorted sets in a key."},
	{name: "zunion", arity: -3, flags: flagReadonly, keys: numkeysKeys(1, false), handler: cmdZAlgebra,
		group: "sorted-set", summary: "Returns the union of multiple sorted sets."},
	{name: "zinter", arity: -3, flags: flagReadonly, keys: numkeysKeys(1, false), handler: cmdZAlgebra,
		group: "sorted-set", summary: "Returns the intersect of multiple sorted sets."},
	{name: "zdiff", arity: -3, flags: flagReadonly, keys: numkeysKeys(1, false), handler: cmdZAlgebra,
		group: "sorted-set", summary: "Returns the difference between multiple sorted sets."},
	{name: "zintercard", arity: -3, flags: flagReadonly, keys: numkeysKeys(1, false), handler: cmdZAlgebra,
		group: "sorted-set", summary: "Returns the number of members of the intersect of multiple sorted sets."},
	{name: "zscan", arity: -3, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdZScan,
		group: "sorted-set", summary: "Iterates over members and scores of a sorted set."},
}

// numkeysKeys returns the key finder of a command whose source keys follow
// a count at args[idx] (ZUNION numkeys key...), with args[1] first when dst
// (the STORE forms). A count that does not parse or runs past the end names
// no sources: the command itself replies the error.
func numkeysKeys(idx int, dst bool) func(args [][]byte) [][]byte {
	return func(args [][]byte) [][]byte {
		var keys [][]byte
		if dst && len(args) > 1 {
			keys = append(keys, args[1])
		}
		if idx >= len(args) {
			return keys
		}
		n, ok := parseInt(args[idx])
		if ok && n > 0 && n <= int64(len(args)-idx-1) {
			keys = append(keys, args[idx+1:idx+1+int(n)]...)
		}
		return keys
	}
}

// Error texts of this group, as Redis 7.0 words them.
const (
	msgLexRange      = "ERR min or max not valid string range item"
	msgZAddIncrPairs = "ERR INCR option supports a single increment-element pair"
	msgWeightFloat   = "ERR weight value is not a float"
	msgLimitNegative = "ERR LIMIT can't be negative"
	msgNumkeysZero   = "ERR numkeys should be greater than 0"
	msgCountZero     = "ERR count should be greater than 0"
	msgRandCount     = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	msgRandOutRange  = "ERR value is out of range"
	msgLimitRank     = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	msgWithScoresLex = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
)

// zmembers replies with members, each followed by its score when
// withScores (RESP2's flat array).
func (c *call) zmembers(ms []keyspace.ZMember, withScores bool) {
	if !withScores {
		c.array(len(ms))
		for _, m := range ms {
			c.bulk(m.Member)
		}
		return
	}
	c.array(2 * len(ms))
	for _, m := range ms {
		c.bulk(m.Member)
		c.double(m.Score)
	}
}

// cmdZAdd: ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...].
func cmdZAdd(c *call) { c.zadd(false) }

// cmdZIncrBy: ZINCRBY key increment member. Redis runs it as ZADD with
// INCR, options loop included, so "ZINCRBY key NX m" is a syntax error.
func cmdZIncrBy(c *call) { c.zadd(true) }

// zadd parses ZADD's options and pairs with Redis's checks in its order:
// the pair count, the incompatible flags, INCR's single pair, every score,
// and only then the key's type.
func (c *call) zadd(incr bool) {
	var o keyspace.ZAddOptions
	i := 2
options:
	for ; i < c.nargs(); i++ {
		switch lowerASCII(c.arg(i)) {
		case "nx":
			o.NX = true
		case "xx":
			o.XX = true
		case "ch":
			o.CH = true
		case "incr":
			incr = true
		case "gt":
			o.GT = true
		case "lt":
			o.LT = true
		default:
			break options
		}
	}
	n := c.nargs() - i
	switch {
	case n == 0 || n%2 != 0:
		c.syntaxError()
		return
	case o.NX && o.XX:
		c.fail(keyspace.ErrZAddNXXX)
		return
	case (o.GT && o.LT) || (o.NX && (o.GT || o.LT)):
		c.fail(keyspace.ErrZAddGTLTNX)
		return
	case incr && n > 2:
		c.errorf(msgZAddIncrPairs)
		return
	}
	pairs := make([]keyspace.ZMember, 0, n/2)
	for ; i < c.nargs(); i += 2 {
		f, ok := parseDouble(c.arg(i))
		if !ok {
			c.errorf(msgNotFloat)
			return
		}
		pairs = append(pairs, keyspace.ZMember{Score: f, Member: c.arg(i + 1)})
	}
	if incr {
		score, done, err := c.st.ZAddIncr(c.ctx, c.db, c.arg(1), o, pairs[0].Score, pairs[0].Member)
		if c.fail(err) {
			return
		}
		if done {
			c.double(score)
		} else {
			c.null()
		}
		return
	}
	added, err := c.st.ZAdd(c.ctx, c.db, c.arg(1), o, pairs...)
	if c.fail(err) {
		return
	}
	c.int(added)
}

func cmdZRem(c *call) {
	c.replyInt(c.st.ZRem(c.ctx, c.db, c.arg(1), c.args[2:]...))
}

func cmdZScore(c *call) {
	f, ok, err := c.st.ZScore(c.ctx, c.db, c.arg(1), c.arg(2))
	switch {
	case c.fail(err):
	case ok:
		c.double(f)
	default:
		c.null()
	}
}

func cmdZMScore(c *call) {
	scores, ok, err := c.st.ZMScore(c.ctx, c.db, c.arg(1), c.args[2:]...)
	if c.fail(err) {
		return
	}
	c.array(len(scores))
	for i, f := range scores {
		if ok[i] {
			c.double(f)
		} else {
			c.null()
		}
	}
}

func cmdZCard(c *call) {
	c.replyInt(c.st.ZCard(c.ctx, c.db, c.arg(1)))
}

// cmdZCount: ZCOUNT key min max. The range is parsed before the key is
// looked up, as in Redis.
func cmdZCount(c *call) {
	lo, hi, ok := c.scoreRange(2, 3)
	if !ok {
		return
	}
	n, err := c.st.ZCount(c.ctx, c.db, c.arg(1), lo, hi)
	if c.fail(err) {
		return
	}
	c.int(n)
}

func cmdZLexCount(c *call) {
	lo, hi, ok := c.lexRange(2, 3)
	if !ok {
		return
	}
	n, err := c.st.ZLexCount(c.ctx, c.db, c.arg(1), lo, hi)
	if c.fail(err) {
		return
	}
	c.int(n)
}

// cmdZRank: ZRANK and ZREVRANK key member (Redis 7.0: no WITHSCORE).
func cmdZRank(c *call) {
	rank, ok, err := c.st.ZRank(c.ctx, c.db, c.arg(1), c.arg(2), c.cmd.name == "zrevrank")
	switch {
	case c.fail(err):
	case ok:
		c.int(rank)
	default:
		c.null()
	}
}

// scoreRange parses args[i] and args[j] as the min and max of a score
// range, or replies with Redis's error.
func (c *call) scoreRange(i, j int) (lo, hi keyspace.ScoreBound, ok bool) {
	lo, ok1 := parseScoreBound(c.arg(i))
	hi, ok2 := parseScoreBound(c.arg(j))
	if !ok1 || !ok2 {
		c.errorf(msgMinMaxNotFloat)
		return lo, hi, false
	}
	return lo, hi, true
}

// lexRange parses args[i] and args[j] as the min and max of a lex range,
// or replies with Redis's error.
func (c *call) lexRange(i, j int) (lo, hi keyspace.LexBound, ok bool) {
	lo, ok1 := parseLexBound(c.arg(i))
	hi, ok2 := parseLexBound(c.arg(j))
	if !ok1 || !ok2 {
		c.errorf(msgLexRange)
		return lo, hi, false
	}
	return lo, hi, true
}

// cmdZRemRange: ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX key
// min max. The range is parsed first, then the key is looked up.
func cmdZRemRange(c *call) {
	var n int64
	var err error
	switch c.cmd.name {
	case "zremrangebyrank":
		start, ok := c.intArg(2)
		if !ok {
			return
		}
		stop, ok := c.intArg(3)
		if !ok {
			return
		}
		n, err = c.st.ZRemRangeByRank(c.ctx, c.db, c.arg(1), start, stop)
	case "zremrangebyscore":
		lo, hi, ok := c.scoreRange(2, 3)
		if !ok {
			return
		}
		n, err = c.st.ZRemRangeByScore(c.ctx, c.db, c.arg(1), lo, hi)
	default:
		lo, hi, ok := c.lexRange(2, 3)
		if !ok {
			return
		}
		n, err = c.st.ZRemRangeByLex(c.ctx, c.db, c.arg(1), lo, hi)
	}
	if c.fail(err) {
		return
	}
	c.int(n)
}

// zrangeForm is what a ZRANGE-family command fixes before its options: the
// kind of range (autoBy: ZRANGE's BYSCORE/BYLEX decide), the direction
// (fixedDir: REV is not an option) and whether it stores.
type zrangeForm struct {
	by       keyspace.ZRangeBy
	autoBy   bool
	rev      bool
	fixedDir bool
	store    bool
}

var zrangeForms = map[string]zrangeForm{
	"zrange":           {autoBy: true},
	"zrangestore":      {autoBy: true, store: true},
	"zrevrange":        {by: keyspace.ZRangeByRank, rev: true, fixedDir: true},
	"zrangebyscore":    {by: keyspace.ZRangeByScore, fixedDir: true},
	"zrevrangebyscore": {by: keyspace.ZRangeByScore, rev: true, fixedDir: true},
	"zrangebylex":      {by: keyspace.ZRangeByLex, fixedDir: true},
	"zrevrangebylex":   {by: keyspace.ZRangeByLex, rev: true, fixedDir: true},
}

// cmdZRange: ZRANGE, ZRANGESTORE and the older range commands, as Redis's
// zrangeGenericCommand parses them: options (LIMIT's numbers at once),
// then the conflicts between them, then the range, then the key.
func cmdZRange(c *call) {
	f := zrangeForms[c.cmd.name]
	src := 1
	if f.store {
		src = 2
	}
	spec := keyspace.ZRangeSpec{By: f.by, Rev: f.rev, Limit: true, Count: -1}
	withScores := false
	for j := src + 3; j < c.nargs(); j++ {
		switch {
		case !f.store && c.is(j, "withscores"):
			withScores = true
		case c.is(j, "limit") && c.nargs()-j-1 >= 2:
			var ok bool
			if spec.Offset, ok = c.intArg(j + 1); !ok {
				return
			}
			if spec.Count, ok = c.intArg(j + 2); !ok {
				return
			}
			j += 2
		case !f.fixedDir && c.is(j, "rev"):
			spec.Rev = true
		case f.autoBy && c.is(j, "bylex"):
			spec.By, f.autoBy = keyspace.ZRangeByLex, false
		case f.autoBy && c.is(j, "byscore"):
			spec.By, f.autoBy = keyspace.ZRangeByScore, false
		default:
			c.syntaxError()
			return
		}
	}
	// Redis tells "no LIMIT" by a count of -1, so LIMIT x -1 passes here.
	if spec.Count != -1 && spec.By == keyspace.ZRangeByRank {
		c.errorf(msgLimitRank)
		return
	}
	if withScores && spec.By == keyspace.ZRangeByLex {
		c.errorf(msgWithScoresLex)
		return
	}
	lo, hi := src+1, src+2
	if spec.Rev && spec.By != keyspace.ZRangeByRank {
		lo, hi = hi, lo // given as max, min
	}
	var ok bool
	switch spec.By {
	case keyspace.ZRangeByRank:
		if spec.Start, ok = c.intArg(lo); !ok {
			return
		}
		if spec.Stop, ok = c.intArg(hi); !ok {
			return
		}
	case keyspace.ZRangeByScore:
		if spec.MinScore, spec.MaxScore, ok = c.scoreRange(lo, hi); !ok {
			return
		}
	case keyspace.ZRangeByLex:
		if spec.MinLex, spec.MaxLex, ok = c.lexRange(lo, hi); !ok {
			return
		}
	}
	if f.store {
		n, err := c.st.ZRangeStore(c.ctx, c.db, c.arg(1), c.arg(2), spec)
		if c.fail(err) {
			return
		}
		c.int(n)
		return
	}
	ms, err := c.st.ZRangeWith(c.ctx, c.db, c.arg(1), spec)
	if c.fail(err) {
		return
	}
	c.zmembers(ms, withScores)
}

// zalgebraOp is the operation of ZUNION, ZINTER, ZDIFF, ZINTERCARD and
// the STORE forms.
type zalgebraOp uint8

const (
	opUnion zalgebraOp = iota
	opInter
	opDiff
	opInterCard
)

var zalgebraOps = map[string]zalgebraOp{
	"zunion": opUnion, "zunionstore": opUnion, "zinter": opInter, "zinterstore": opInter,
	"zdiff": opDiff, "zdiffstore": opDiff, "zintercard": opInterCard,
}

// zalgebraArgs are the parsed options of an algebra command.
type zalgebraArgs struct {
	weights    []float64
	agg        keyspace.Aggregate
	withScores bool
	limit      int64
}

// cmdZAlgebra: ZUNIONSTORE/ZINTERSTORE/ZDIFFSTORE dst numkeys key...,
// ZUNION/ZINTER/ZDIFF/ZINTERCARD numkeys key..., with WEIGHTS, AGGREGATE,
// WITHSCORES and LIMIT where each applies. Redis checks numkeys, then the
// types of the keys, then the options; so an option error is only replied
// once the keys are known to hold sorted sets or sets.
func cmdZAlgebra(c *call) {
	op := zalgebraOps[c.cmd.name]
	store := c.cmd.name[len(c.cmd.name)-5:] == "store"
	idx := 1
	if store {
		idx = 2
	}
	numkeys, ok := c.intArg(idx)
	if !ok {
		return
	}
	if numkeys < 1 {
		c.errorf("ERR at least 1 input key is needed for '" + c.cmd.name + "' command")
		return
	}
	if numkeys > int64(c.nargs()-idx-1) {
		c.syntaxError()
		return
	}
	keys := c.args[idx+1 : idx+1+int(numkeys)]
	a, optErr := c.zalgebraOptions(op, store, idx+1+int(numkeys), len(keys))
	if optErr != "" {
		c.zalgebraOptionError(keys, optErr)
		return
	}
	var n int64
	var ms []keyspace.ZMember
	var err error
	switch {
	case store && op == opUnion:
		n, err = c.st.ZUnionStore(c.ctx, c.db, c.arg(1), keys, a.weights, a.agg)
	case store && op == opInter:
		n, err = c.st.ZInterStore(c.ctx, c.db, c.arg(1), keys, a.weights, a.agg)
	case store:
		n, err = c.st.ZDiffStore(c.ctx, c.db, c.arg(1), keys)
	case op == opInterCard:
		n, err = c.st.ZInterCard(c.ctx, c.db, keys, a.limit)
	case op == opUnion:
		ms, err = c.st.ZUnion(c.ctx, c.db, keys, a.weights, a.agg)
	case op == opInter:
		ms, err = c.st.ZInter(c.ctx, c.db, keys, a.weights, a.agg)
	default:
		ms, err = c.st.ZDiff(c.ctx, c.db, keys)
	}
	switch {
	case c.fail(err):
	case store || op == opInterCard:
		c.int(n)
	default:
		c.zmembers(ms, a.withScores)
	}
}

// zalgebraOptions parses the options from args[j] on, as Redis's
// zunionInterDiffGenericCommand does, returning the error text of the
// first bad one instead of replying it.
func (c *call) zalgebraOptions(op zalgebraOp, store bool, j, numkeys int) (zalgebraArgs, string) {
	var a zalgebraArgs
	weighs := op == opUnion || op == opInter
	for j < c.nargs() {
		remaining := c.nargs() - j
		switch {
		case weighs && remaining >= numkeys+1 && c.is(j, "weights"):
			j++
			a.weights = make([]float64, numkeys)
			for i := range a.weights {
				f, ok := parseDouble(c.arg(j))
				if !ok {
					return a, msgWeightFloat
				}
				a.weights[i] = f
				j++
			}
		case weighs && remaining >= 2 && c.is(j, "aggregate"):
			switch lowerASCII(c.arg(j + 1)) {
			case "sum":
				a.agg = keyspace.AggregateSum
			case "min":
				a.agg = keyspace.AggregateMin
			case "max":
				a.agg = keyspace.AggregateMax
			default:
				return a, msgSyntax
			}
			j += 2
		case !store && op != opInterCard && c.is(j, "withscores"):
			a.withScores = true
			j++
		case op == opInterCard && remaining >= 2 && c.is(j, "limit"):
			n, ok := parseInt(c.arg(j + 1))
			if !ok || n < 0 {
				return a, msgLimitNegative
			}
			a.limit = n
			j += 2
		default:
			return a, msgSyntax
		}
	}
	return a, ""
}

// zalgebraOptionError replies to an algebra command with a bad option:
// WRONGTYPE if a source key holds neither a sorted set nor a set (Redis
// looks the keys up first), the option's error otherwise.
func (c *call) zalgebraOptionError(keys [][]byte, msg string) {
	for _, k := range keys {
		t, err := c.st.TypeOf(c.ctx, c.db, k)
		if c.fail(err) {
			return
		}
		if t != keyspace.TypeNone && t != keyspace.TypeZSet && t != keyspace.TypeSet {
			c.fail(keyspace.ErrWrongType)
			return
		}
	}
	c.errorf(msg)
}

// cmdZScan: ZSCAN key cursor [MATCH pattern] [COUNT count]. Redis checks
// the cursor, then the key (a missing one replies an empty scan before any
// option is read), then the options. Scores are written as Redis writes
// them in a small (listpack) sorted set's scan.
func cmdZScan(c *call) {
	cursor, o, ok := c.elemScanStart(c.st.ZCard)
	if !ok {
		return
	}
	next, ms, err := c.st.ZScan(c.ctx, c.db, c.arg(1), cursor, o.match, o.count)
	if c.fail(err) {
		return
	}
	if o.emptyOnly {
		ms = keepEmptyNames(ms, func(m keyspace.ZMember) []byte { return m.Member })
	}
	c.array(2)
	c.bulkString(scanCursors.encode(next))
	c.array(2 * len(ms))
	for _, m := range ms {
		c.bulk(m.Member)
		c.bulkString(listpackScore(m.Score))
	}
}

// listpackScore formats a score as Redis's d2string does when it stores
// one in a listpack, which is what ZSCAN of a small sorted set returns:
// integers in ±2^62 as integers, the rest with %.17g. (A large sorted set
// scans with %.17g throughout; the two differ only for integers from 1e17
// to 2^62.)
func listpackScore(f float64) string {
	if f == math.Trunc(f) && f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 {
		return strconv.FormatInt(int64(f), 10)
	}
	return formatDouble(f)
}
