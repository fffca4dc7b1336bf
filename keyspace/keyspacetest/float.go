package keyspacetest

// Numbers as Redis 7.0 parses and prints them. Two float formats exist:
//
//   - A double in a reply (ZSCORE, ZINCRBY, ZRANGE WITHSCORES) is printed
//     with "%.17g" (addReplyDouble): ZADD z 0.1 m; ZSCORE z m → "0.10000000000000001".
//     Redis 7.2 switched to the shortest representation ("0.1"); the server
//     these tests run against is 7.0.
//   - INCRBYFLOAT and HINCRBYFLOAT compute in C's long double (x87 80-bit,
//     64-bit mantissa) and store and reply with "%.17Lf", trailing zeros and
//     a trailing '.' removed, "-0" printed "0" (ld2string LD_STR_HUMAN):
//     INCRBYFLOAT 0.1 then 0.2 → "0.3", not "0.30000000000000004"; 1e-20 → "0".
//
// long double is emulated with math/big at 64-bit precision, rounding to
// nearest even, as the x87 unit does.

import (
	"math"
	"strconv"

	"github.com/stratakv/strata/keyspace"
)

// FormatIncrFloat is keyspace.FormatIncrFloat.
func FormatIncrFloat(f float64) string { return keyspace.FormatIncrFloat(f) }

// FormatFloat formats f as Redis 7.0 replies with a double ("%.17g"; "inf"
// and "-inf"): the text of ZSCORE, ZINCRBY and WITHSCORES replies.
func FormatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	// Go's %g with a precision matches C's: trailing zeros dropped, %e with
	// at least two exponent digits when the exponent is < -4 or >= 17.
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// parseInt parses b as Redis's string2ll does: a canonical decimal int64
// only (no sign but '-', no leading zeros, no "-0", no spaces).
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != string(b) {
		return 0, false
	}
	return v, true
}

// addInt64 adds delta to v as INCRBY and HINCRBY do, refusing to overflow.
func addInt64(v, delta int64) (int64, error) {
	if (delta < 0 && v < 0 && delta < math.MinInt64-v) || (delta > 0 && v > 0 && delta > math.MaxInt64-v) {
		return 0, ErrOverflow
	}
	return v + delta, nil
}
