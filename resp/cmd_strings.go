package resp

import (
	"math"
	"strconv"

	"github.com/stratakv/strata/keyspace"
)

var stringCommands = []*command{
	{name: "get", arity: 2, flags: flagReadonly | flagFast, first: 1, last: 1, step: 1, handler: cmdGet,
		group: "string", summary: "Returns the string value of a key."},
	{name: "set", arity: -3, flags: flagWrite, first: 1, last: 1, step: 1, handler: cmdSet,
		group: "string", summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."},
}

func cmdGet(c *call) {
	v, ok, err := c.st.Get(c.ctx, c.db, c.arg(1))
	if c.fail(err) {
		return
	}
	c.bulkOrNull(v, ok)
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
	if n <= 0 {
		c.errorf(invalidExpire(name))
		return 0, false
	}
	now := c.s.db.Now()
	var at int64
	switch unit {
	case "ex":
		if n > math.MaxInt64/1000 || now > math.MaxInt64-n*1000 {
			c.errorf(invalidExpire(name))
			return 0, false
		}
		at = now + n*1000
	case "px":
		if now > math.MaxInt64-n {
			c.errorf(invalidExpire(name))
			return 0, false
		}
		at = now + n
	case "exat":
		if n > math.MaxInt64/1000 {
			c.errorf(invalidExpire(name))
			return 0, false
		}
		at = n * 1000
	case "pxat":
		at = n
	}
	return at, true
}

func invalidExpire(name string) string {
	return "ERR invalid expire time in '" + name + "' command"
}

// cmdSet: SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL].
func cmdSet(c *call) {
	var o keyspace.SetOptions
	var exp bool
	for i := 3; i < c.nargs(); i++ {
		opt := lowerASCII(c.arg(i))
		switch {
		case opt == "nx" && !o.XX:
			o.NX = true
		case opt == "xx" && !o.NX:
			o.XX = true
		case opt == "get":
			o.Get = true
		case opt == "keepttl" && !exp:
			o.KeepTTL = true
		case (opt == "ex" || opt == "px" || opt == "exat" || opt == "pxat") && !exp && !o.KeepTTL && i+1 < c.nargs():
			at, ok := c.parseExpiry(i+1, opt, "set")
			if !ok {
				return
			}
			o.ExpireAt, exp = at, true
			i++
		default:
			c.syntaxError()
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

var _ = strconv.Itoa
