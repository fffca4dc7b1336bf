package resp

import (
	"math"
)

var hashCommands = []*command{
	{name: "hset", arity: -4, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHSet,
		group: "hash", summary: "Creates or modifies the value of a field in a hash."},
	{name: "hmset", arity: -4, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdHSet,
		group: "hash", summary: "Sets the values of multiple fields."},
	{name: "hsetnx", arity: 4, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHSetNX,
		group: "hash", summary: "Sets the value of a field in a hash only when the field doesn't exist."},
	{name: "hget", arity: 3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHGet,
		group: "hash", summary: "Returns the value of a field in a hash."},
	{name: "hmget", arity: -3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHMGet,
		group: "hash", summary: "Returns the values of all fields in a hash."},
	{name: "hgetall", arity: 2, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdHGetAll,
		group: "hash", summary: "Returns all fields and values in a hash."},
	{name: "hdel", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHDel,
		group: "hash", summary: "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain."},
	{name: "hlen", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdHLen,
		group: "hash", summary: "Returns the number of fields in a hash."},
	{name: "hexists", arity: 3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHExists,
		group: "hash", summary: "Determines whether a field exists in a hash."},
	{name: "hkeys", arity: 2, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdHKeys,
		group: "hash", summary: "Returns all fields in a hash."},
	{name: "hvals", arity: 2, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdHVals,
		group: "hash", summary: "Returns all values in a hash."},
	{name: "hstrlen", arity: 3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHStrLen,
		group: "hash", summary: "Returns the length of the value of a field."},
	{name: "hincrby", arity: 4, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHIncrBy,
		group: "hash", summary: "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist."},
	{name: "hincrbyfloat", arity: 4, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdHIncrByFloat,
		group: "hash", summary: "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist."},
	{name: "hrandfield", arity: -2, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdHRandField,
		group: "hash", summary: "Returns one or more random fields from a hash."},
	{name: "hscan", arity: -3, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdHScan,
		group: "hash", summary: "Iterates over fields and values of a hash."},
}

// cmdHSet: HSET and HMSET key field value [field value ...]. The pairs are
// checked here: the table's arity only says "at least 4".
func cmdHSet(c *call) {
	if c.nargs()%2 != 0 {
		c.errorf(errArity(c.cmd.name))
		return
	}
	var small [4][2][]byte // HSET of a few fields allocates no slice
	pairs := small[:0]
	if n := (c.nargs() - 2) / 2; n > len(small) {
		pairs = make([][2][]byte, 0, n)
	}
	for i := 2; i < c.nargs(); i += 2 {
		pairs = append(pairs, [2][]byte{c.arg(i), c.arg(i + 1)})
	}
	n, err := c.st.HSet(c.ctx, c.db, c.arg(1), pairs...)
	if c.fail(err) {
		return
	}
	if c.cmd.name == "hmset" {
		c.ok()
		return
	}
	c.int(n)
}

func cmdHSetNX(c *call) {
	c.replyBool(c.st.HSetNX(c.ctx, c.db, c.arg(1), c.arg(2), c.arg(3)))
}

func cmdHGet(c *call) {
	v, ok, err := c.st.HGet(c.ctx, c.db, c.arg(1), c.arg(2))
	if c.fail(err) {
		return
	}
	c.bulkOrNull(v, ok)
}

func cmdHMGet(c *call) {
	vals, err := c.st.HMGet(c.ctx, c.db, c.arg(1), c.args[2:]...)
	if c.fail(err) {
		return
	}
	c.bulksOrNull(vals)
}

func cmdHGetAll(c *call) {
	pairs, err := c.st.HGetAll(c.ctx, c.db, c.arg(1))
	if c.fail(err) {
		return
	}
	c.pairs(pairs, true)
}

func cmdHDel(c *call) {
	c.replyInt(c.st.HDel(c.ctx, c.db, c.arg(1), c.args[2:]...))
}

func cmdHLen(c *call) {
	c.replyInt(c.st.HLen(c.ctx, c.db, c.arg(1)))
}

func cmdHExists(c *call) {
	c.replyBool(c.st.HExists(c.ctx, c.db, c.arg(1), c.arg(2)))
}

func cmdHKeys(c *call) {
	c.replyBulks(c.st.HKeys(c.ctx, c.db, c.arg(1)))
}

func cmdHVals(c *call) {
	c.replyBulks(c.st.HVals(c.ctx, c.db, c.arg(1)))
}

func cmdHStrLen(c *call) {
	c.replyInt(c.st.HStrLen(c.ctx, c.db, c.arg(1), c.arg(2)))
}

// cmdHIncrBy: the increment is checked before the key, as in Redis.
func cmdHIncrBy(c *call) {
	delta, ok := c.intArg(3)
	if !ok {
		return
	}
	n, err := c.st.HIncrBy(c.ctx, c.db, c.arg(1), c.arg(2), delta)
	if c.fail(err) {
		return
	}
	c.int(n)
}

// cmdHIncrByFloat replies with the text the keyspace stored (long double,
// "%.17Lf" trimmed), which is Redis's reply too; the keyspace parses the
// increment as a long double and checks in Redis's order.
func cmdHIncrByFloat(c *call) {
	text, err := c.st.HIncrByFloatText(c.ctx, c.db, c.arg(1), c.arg(2), c.arg(3))
	if c.fail(err) {
		return
	}
	c.bulk(text)
}

// cmdHRandField: HRANDFIELD key [count [WITHVALUES]], with Redis's checks
// in Redis's order: count's range, the syntax, WITHVALUES's narrower
// range, then the key. A negative count is guarded (see randPicksGuard).
func cmdHRandField(c *call) {
	key := c.arg(1)
	if c.nargs() == 2 {
		pairs, err := c.st.HRandField(c.ctx, c.db, key, 1, false)
		if c.fail(err) {
			return
		}
		if len(pairs) == 0 {
			c.null()
			return
		}
		c.bulk(pairs[0][0])
		return
	}
	count, ok := c.randCountArg(2)
	if !ok {
		return
	}
	withValues := c.nargs() == 4
	if c.nargs() > 4 || (withValues && !c.is(3, "withvalues")) {
		c.syntaxError()
		return
	}
	// Redis doubles the count for the reply's length with WITHVALUES.
	if withValues && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		c.errorf("ERR value is out of range")
		return
	}
	// The length type-checks the key first, so a missing or wrong-typed key
	// replies as in Redis whatever the count.
	n, err := c.st.HLen(c.ctx, c.db, key)
	if c.fail(err) {
		return
	}
	if n == 0 || count == 0 {
		c.array(0)
		return
	}
	if !c.randPicksGuard(count) {
		return
	}
	pairs, err := c.st.HRandField(c.ctx, c.db, key, count, true)
	if c.fail(err) {
		return
	}
	size := 0
	for _, p := range pairs {
		size += len(p[0]) + 16
		if withValues {
			size += len(p[1]) + 16
		}
	}
	if !c.randReplyGuard(size) {
		return
	}
	c.pairs(pairs, withValues)
}

// pairs replies with a flat array of fields, or of fields and values.
func (c *call) pairs(pairs [][2][]byte, withValues bool) {
	if !withValues {
		c.array(len(pairs))
		for _, p := range pairs {
			c.bulk(p[0])
		}
		return
	}
	c.array(2 * len(pairs))
	for _, p := range pairs {
		c.bulk(p[0])
		c.bulk(p[1])
	}
}

// Random picks with repeats (HRANDFIELD and SRANDMEMBER with a negative
// count) are the one case where a reply is not bounded by the data: a
// client can ask for 2^63 picks of a one-field hash. Redis 7.0 tries to
// build that reply and runs out of memory. Strata refuses instead:
//
//   - a count below -maxRandPicks is out of range, with Redis's range
//     error text and Strata's bound;
//   - a reply of more than maxRandReplyBytes is refused after the picks are
//     drawn (they share the rows' memory, so the picks cost O(count) slice
//     headers, not O(count) values) and before anything is written.
//
// Both checks come after the key's type check, so a missing or wrong-typed
// key replies as in Redis whatever the count. Counts above 0 are bounded by
// the collection's size and are not limited.
const (
	maxRandPicks      = 1 << 20
	maxRandReplyBytes = 256 << 20
)

// randCountArg parses the count of HRANDFIELD or SRANDMEMBER as Redis's
// getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX) does.
func (c *call) randCountArg(i int) (int64, bool) {
	count, ok := c.intArg(i)
	if !ok {
		return 0, false
	}
	if count == math.MinInt64 {
		c.errorf("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return 0, false
	}
	return count, true
}

// randPicksGuard replies with an error and reports false for a count of
// too many picks with repeats.
func (c *call) randPicksGuard(count int64) bool {
	if count < -maxRandPicks {
		c.errorf("ERR value is out of range, value must between -1048576 and 9223372036854775807")
		return false
	}
	return true
}

// randReplyGuard replies with an error and reports false for a random
// reply of about size bytes that is too large.
func (c *call) randReplyGuard(size int) bool {
	if size > maxRandReplyBytes {
		c.errorf("ERR reply of " + c.cmd.name + " would exceed 256 MiB, ask for fewer elements")
		return false
	}
	return true
}

// cmdHScan: HSCAN key cursor [MATCH pattern] [COUNT count].
func cmdHScan(c *call) {
	cursor, o, ok := c.elemScanStart(c.st.HLen)
	if !ok {
		return
	}
	next, pairs, err := c.st.HScan(c.ctx, c.db, c.arg(1), cursor, o.match, o.count)
	if c.fail(err) {
		return
	}
	if o.emptyOnly {
		pairs = keepEmptyNames(pairs, func(p [2][]byte) []byte { return p[0] })
	}
	c.elemScanReply(next, 2*len(pairs))
	for _, p := range pairs {
		c.bulk(p[0])
		c.bulk(p[1])
	}
}
