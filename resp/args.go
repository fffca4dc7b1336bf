package resp

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// parseInt parses a 64-bit integer as Redis's string2ll does: decimal
// digits, an optional '-', no '+', spaces or leading zeros.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	s := b
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// parseFloat parses a double as Redis's getDoubleFromObject does
// (strtod over the whole argument, no NaN, no leading space).
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || b[0] == ' ' || b[0] == '\t' || bytes.IndexByte(b, '_') >= 0 {
		return 0, false
	}
	s := string(b)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// strtod saturates out-of-range values to ±inf (ERANGE), which
		// Redis then refuses; ParseFloat reports them the same way.
		return 0, false
	}
	return f, !math.IsNaN(f)
}

// intArg parses argument i as an integer or replies with Redis's error.
func (c *call) intArg(i int) (int64, bool) {
	n, ok := parseInt(c.args[i])
	if !ok {
		c.notInteger()
	}
	return n, ok
}

// floatArg parses argument i as a double or replies with Redis's error.
func (c *call) floatArg(i int) (float64, bool) {
	f, ok := parseFloat(c.args[i])
	if !ok {
		c.errorf(msgNotFloat)
	}
	return f, ok
}

// is reports whether argument i is the option name (case-insensitive).
func (c *call) is(i int, name string) bool {
	return i < len(c.args) && strings.EqualFold(string(c.args[i]), name)
}

// timeoutArg parses a blocking command's timeout in seconds (a double, as
// in Redis 6+) into milliseconds; 0 means forever. It converts as Redis
// 7.0's getTimeoutFromObjectOrReply does: the milliseconds are rounded up
// (so a tiny positive timeout is 1 ms and one in (-0.001, 0] is 0, forever);
// a value too large for a long long (inf, 1e300) becomes LLONG_MIN there,
// hence "negative"; one whose deadline overflows never times out.
func (c *call) timeoutArg(i int) (int64, bool) {
	f, ok := parseFloat(c.args[i])
	if !ok && beyondDouble(c.args[i]) {
		f, ok = math.Inf(1), true // converted as inf is: "negative"
	}
	if !ok {
		c.errorf(msgTimeoutNotFloat)
		return 0, false
	}
	ms := math.Ceil(f * 1000)
	if ms < 0 || ms >= math.MaxInt64 {
		c.errorf(msgTimeoutNegative)
		return 0, false
	}
	n := int64(ms)
	if n > math.MaxInt64-time.Now().UnixMilli() {
		return 0, true
	}
	return n, true
}

// beyondDouble reports a number outside a double's range that Redis's
// strtold still reads as a finite long double (|x| < 2^16384), such as
// 1e400: a valid timeout there.
func beyondDouble(b []byte) bool {
	if len(b) == 0 || len(b) > 5000 || isCSpace(b[0]) {
		return false
	}
	f, n, erange := strtod(b)
	if n != len(b) || !erange || !math.IsInf(f, 0) {
		return false
	}
	x, _, err := big.ParseFloat(string(b), 0, 64, big.ToNearestEven)
	return err == nil && !x.IsInf() && x.MantExp(nil) <= 16384
}
