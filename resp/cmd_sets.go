package resp

import (
	"context"
)

var setCommands = []*command{
	{name: "sadd", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdSAdd,
		group: "set", summary: "Adds one or more members to a set. Creates the key if it doesn't exist."},
	{name: "srem", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdSRem,
		group: "set", summary: "Removes one or more members from a set. Deletes the set if the last member was removed."},
	{name: "smembers", arity: 2, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdSMembers,
		group: "set", summary: "Returns all members of a set."},
	{name: "sismember", arity: 3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdSIsMember,
		group: "set", summary: "Determines whether a member belongs to a set."},
	{name: "smismember", arity: -3, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, member: 2, handler: cmdSMIsMember,
		group: "set", summary: "Determines whether multiple members belong to a set."},
	{name: "scard", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdSCard,
		group: "set", summary: "Returns the number of members in a set."},
	{name: "spop", arity: -2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdSPop,
		group: "set", summary: "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped."},
	{name: "srandmember", arity: -2, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdSRandMember,
		group: "set", summary: "Get one or multiple random members from a set"},
	{name: "smove", arity: 4, flags: flagWrite | flagFast, first: 1, last: 2, step: 1, handler: cmdSMove,
		group: "set", summary: "Moves a member from one set to another."},
	{name: "sinter", arity: -2, flags: flagReadonly, first: 1, last: -1, step: 1, handler: cmdSInter,
		group: "set", summary: "Returns the intersect of multiple sets."},
	{name: "sunion", arity: -2, flags: flagReadonly, first: 1, last: -1, step: 1, handler: cmdSUnion,
		group: "set", summary: "Returns the union of multiple sets."},
	{name: "sdiff", arity: -2, flags: flagReadonly, first: 1, last: -1, step: 1, handler: cmdSDiff,
		group: "set", summary: "Returns the difference of multiple sets."},
	{name: "sinterstore", arity: -3, flags: flagWrite, first: 1, last: -1, step: 1, handler: cmdSInterStore,
		group: "set", summary: "Stores the intersect of multiple sets in a key."},
	{name: "sunionstore", arity: -3, flags: flagWrite, first: 1, last: -1, step: 1, handler: cmdSUnionStore,
		group: "set", summary: "Stores the union of multiple sets in a key."},
	{name: "sdiffstore", arity: -3, flags: flagWrite, first: 1, last: -1, step: 1, handler: cmdSDiffStore,
		group: "set", summary: "Stores the difference of multiple sets in a key."},
	{name: "sintercard", arity: -3, flags: flagReadonly, keys: sinterCardKeys, handler: cmdSInterCard,
		group: "set", summary: "Returns the number of members of the intersect of multiple sets."},
	{name: "sscan", arity: -3, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdSScan,
		group: "set", summary: "Iterates over members of a set."},
}

func cmdSAdd(c *call) {
	c.replyInt(c.st.SAdd(c.ctx, c.db, c.arg(1), c.args[2:]...))
}

func cmdSRem(c *call) {
	c.replyInt(c.st.SRem(c.ctx, c.db, c.arg(1), c.args[2:]...))
}

func cmdSMembers(c *call) {
	c.replyBulks(c.st.SMembers(c.ctx, c.db, c.arg(1)))
}

func cmdSIsMember(c *call) {
	c.replyBool(c.st.SIsMember(c.ctx, c.db, c.arg(1), c.arg(2)))
}

func cmdSMIsMember(c *call) {
	in, err := c.st.SMIsMember(c.ctx, c.db, c.arg(1), c.args[2:]...)
	if c.fail(err) {
		return
	}
	c.array(len(in))
	for _, ok := range in {
		c.boolInt(ok)
	}
}

func cmdSCard(c *call) {
	c.replyInt(c.st.SCard(c.ctx, c.db, c.arg(1)))
}

// cmdSPop: SPOP key [count]. Without a count the reply is one bulk (null
// for a missing key); with one, an array. Redis checks the syntax, then
// the count (anything but an integer >= 0 is "must be positive"), then
// the key's type, even for a count of 0.
func cmdSPop(c *call) {
	if c.nargs() > 3 {
		c.syntaxError()
		return
	}
	if c.nargs() == 2 {
		members, err := c.st.SPop(c.ctx, c.db, c.arg(1), 1)
		if c.fail(err) {
			return
		}
		if len(members) == 0 {
			c.null()
			return
		}
		c.bulk(members[0])
		return
	}
	count, ok := parseInt(c.arg(2))
	if !ok || count < 0 {
		c.errorf(msgOutOfRange)
		return
	}
	members, err := c.st.SPop(c.ctx, c.db, c.arg(1), count)
	if c.fail(err) {
		return
	}
	c.bulks(members)
}

// cmdSRandMember: SRANDMEMBER key [count], checked as HRANDFIELD is, with
// the same guard against a huge negative count (see randPicksGuard).
func cmdSRandMember(c *call) {
	key := c.arg(1)
	if c.nargs() > 3 {
		c.syntaxError()
		return
	}
	if c.nargs() == 2 {
		members, err := c.st.SRandMember(c.ctx, c.db, key, 1)
		if c.fail(err) {
			return
		}
		if len(members) == 0 {
			c.null()
			return
		}
		c.bulk(members[0])
		return
	}
	count, ok := c.randCountArg(2)
	if !ok {
		return
	}
	n, err := c.st.SCard(c.ctx, c.db, key)
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
	members, err := c.st.SRandMember(c.ctx, c.db, key, count)
	if c.fail(err) {
		return
	}
	size := 0
	for _, m := range members {
		size += len(m) + 16
	}
	if !c.randReplyGuard(size) {
		return
	}
	c.bulks(members)
}

func cmdSMove(c *call) {
	c.replyBool(c.st.SMove(c.ctx, c.db, c.arg(1), c.arg(2), c.arg(3)))
}

// setAlgebra is the keyspace's SINTER, SUNION or SDIFF.
type setAlgebra func(ctx context.Context, db int, keys ...[]byte) ([][]byte, error)

// setAlgebraStore is the keyspace's SINTERSTORE, SUNIONSTORE or SDIFFSTORE.
type setAlgebraStore func(ctx context.Context, db int, dst []byte, keys ...[]byte) (int64, error)

func cmdSInter(c *call)      { c.setAlgebra(c.st.SInter) }
func cmdSUnion(c *call)      { c.setAlgebra(c.st.SUnion) }
func cmdSDiff(c *call)       { c.setAlgebra(c.st.SDiff) }
func cmdSInterStore(c *call) { c.setAlgebraStore(c.st.SInterStore) }
func cmdSUnionStore(c *call) { c.setAlgebraStore(c.st.SUnionStore) }
func cmdSDiffStore(c *call)  { c.setAlgebraStore(c.st.SDiffStore) }

func (c *call) setAlgebra(op setAlgebra) {
	members, err := op(c.ctx, c.db, c.args[1:]...)
	if c.fail(err) {
		return
	}
	c.bulks(members)
}

func (c *call) setAlgebraStore(op setAlgebraStore) {
	n, err := op(c.ctx, c.db, c.arg(1), c.args[2:]...)
	if c.fail(err) {
		return
	}
	c.int(n)
}

// sinterCardNumKeys parses SINTERCARD's numkeys: at least 1 and no more
// than the arguments after it.
func sinterCardNumKeys(args [][]byte) (int64, string) {
	n, ok := parseInt(args[1])
	switch {
	case !ok || n < 1:
		return 0, "ERR numkeys should be greater than 0"
	case n > int64(len(args)-2):
		return 0, "ERR Number of keys can't be greater than number of args"
	}
	return n, ""
}

// sinterCardKeys finds SINTERCARD's keys, args[2 : 2+numkeys]; none when
// numkeys is malformed (the command then fails before touching a key).
func sinterCardKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	n, msg := sinterCardNumKeys(args)
	if msg != "" {
		return nil
	}
	return args[2 : 2+n]
}

// cmdSInterCard: SINTERCARD numkeys key [key ...] [LIMIT limit]. Redis
// checks numkeys, then the options, then the keys.
func cmdSInterCard(c *call) {
	n, msg := sinterCardNumKeys(c.args)
	if msg != "" {
		c.errorf(msg)
		return
	}
	var limit int64
	for i := 2 + int(n); i < c.nargs(); i++ {
		if !c.is(i, "limit") || i+1 >= c.nargs() {
			c.syntaxError()
			return
		}
		i++
		l, ok := parseInt(c.arg(i))
		if !ok || l < 0 {
			c.errorf("ERR LIMIT can't be negative")
			return
		}
		limit = l
	}
	card, err := c.st.SInterCard(c.ctx, c.db, limit, c.args[2:2+n]...)
	if c.fail(err) {
		return
	}
	c.int(card)
}

// cmdSScan: SSCAN key cursor [MATCH pattern] [COUNT count].
func cmdSScan(c *call) {
	cursor, o, ok := c.elemScanStart(c.st.SCard)
	if !ok {
		return
	}
	next, members, err := c.st.SScan(c.ctx, c.db, c.arg(1), cursor, o.match, o.count)
	if c.fail(err) {
		return
	}
	if o.emptyOnly {
		members = keepEmptyNames(members, func(m []byte) []byte { return m })
	}
	c.elemScanReply(next, len(members))
	for _, m := range members {
		c.bulk(m)
	}
}
