package resp

import (
	"math"
	"strings"

	"github.com/stratakv/strata/keyspace"
)

var keyCommands = []*command{
	{name: "del", arity: -2, flags: flagWrite, first: 1, last: -1, step: 1, handler: cmdDel,
		group: "generic", summary: "Deletes one or more keys."},
	{name: "unlink", arity: -2, flags: flagWrite | flagFast, first: 1, last: -1, step: 1, handler: cmdDel,
		group: "generic", summary: "Asynchronously deletes one or more keys."},
	{name: "exists", arity: -2, flags: flagReadonly | flagFast, first: 1, last: -1, step: 1, handler: cmdExists,
		group: "generic", summary: "Determines whether one or more keys exist."},
	{name: "touch", arity: -2, flags: flagReadonly | flagFast, first: 1, last: -1, step: 1, handler: cmdExists,
		group: "generic", summary: "Returns the number of existing keys out of those specified after updating the time they were last accessed."},
	{name: "type", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdType,
		group: "generic", summary: "Determines the type of value stored at a key."},
	{name: "expire", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdExpire,
		group: "generic", summary: "Sets the expiration time of a key in seconds."},
	{name: "pexpire", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdExpire,
		group: "generic", summary: "Sets the expiration time of a key in milliseconds."},
	{name: "expireat", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdExpire,
		group: "generic", summary: "Sets the expiration time of a key to a Unix timestamp."},
	{name: "pexpireat", arity: -3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdExpire,
		group: "generic", summary: "Sets the expiration time of a key to a Unix milliseconds timestamp."},
	{name: "ttl", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdTTL,
		group: "generic", summary: "Returns the expiration time in seconds of a key."},
	{name: "pttl", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdTTL,
		group: "generic", summary: "Returns the expiration time in milliseconds of a key."},
	{name: "expiretime", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdExpireTime,
		group: "generic", summary: "Returns the expiration time of a key as a Unix timestamp."},
	{name: "pexpiretime", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdExpireTime,
		group: "generic", summary: "Returns the expiration time of a key as a Unix milliseconds timestamp."},
	{name: "persist", arity: 2, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdPersist,
		group: "generic", summary: "Removes the expiration time of a key."},
	{name: "rename", arity: 3, flags: flagWrite, first: 1, last: 2, step: 1, handler: cmdRename,
		group: "generic", summary: "Renames a key and overwrites the destination."},
	{name: "renamenx", arity: 3, flags: flagWrite | flagFast, first: 1, last: 2, step: 1, handler: cmdRename,
		group: "generic", summary: "Renames a key only when the target key name doesn't exist."},
	{name: "keys", arity: 2, flags: flagReadonly, handler: cmdKeys,
		group: "generic", summary: "Returns all key names that match a pattern."},
	{name: "scan", arity: -2, flags: flagReadonly, handler: cmdScan,
		group: "generic", summary: "Iterates over the key names in the database."},
	{name: "randomkey", arity: 1, flags: flagReadonly, handler: cmdRandomKey,
		group: "generic", summary: "Returns a random key name from the database."},
	{name: "copy", arity: -3, flags: flagWrite, first: 1, last: 2, step: 1, handler: cmdCopy,
		group: "generic", summary: "Copies the value of a key to a new key."},
	{name: "move", arity: 3, flags: flagWrite | flagFast, first: 1, last: 1, step: 1, handler: cmdMove,
		group: "generic", summary: "Moves a key to another database."},
}

// cmdDel: DEL and UNLINK key [key ...]. Both are O(1) per key here (only
// the metadata row is deleted), so UNLINK has nothing to defer.
func cmdDel(c *call) {
	c.replyInt(c.st.Del(c.ctx, c.db, c.args[1:]...))
}

// cmdExists: EXISTS and TOUCH key [key ...]; there is no access time for
// TOUCH to update.
func cmdExists(c *call) {
	c.replyInt(c.st.Exists(c.ctx, c.db, c.args[1:]...))
}

func cmdType(c *call) {
	t, err := c.st.TypeOf(c.ctx, c.db, c.arg(1))
	if c.fail(err) {
		return
	}
	c.status(t.String())
}

// cmdExpire: EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT key time
// [NX|XX|GT|LT], checked in Redis's order: the options, the time, then
// the key. A time at or before now deletes the key (and replies 1).
func cmdExpire(c *call) {
	var cond keyspace.ExpireCond
	for i := 3; i < c.nargs(); i++ {
		switch lowerASCII(c.arg(i)) {
		case "nx":
			cond.NX = true
		case "xx":
			cond.XX = true
		case "gt":
			cond.GT = true
		case "lt":
			cond.LT = true
		default:
			c.errorf("ERR Unsupported option " + noNewlines(strings.TrimRight(string(cString(c.arg(i))), "\r\n")))
			return
		}
	}
	if cond.NX && (cond.XX || cond.GT || cond.LT) {
		c.errorf("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if cond.GT && cond.LT {
		c.errorf("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := c.intArg(2)
	if !ok {
		return
	}
	at, ok := expireCommandTime(c.cmd.name, when, c.s.db.Now())
	if !ok {
		c.errorf(invalidExpire(c.cmd.name))
		return
	}
	done, err := c.st.Expire(c.ctx, c.db, c.arg(1), at, cond)
	if c.fail(err) {
		return
	}
	c.boolInt(done)
}

// expireCommandTime resolves an EXPIRE-family argument to absolute ms as
// Redis's expireGenericCommand does: negative times are allowed (they
// delete the key), but the unit conversion and the addition of now must
// not overflow.
func expireCommandTime(name string, when, now int64) (int64, bool) {
	if name == "expire" || name == "expireat" {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return 0, false
		}
		when *= 1000
	}
	if name == "expire" || name == "pexpire" {
		if when > math.MaxInt64-now {
			return 0, false
		}
		when += now
	}
	return when, true
}

// cmdTTL: TTL and PTTL key. TTL rounds to the nearest second, as Redis's
// (ttl+500)/1000 does.
func cmdTTL(c *call) {
	ms, err := c.st.PTTL(c.ctx, c.db, c.arg(1))
	if c.fail(err) {
		return
	}
	if c.cmd.name == "ttl" && ms >= 0 {
		ms = (ms + 500) / 1000
	}
	c.int(ms)
}

// cmdExpireTime: EXPIRETIME and PEXPIRETIME key. EXPIRETIME rounds to
// the nearest second, as Redis's (expire+500)/1000 does.
func cmdExpireTime(c *call) {
	at, err := c.st.ExpireTime(c.ctx, c.db, c.arg(1))
	if c.fail(err) {
		return
	}
	if c.cmd.name == "expiretime" && at >= 0 {
		at = (at + 500) / 1000
	}
	c.int(at)
}

func cmdPersist(c *call) {
	c.replyBool(c.st.Persist(c.ctx, c.db, c.arg(1)))
}

// cmdRename: RENAME (replies OK) and RENAMENX (1, or 0 if the destination
// exists) source destination.
func cmdRename(c *call) {
	nx := c.cmd.name == "renamenx"
	done, err := c.st.Rename(c.ctx, c.db, c.arg(1), c.arg(2), nx)
	if c.fail(err) {
		return
	}
	if nx {
		c.boolInt(done)
	} else {
		c.ok()
	}
}

func cmdKeys(c *call) {
	c.replyBulks(c.st.Keys(c.ctx, c.db, c.argStr(1)))
}

func cmdRandomKey(c *call) {
	k, ok, err := c.st.RandomKey(c.ctx, c.db)
	if c.fail(err) {
		return
	}
	c.bulkOrNull(k, ok)
}

// dbArg parses a database index at args[i] as Redis's COPY and MOVE do
// (getIntFromObjectOrReply, then selectDb).
func (c *call) dbArg(i int) (int, bool) {
	n, ok := c.intArg(i)
	if !ok {
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		c.errorf("ERR value is out of range, value must between -2147483648 and 2147483647")
		return 0, false
	}
	if n < 0 || n >= keyspace.NumDBs {
		c.errorf(msgInvalidDB)
		return 0, false
	}
	return int(n), true
}

// cmdCopy: COPY source destination [DB destination-db] [REPLACE].
func cmdCopy(c *call) {
	dst, replace := c.db, false
	for i := 3; i < c.nargs(); i++ {
		switch {
		case c.is(i, "replace"):
			replace = true
		case c.is(i, "db") && i+1 < c.nargs():
			db, ok := c.dbArg(i + 1)
			if !ok {
				return
			}
			dst = db
			i++
		default:
			c.syntaxError()
			return
		}
	}
	done, err := c.st.Copy(c.ctx, c.db, c.arg(1), dst, c.arg(2), replace)
	if c.fail(err) {
		return
	}
	if done && dst != c.db {
		c.touchOtherDB(dst, c.arg(2))
	}
	c.boolInt(done)
}

// cmdMove: MOVE key db.
func cmdMove(c *call) {
	dst, ok := c.dbArg(2)
	if !ok {
		return
	}
	done, err := c.st.Move(c.ctx, c.db, c.arg(1), dst)
	if c.fail(err) {
		return
	}
	if done {
		c.touchOtherDB(dst, c.arg(1))
	}
	c.boolInt(done)
}

// touchOtherDB wakes clients blocked on key in database db. The
// dispatcher does this for the keys of the table row, which it takes to be
// in the client's database; COPY ... DB and MOVE write one in another.
// (Watches need nothing: the keyspace stamps every write.)
func (c *call) touchOtherDB(db int, key []byte) {
	c.s.blocked.signal(db, [][]byte{key})
}

// cmdScan: SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The
// cursor is checked first, then the options, as in Redis.
func cmdScan(c *call) {
	cursor, ok := scanCursors.decode(c.arg(1))
	if !ok {
		c.errorf("ERR invalid cursor")
		return
	}
	match, hasMatch, count, typeName := "", false, int64(10), ""
	for i := 2; i < c.nargs(); i++ {
		switch {
		case c.is(i, "count") && i+1 < c.nargs():
			n, ok := c.intArg(i + 1)
			if !ok {
				return
			}
			if n < 1 {
				c.syntaxError()
				return
			}
			count = n
		case c.is(i, "match") && i+1 < c.nargs():
			match, hasMatch = c.argStr(i+1), true
		case c.is(i, "type") && i+1 < c.nargs():
			typeName = c.argStr(i + 1)
		default:
			c.syntaxError()
			return
		}
		i++
	}
	typ := keyspace.TypeNone
	if typeName != "" {
		if typ, ok = typeByName(typeName); !ok {
			// Redis 7.0 compares names, so an unknown one matches no key.
			c.scanReply(nil, nil)
			return
		}
	}
	next, keys, err := c.st.Scan(c.ctx, c.db, cursor, match, int(min(count, math.MaxInt32)), typ)
	if c.fail(err) {
		return
	}
	if hasMatch && match == "" {
		// The keyspace reads an empty pattern as "no pattern"; for Redis it
		// is a pattern that matches only the empty key.
		keys = keepEmpty(keys)
	}
	c.scanReply(next, keys)
}

func (c *call) scanReply(next []byte, keys [][]byte) {
	c.array(2)
	c.bulkString(scanCursors.encode(next))
	c.bulks(keys)
}

func keepEmpty(keys [][]byte) [][]byte {
	var out [][]byte
	for _, k := range keys {
		if len(k) == 0 {
			out = append(out, k)
		}
	}
	return out
}

// typeByName returns the type TYPE names name (case-insensitive).
func typeByName(name string) (keyspace.Type, bool) {
	for _, t := range []keyspace.Type{keyspace.TypeString, keyspace.TypeHash, keyspace.TypeList,
		keyspace.TypeSet, keyspace.TypeZSet} {
		if strings.EqualFold(name, t.String()) {
			return t, true
		}
	}
	return keyspace.TypeNone, false
}
