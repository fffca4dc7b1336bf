package resp

import (
	"math"

	"github.com/stratakv/strata/keyspace"
)

var stringCommands = []*command{
	{name: "get", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdGet,
		group: "string", summary: "Returns the string value of a key."},
	{name: "set", arity: -3, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdSet,
		group: "string", summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."},
	{name: "setnx", arity: 3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdSetNX,
		group: "string", summary: "Set the string value of a key only when the key doesn't exist."},
	{name: "setex", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdSetEx,
		group: "string", summary: "Sets the string value and expiration time of a key. Creates the key if it doesn't exist."},
	{name: "psetex", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdSetEx,
		group: "string", summary: "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist."},
	{name: "getset", arity: 3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdGetSet,
		group: "string", summary: "Returns the previous string value of a key after setting it to a new value."},
	{name: "getdel", arity: 2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdGetDel,
		group: "string", summary: "Returns the string value of a key after deleting the key."},
	{name: "getex", arity: -2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdGetEx,
		group: "string", summary: "Returns the string value of a key after setting its expiration time."},
	{name: "mget", arity: -2, flags: flagReadonly | flagFast, first: 1, last: -1, step: 1, handler: cmdMGet,
		group: "string", summary: "Atomically returns the string values of one or more keys."},
	{name: "mset", arity: -3, flags: flagWrite, first: 1, last: -1, step: 2, handler: cmdMSet,
		group: "string", summary: "Atomically creates or modifies the string values of one or more keys."},
	{name: "msetnx", arity: -3, flags: flagWrite, first: 1, last: -1, step: 2, handler: cmdMSet,
		group: "string", summary: "Atomically modifies the string values of one or more keys only when all keys don't exist."},
	{name: "append", arity: 3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdAppend,
		group: "string", summary: "Appends a string to the value of a key. Creates the key if it doesn't exist."},
	{name: "strlen", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdStrLen,
		group: "string", summary: "Returns the length of a string value."},
	{name: "getrange", arity: 4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdGetRange,
		group: "string", summary: "Returns a substring of the string stored at a key."},
	{name: "substr", arity: 4, flags: flagReadonly, first: 1, last: 1, step: 1, handler: cmdGetRange,
		group: "string", summary: "Returns a substring from a string value."},
	{name: "setrange", arity: 4, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdSetRange,
		group: "string", summary: "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist."},
	{name: "incr", arity: 2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdIncr,
		group: "string", summary: "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."},
	{name: "decr", arity: 2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdIncr,
		group: "string", summary: "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."},
	{name: "incrby", arity: 3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdIncr,
		group: "string", summary: "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist."},
	{name: "decrby", arity: 3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdIncr,
		group: "string", summary: "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist."},
	{name: "incrbyfloat", arity: 3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdIncrByFloat,
		group: "string", summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist."},
}

func cmdGet(c *call) {
	ok, err := c.st.GetView(c.ctx, c.db, c.arg(1), c.bulk)
	if c.fail(err) {
		return
	}
	if !ok {
		c.null()
	}
}

// expiryOption is a parsed EX/PX/EXAT/PXAT option.
type expiryOption struct {
	set bool
	at  int64 // absolute Unix ms
}

// parseExpiry parses the value of EX, PX, EXAT or PXAT (unit) at args[i]
// for command name into an absolute time in ms, with Redis's checks.
func (c *call) parseExpiry(i int, unit string, name string) (int64, bool) {
	n, ok := parseInt(c.arg(i))
	if !ok {
		c.notInteger()
		return 0, false
	}
	at, ok := expiryAt(n, unit, c.s.db.Now())
	if !ok {
		c.errorf(invalidExpire(name))
	}
	return at, ok
}

// expiryAt resolves n in unit (ex, px, exat, pxat) to an absolute time in
// ms as Redis's getExpireMillisecondsOrReply does: n must be positive and
// the result must not overflow.
func expiryAt(n int64, unit string, now int64) (int64, bool) {
	if n <= 0 {
		return 0, false
	}
	switch unit {
	case "ex":
		if n > math.MaxInt64/1000 || now > math.MaxInt64-n*1000 {
			return 0, false
		}
		return now + n*1000, true
	case "px":
		if now > math.MaxInt64-n {
			return 0, false
		}
		return now + n, true
	case "exat":
		if n > math.MaxInt64/1000 {
			return 0, false
		}
		return n * 1000, true
	}
	return n, true // pxat
}

func isExpiryOption(opt string) bool {
	return opt == "ex" || opt == "px" || opt == "exat" || opt == "pxat"
}

func invalidExpire(name string) string {
	return "ERR invalid expire time in '" + name + "' command"
}

// cmdSet: SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL].
// As in Redis, an option may repeat and only the last expiry value given
// is parsed, after the syntax check.
func cmdSet(c *call) {
	var o keyspace.SetOptions
	unit, at := "", 0 // the expiry option and the index of its value
	for i := 3; i < c.nargs(); i++ {
		opt := lowerASCII(c.arg(i))
		switch {
		case opt == "nx" && !o.XX:
			o.NX = true
		case opt == "xx" && !o.NX:
			o.XX = true
		case opt == "get":
			o.Get = true
		case opt == "keepttl" && unit == "":
			o.KeepTTL = true
		case isExpiryOption(opt) && (unit == "" || unit == opt) && !o.KeepTTL && i+1 < c.nargs():
			unit, at = opt, i+1
			i++
		default:
			c.syntaxError()
			return
		}
	}
	if unit != "" {
		var ok bool
		if o.ExpireAt, ok = c.parseExpiry(at, unit, "set"); !ok {
			return
		}
	}
	old, hadOld, done, err := c.st.Set(c.ctx, c.db, c.arg(1), c.arg(2), o)
	if c.fail(err) {
		return
	}
	switch {
	case o.Get:
		c.bulkOrNull(old, hadOld)
	case done:
		c.ok()
	default:
		c.null()
	}
}

// cmdSetNX: SETNX key value.
func cmdSetNX(c *call) {
	_, _, done, err := c.st.Set(c.ctx, c.db, c.arg(1), c.arg(2), keyspace.SetOptions{NX: true})
	if c.fail(err) {
		return
	}
	c.boolInt(done)
}

// cmdSetEx: SETEX key seconds value, PSETEX key milliseconds value.
func cmdSetEx(c *call) {
	unit := "ex"
	if c.cmd.name == "psetex" {
		unit = "px"
	}
	at, ok := c.parseExpiry(2, unit, c.cmd.name)
	if !ok {
		return
	}
	_, _, _, err := c.st.Set(c.ctx, c.db, c.arg(1), c.arg(3), keyspace.SetOptions{ExpireAt: at})
	if c.fail(err) {
		return
	}
	c.ok()
}

// cmdGetSet: GETSET key value, SET key value GET under its old name.
func cmdGetSet(c *call) {
	old, hadOld, _, err := c.st.Set(c.ctx, c.db, c.arg(1), c.arg(2), keyspace.SetOptions{Get: true})
	if c.fail(err) {
		return
	}
	c.bulkOrNull(old, hadOld)
}

func cmdGetDel(c *call) {
	v, ok, err := c.st.GetDel(c.ctx, c.db, c.arg(1))
	if c.fail(err) {
		return
	}
	c.bulkOrNull(v, ok)
}

// cmdGetEx: GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]. As with SET,
// an option may repeat and only the last expiry value given is parsed.
func cmdGetEx(c *call) {
	var o keyspace.GetExOptions
	unit, at := "", 0 // the expiry option and the index of its value
	for i := 2; i < c.nargs(); i++ {
		opt := lowerASCII(c.arg(i))
		switch {
		case isExpiryOption(opt) && (unit == "" || unit == opt) && !o.Persist && i+1 < c.nargs():
			unit, at = opt, i+1
			i++
		case opt == "persist" && unit == "":
			o.Persist = true
		default:
			c.syntaxError()
			return
		}
	}
	if unit != "" {
		n, isInt := parseInt(c.arg(at))
		var ok bool
		o.ExpireAt, ok = expiryAt(n, unit, c.s.db.Now())
		if !isInt || !ok {
			c.getExBadExpiry(isInt)
			return
		}
	}
	v, ok, err := c.st.GetEx(c.ctx, c.db, c.arg(1), o)
	if c.fail(err) {
		return
	}
	c.bulkOrNull(v, ok)
}

// getExBadExpiry replies to a GETEX whose expiry is not an integer or out
// of range. Redis looks the key up before it parses the expiry, so a
// missing key still reads as null and another type as WRONGTYPE.
func (c *call) getExBadExpiry(isInt bool) {
	_, ok, err := c.st.Get(c.ctx, c.db, c.arg(1))
	switch {
	case c.fail(err):
	case !ok:
		c.null()
	case !isInt:
		c.notInteger()
	default:
		c.errorf(invalidExpire("getex"))
	}
}

func cmdMGet(c *call) {
	vals, err := c.st.MGet(c.ctx, c.db, c.args[1:]...)
	if c.fail(err) {
		return
	}
	c.bulksOrNull(vals)
}

// cmdMSet: MSET and MSETNX key value [key value ...].
func cmdMSet(c *call) {
	if c.nargs()%2 == 0 {
		c.errorf(errArity(c.cmd.name))
		return
	}
	pairs := make([][2][]byte, 0, c.nargs()/2)
	for i := 1; i+1 < c.nargs(); i += 2 {
		pairs = append(pairs, [2][]byte{c.arg(i), c.arg(i + 1)})
	}
	if c.cmd.name == "mset" {
		if c.fail(c.st.MSet(c.ctx, c.db, pairs...)) {
			return
		}
		c.ok()
		return
	}
	done, err := c.st.MSetNX(c.ctx, c.db, pairs...)
	if c.fail(err) {
		return
	}
	c.boolInt(done)
}

func cmdAppend(c *call) {
	c.replyInt(c.st.Append(c.ctx, c.db, c.arg(1), c.arg(2)))
}

func cmdStrLen(c *call) {
	c.replyInt(c.st.StrLen(c.ctx, c.db, c.arg(1)))
}

// cmdGetRange: GETRANGE (and SUBSTR) key start end.
func cmdGetRange(c *call) {
	start, ok := c.intArg(2)
	if !ok {
		return
	}
	end, ok := c.intArg(3)
	if !ok {
		return
	}
	v, err := c.st.GetRange(c.ctx, c.db, c.arg(1), start, end)
	if c.fail(err) {
		return
	}
	c.bulk(v)
}

// cmdSetRange: SETRANGE key offset value.
func cmdSetRange(c *call) {
	off, ok := c.intArg(2)
	if !ok {
		return
	}
	n, err := c.st.SetRange(c.ctx, c.db, c.arg(1), off, c.arg(3))
	if c.fail(err) {
		return
	}
	c.int(n)
}

// cmdIncr: INCR, DECR, INCRBY and DECRBY. The increment is parsed before
// the key is read, as in Redis.
func cmdIncr(c *call) {
	var delta int64
	switch c.cmd.name {
	case "incr":
		delta = 1
	case "decr":
		delta = -1
	default:
		n, ok := c.intArg(2)
		if !ok {
			return
		}
		delta = n
		if c.cmd.name == "decrby" {
			if n == math.MinInt64 {
				c.errorf("ERR decrement would overflow")
				return
			}
			delta = -n
		}
	}
	n, err := c.st.IncrBy(c.ctx, c.db, c.arg(1), delta)
	if c.fail(err) {
		return
	}
	c.int(n)
}

// cmdIncrByFloat: INCRBYFLOAT key increment. The increment goes to the
// keyspace as text: Redis parses it as a long double, and a float64 would
// lose digits. The reply is the text stored.
func cmdIncrByFloat(c *call) {
	v, err := c.st.IncrByFloatText(c.ctx, c.db, c.arg(1), c.arg(2))
	if c.fail(err) {
		return
	}
	c.bulk(v)
}

// lowerASCII returns b lower-cased as a string, for option names.
func lowerASCII(b []byte) string {
	for _, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			out := []byte(string(b))
			for i, ch := range out {
				if 'A' <= ch && ch <= 'Z' {
					out[i] = ch + 32
				}
			}
			return string(out)
		}
	}
	return string(b)
}
