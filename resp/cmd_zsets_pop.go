package resp

// Sorted-set pops: ZPOPMIN/ZPOPMAX, their blocking forms, ZMPOP/BZMPOP
// and ZRANDMEMBER.

import (
	"errors"
	"math"

	"github.com/stratakv/strata/keyspace"
)

// cmdZPop: ZPOPMIN and ZPOPMAX key [count]. Without a count the reply is
// one member and its score; a count that is not a non-negative integer is
// refused before the key is looked up.
func cmdZPop(c *call) {
	if c.nargs() > 3 {
		c.syntaxError()
		return
	}
	count := int64(1)
	if c.nargs() == 3 {
		n, ok := parseInt(c.arg(2))
		if !ok || n < 0 {
			c.errorf(msgOutOfRange)
			return
		}
		count = n
	}
	pop := c.st.ZPopMin
	if c.cmd.name == "zpopmax" {
		pop = c.st.ZPopMax
	}
	ms, err := pop(c.ctx, c.db, c.arg(1), count)
	if c.fail(err) {
		return
	}
	c.zmembers(ms, true)
}

// popper pops up to count members from the first of keys holding a sorted
// set, for BZPOPMIN/BZPOPMAX and BZMPOP, and replies with reply. On the
// first try a key of another type is an error, as in Redis; once blocked,
// such a key is passed over (Redis only wakes a client for a sorted set).
func (c *call) popper(keys [][]byte, count int64, highest bool, reply func(key []byte, ms []keyspace.ZMember)) func() bool {
	pop := c.st.ZPopMin
	if highest {
		pop = c.st.ZPopMax
	}
	first := true
	return func() bool {
		strict := first
		first = false
		for _, k := range keys {
			ms, err := pop(c.ctx, c.db, k, count)
			if err != nil && !strict && errors.Is(err, keyspace.ErrWrongType) {
				continue
			}
			if c.fail(err) {
				return true
			}
			if len(ms) > 0 {
				reply(k, ms)
				return true
			}
		}
		return false
	}
}

// cmdBZPop: BZPOPMIN and BZPOPMAX key [key ...] timeout. The timeout is
// parsed first; served, the reply is [key, member, score]; timed out, a
// null array.
func cmdBZPop(c *call) {
	timeout, ok := c.timeoutArg(c.nargs() - 1)
	if !ok {
		return
	}
	keys := c.args[1 : c.nargs()-1]
	try := c.popper(keys, 1, c.cmd.name == "bzpopmax", func(key []byte, ms []keyspace.ZMember) {
		c.array(3)
		c.bulk(key)
		c.bulk(ms[0].Member)
		c.double(ms[0].Score)
	})
	c.block(keys, timeout, try, c.nullArray)
}

// cmdZMPop: ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] and BZMPOP
// timeout numkeys ... (its timeout is parsed after the rest, as in Redis).
// The reply is [key, [[member, score], ...]], or a null array.
func cmdZMPop(c *call) {
	idx := 1
	blocking := c.cmd.name == "bzmpop"
	if blocking {
		idx = 2
	}
	numkeys, ok := parseInt(c.arg(idx))
	if !ok || numkeys < 1 {
		c.errorf(msgNumkeysZero)
		return
	}
	if numkeys >= int64(c.nargs()-idx-1) {
		c.syntaxError()
		return
	}
	where := idx + 1 + int(numkeys)
	keys := c.args[idx+1 : where]
	highest := false
	switch {
	case c.is(where, "max"):
		highest = true
	case !c.is(where, "min"):
		c.syntaxError()
		return
	}
	count := int64(-1)
	for j := where + 1; j < c.nargs(); j++ {
		if count != -1 || !c.is(j, "count") || j+1 >= c.nargs() {
			c.syntaxError()
			return
		}
		j++
		n, ok := parseInt(c.arg(j))
		if !ok || n < 1 {
			c.errorf(msgCountZero)
			return
		}
		count = n
	}
	count = max(count, 1)
	reply := func(key []byte, ms []keyspace.ZMember) {
		c.array(2)
		c.bulk(key)
		c.array(len(ms))
		for _, m := range ms {
			c.array(2)
			c.bulk(m.Member)
			c.double(m.Score)
		}
	}
	if !blocking {
		key, ms, err := c.st.ZMPop(c.ctx, c.db, keys, count, highest)
		switch {
		case c.fail(err):
		case key == nil:
			c.nullArray()
		default:
			reply(key, ms)
		}
		return
	}
	timeout, ok := c.timeoutArg(1)
	if !ok {
		return
	}
	c.block(keys, timeout, c.popper(keys, count, highest, reply), c.nullArray)
}

// zrandMaxRepeat bounds ZRANDMEMBER's negative count (members with
// repeats): Redis 7.0 builds a reply of -count members whatever its size,
// so one command could exhaust the server's memory (with WITHSCORES it
// refuses beyond ±2^62; without, it tries and dies). Beyond this bound
// Strata replies "ERR value is out of range" when the key holds members; a
// missing key still replies an empty array, as in Redis.
const zrandMaxRepeat = 1 << 20

// cmdZRandMember: ZRANDMEMBER key [count [WITHSCORES]].
func cmdZRandMember(c *call) {
	if c.nargs() == 2 {
		ms, err := c.st.ZRandMember(c.ctx, c.db, c.arg(1), 1)
		switch {
		case c.fail(err):
		case len(ms) == 0:
			c.null()
		default:
			c.bulk(ms[0].Member)
		}
		return
	}
	count, ok := c.intArg(2)
	if !ok {
		return
	}
	if count == math.MinInt64 {
		c.errorf(msgRandCount)
		return
	}
	withScores := c.nargs() == 4 && c.is(3, "withscores")
	if c.nargs() > 4 || (c.nargs() == 4 && !withScores) {
		c.syntaxError()
		return
	}
	if withScores && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		c.errorf(msgRandOutRange)
		return
	}
	// Past ±2^62 a positive count means "all of them" all the same.
	count = min(count, math.MaxInt64/2)
	if count < -zrandMaxRepeat {
		n, err := c.st.ZCard(c.ctx, c.db, c.arg(1))
		switch {
		case c.fail(err):
		case n == 0:
			c.array(0)
		default:
			c.errorf(msgRandOutRange)
		}
		return
	}
	ms, err := c.st.ZRandMember(c.ctx, c.db, c.arg(1), count)
	if c.fail(err) {
		return
	}
	c.zmembers(ms, withScores)
}
