package resp

import (
	"context"
	"errors"
	"math"

	"github.com/tidwall/redcon"

	"github.com/stratakv/strata/keyspace"
)

var listCommands = []*command{
	{name: "lpush", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdPush(keyspaceLPush),
		group: "list", summary: "Prepends one or more elements to a list. Creates the key if it doesn't exist."},
	{name: "rpush", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdPush(keyspaceRPush),
		group: "list", summary: "Appends one or more elements to a list. Creates the key if it doesn't exist."},
	{name: "lpushx", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdPush(keyspaceLPushX),
		group: "list", summary: "Prepends one or more elements to a list only when the list exists."},
	{name: "rpushx", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdPush(keyspaceRPushX),
		group: "list", summary: "Appends an element to a list only when the list exists."},
	{name: "lpop", arity: -2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdPop(true),
		group: "list", summary: "Returns the first elements in a list after removing it. Deletes the list if the last element was popped."},
	{name: "rpop", arity: -2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdPop(false),
		group: "list", summary: "Returns and removes the last elements of a list. Deletes the list if the last element was popped."},
	{name: "llen", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdLLen,
		group: "list", summary: "Returns the length of a list."},
	{name: "lrange", arity: 4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdLRange,
		group: "list", summary: "Returns a range of elements from a list."},
	{name: "lindex", arity: 3, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdLIndex,
		group: "list", summary: "Returns an element from a list by its index."},
	{name: "lset", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdLSet,
		group: "list", summary: "Sets the value of an element in a list by its index."},
	{name: "ltrim", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdLTrim,
		group: "list", summary: "Removes elements from both ends a list. Deletes the list if all elements were trimmed."},
	{name: "lrem", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdLRem,
		group: "list", summary: "Removes elements from a list. Deletes the list if the last element was removed."},
	{name: "linsert", arity: 5, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdLInsert,
		group: "list", summary: "Inserts an element before or after another element in a list."},
	{name: "lpos", arity: -3, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdLPos,
		group: "list", summary: "Returns the index of matching elements in a list."},
	// LMOVE's destination is a key too: its write wakes clients blocked on it.
	{name: "lmove", arity: 5, flags: flagWrite, first: 1, last: 2, step: 1, handler: cmdLMove,
		group: "list", summary: "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved."},
	{name: "rpoplpush", arity: 3, flags: flagWrite, first: 1, last: 2, step: 1, handler: cmdRPopLPush,
		group: "list", summary: "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped."},
	{name: "blpop", arity: -3, flags: flagWrite | flagBlocking | flagNoScript, first: 1, last: -2, step: 1, handler: cmdBPop(true),
		group: "list", summary: "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."},
	{name: "brpop", arity: -3, flags: flagWrite | flagBlocking | flagNoScript, first: 1, last: -2, step: 1, handler: cmdBPop(false),
		group: "list", summary: "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."},
	{name: "blmove", arity: 6, flags: flagWrite | flagBlocking | flagNoScript, first: 1, last: 2, step: 1, handler: cmdBLMove,
		group: "list", summary: "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved."},
	{name: "brpoplpush", arity: 4, flags: flagWrite | flagBlocking | flagNoScript, first: 1, last: 2, step: 1, handler: cmdBRPopLPush,
		group: "list", summary: "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped."},
}

type pushFunc func(st *keyspace.Store, ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error)

var (
	keyspaceLPush  pushFunc = (*keyspace.Store).LPush
	keyspaceRPush  pushFunc = (*keyspace.Store).RPush
	keyspaceLPushX pushFunc = (*keyspace.Store).LPushX
	keyspaceRPushX pushFunc = (*keyspace.Store).RPushX
)

// cmdPush: LPUSH/RPUSH/LPUSHX/RPUSHX key element [element ...].
func cmdPush(push pushFunc) func(c *call) {
	return func(c *call) {
		n, err := push(c.st, c.ctx, c.db, c.arg(1), c.args[2:]...)
		if c.fail(err) {
			return
		}
		c.int(n)
	}
}

// pop removes up to count elements from one end of the list at key.
func (c *call) pop(key []byte, left bool, count int) ([][]byte, error) {
	if left {
		return c.st.LPop(c.ctx, c.db, key, count)
	}
	return c.st.RPop(c.ctx, c.db, key, count)
}

// cmdPop: LPOP/RPOP key [count]. Without count the reply is one bulk (or
// null); with it an array, a null array for a missing key, and an empty
// array for count 0 on an existing key. Count is parsed before the key is
// looked at, as in Redis.
func cmdPop(left bool) func(c *call) {
	return func(c *call) {
		if c.nargs() > 3 {
			c.errorf(errArity(c.cmd.name))
			return
		}
		count, hasCount := int64(1), c.nargs() == 3
		if hasCount {
			n, ok := parseInt(c.arg(2))
			if !ok || n < 0 {
				c.errorf(msgOutOfRange)
				return
			}
			count = n
		}
		vals, err := c.pop(c.arg(1), left, int(count))
		switch {
		case c.fail(err):
		case !hasCount:
			if len(vals) == 0 {
				c.null()
			} else {
				c.bulk(vals[0])
			}
		case vals == nil: // missing key
			c.nullArray()
		default:
			c.bulks(vals)
		}
	}
}

func cmdLLen(c *call) {
	c.replyInt(c.st.LLen(c.ctx, c.db, c.arg(1)))
}

// cmdLRange: LRANGE key start stop; the indexes are parsed first.
func cmdLRange(c *call) {
	start, ok := c.intArg(2)
	if !ok {
		return
	}
	stop, ok := c.intArg(3)
	if !ok {
		return
	}
	// The elements go straight into the reply, after the count the list's
	// length gives, which is corrected if the list shrank meanwhile.
	mark, announced := len(*c.out), 0
	seen, err := c.st.LRangeFunc(c.ctx, c.db, c.arg(1), start, stop,
		func(n int) { announced = n; c.array(n) },
		c.bulk)
	if err != nil {
		*c.out = (*c.out)[:mark]
		c.fail(err)
		return
	}
	switch {
	case len(*c.out) == mark: // a missing list: begin never ran
		c.array(0)
	case seen != announced:
		*c.out = recountArray(*c.out, mark, announced, seen)
	}
}

// recountArray rewrites the header of the array reply at out[mark:], sent
// as holding announced elements, to hold n, the elements after it. It is
// the rare path (a list shortened during the read), so it copies freely.
func recountArray(out []byte, mark, announced, n int) []byte {
	body := append([]byte(nil), out[mark+len(redcon.AppendArray(nil, announced)):]...)
	return append(redcon.AppendArray(out[:mark], n), body...)
}

// listIndexArg parses argument i as an index the way LINDEX and LSET do:
// after the key was looked up, so a missing key or a wrong type wins over
// a bad index. missing is the reply for a missing key. It reports whether
// the caller may go on.
func (c *call) listIndexArg(i int, missing func()) (int64, bool) {
	if n, ok := parseInt(c.arg(i)); ok {
		return n, true
	}
	n, err := c.st.LLen(c.ctx, c.db, c.arg(1))
	switch {
	case c.fail(err):
	case n == 0:
		missing()
	default:
		c.notInteger()
	}
	return 0, false
}

func cmdLIndex(c *call) {
	i, ok := c.listIndexArg(2, c.null)
	if !ok {
		return
	}
	v, found, err := c.st.LIndex(c.ctx, c.db, c.arg(1), i)
	if c.fail(err) {
		return
	}
	c.bulkOrNull(v, found)
}

func cmdLSet(c *call) {
	i, ok := c.listIndexArg(2, func() { c.fail(keyspace.ErrNoSuchKey) })
	if !ok {
		return
	}
	if c.fail(c.st.LSet(c.ctx, c.db, c.arg(1), i, c.arg(3))) {
		return
	}
	c.ok()
}

func cmdLTrim(c *call) {
	start, ok := c.intArg(2)
	if !ok {
		return
	}
	stop, ok := c.intArg(3)
	if !ok {
		return
	}
	if c.fail(c.st.LTrim(c.ctx, c.db, c.arg(1), start, stop)) {
		return
	}
	c.ok()
}

func cmdLRem(c *call) {
	count, ok := c.intArg(2)
	if !ok {
		return
	}
	n, err := c.st.LRem(c.ctx, c.db, c.arg(1), count, c.arg(3))
	if c.fail(err) {
		return
	}
	c.int(n)
}

// cmdLInsert: LINSERT key BEFORE|AFTER pivot element.
func cmdLInsert(c *call) {
	var before bool
	switch {
	case c.is(2, "before"):
		before = true
	case c.is(2, "after"):
	default:
		c.syntaxError()
		return
	}
	n, err := c.st.LInsert(c.ctx, c.db, c.arg(1), before, c.arg(3), c.arg(4))
	if c.fail(err) {
		return
	}
	c.int(n)
}

// lposOptions are LPOS's RANK, COUNT and MAXLEN; count < 0: not given.
type lposOptions struct {
	rank, count, maxlen int64
}

// parseLPos parses LPOS's options in argument order, reporting the first
// bad one with Redis's text, as Redis does while it parses.
func (c *call) parseLPos() (lposOptions, bool) {
	o := lposOptions{rank: 1, count: -1}
	for i := 3; i < c.nargs(); i++ {
		more := i+1 < c.nargs()
		switch {
		case c.is(i, "rank") && more:
			i++
			n, ok := c.intArg(i)
			if !ok {
				return o, false
			}
			if n == 0 {
				c.fail(keyspace.ErrRankZero)
				return o, false
			}
			o.rank = n
		case (c.is(i, "count") || c.is(i, "maxlen")) && more:
			i++
			n, ok := parseInt(c.arg(i))
			if !ok || n < 0 {
				if c.is(i-1, "count") {
					c.fail(keyspace.ErrCountNegative)
				} else {
					c.fail(keyspace.ErrMaxlenNegative)
				}
				return o, false
			}
			if c.is(i-1, "count") {
				o.count = n
			} else {
				o.maxlen = n
			}
		default:
			c.syntaxError()
			return o, false
		}
	}
	return o, true
}

// cmdLPos: LPOS key element [RANK rank] [COUNT num] [MAXLEN len]. Without
// COUNT the reply is one index or null, with it an array.
func cmdLPos(c *call) {
	o, ok := c.parseLPos()
	if !ok {
		return
	}
	count := o.count
	if count < 0 {
		count = 1
	}
	if o.rank == math.MinInt64 {
		// Redis 7.0 negates RANK with signed overflow: it stays negative,
		// so the search runs from the tail, every match qualifies and the
		// COUNT test never succeeds (all matches are returned).
		o.rank = -1
		if o.count >= 0 {
			count = 0
		}
	}
	idx, err := c.st.LPos(c.ctx, c.db, c.arg(1), c.arg(2), o.rank, count, o.maxlen)
	switch {
	case c.fail(err):
	case o.count < 0:
		if len(idx) == 0 {
			c.null()
		} else {
			c.int(idx[0])
		}
	default:
		c.array(len(idx))
		for _, i := range idx {
			c.int(i)
		}
	}
}

// listEnd parses LEFT or RIGHT (true: left) or replies a syntax error.
func (c *call) listEnd(i int) (left, ok bool) {
	switch {
	case c.is(i, "left"):
		return true, true
	case c.is(i, "right"):
		return false, true
	}
	c.syntaxError()
	return false, false
}

// cmdLMove: LMOVE source destination LEFT|RIGHT LEFT|RIGHT.
func cmdLMove(c *call) {
	from, ok := c.listEnd(3)
	if !ok {
		return
	}
	to, ok := c.listEnd(4)
	if !ok {
		return
	}
	c.lmove(from, to)
}

func cmdRPopLPush(c *call) { c.lmove(false, true) }

func (c *call) lmove(from, to bool) {
	v, ok, err := c.st.LMove(c.ctx, c.db, c.arg(1), c.arg(2), from, to)
	if c.fail(err) {
		return
	}
	c.bulkOrNull(v, ok)
}

// cmdBPop: BLPOP/BRPOP key [key ...] timeout. The first list of the keys,
// in argument order, that has an element is served. At the first attempt
// a key of another type is an error, as in Redis; once blocked, Redis only
// wakes a client for lists, so such keys are passed over.
func cmdBPop(left bool) func(c *call) {
	return func(c *call) {
		timeout, ok := c.timeoutArg(c.nargs() - 1)
		if !ok {
			return
		}
		keys := c.args[1 : c.nargs()-1]
		blocked := false
		try := func() bool {
			defer func() { blocked = true }()
			for _, k := range keys {
				vals, err := c.pop(k, left, 1)
				if blocked && errors.Is(err, keyspace.ErrWrongType) {
					continue
				}
				if c.fail(err) {
					return true
				}
				if len(vals) > 0 {
					c.array(2)
					c.bulk(k)
					c.bulk(vals[0])
					return true
				}
			}
			return false
		}
		c.block(keys, timeout, try, c.nullArray)
	}
}

// cmdBLMove: BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout.
func cmdBLMove(c *call) {
	from, ok := c.listEnd(3)
	if !ok {
		return
	}
	to, ok := c.listEnd(4)
	if !ok {
		return
	}
	c.blmove(5, from, to)
}

// cmdBRPopLPush: BRPOPLPUSH source destination timeout.
func cmdBRPopLPush(c *call) { c.blmove(3, false, true) }

// blmove blocks on the source only. Once blocked, a source of another type
// is passed over (Redis wakes clients for lists only), but a destination
// of another type ends the wait with WRONGTYPE, as Redis replies when it
// serves the client.
func (c *call) blmove(timeoutArg int, from, to bool) {
	timeout, ok := c.timeoutArg(timeoutArg)
	if !ok {
		return
	}
	src, dst := c.arg(1), c.arg(2)
	blocked := false
	try := func() bool {
		defer func() { blocked = true }()
		v, moved, err := c.st.LMove(c.ctx, c.db, src, dst, from, to)
		if blocked && errors.Is(err, keyspace.ErrWrongType) {
			if _, lerr := c.st.LLen(c.ctx, c.db, src); errors.Is(lerr, keyspace.ErrWrongType) {
				return false
			}
		}
		if c.fail(err) {
			return true
		}
		if moved {
			c.bulk(v)
		}
		return moved
	}
	// Redis 7.0 answers a timed out BLMOVE with a null array (as any
	// blocked list command), but one in MULTI with a null bulk.
	timedOut := c.nullArray
	if c.inTx {
		timedOut = c.null
	}
	c.block([][]byte{src}, timeout, try, timedOut)
}
