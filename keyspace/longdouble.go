package keyspace

// INCRBYFLOAT and HINCRBYFLOAT compute in C's long double (x87 80-bit,
// 64-bit mantissa) and store and reply with "%.17Lf", trailing zeros and a
// trailing '.' removed, "-0" printed "0" (Redis's ld2string
// LD_STR_HUMAN): INCRBYFLOAT 0.1 then 0.2 gives "0.3", not
// "0.30000000000000004". long double is emulated with math/big at 64-bit
// precision, rounding to nearest even, as the x87 unit does. The reference
// model in keyspacetest uses these functions too, and its tests compare
// them with a real redis-server.

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// IncrFloat returns cur + delta as INCRBYFLOAT computes and stores it; cur
// nil means a missing key or field (0). It fails with ErrNotFloat if cur is
// not a float as Redis parses one, and ErrNaNOrInfinity if an operand or
// the sum is infinite.
func IncrFloat(cur []byte, delta float64) (string, error) {
	var x *big.Float
	if cur != nil {
		var ok bool
		if x, ok = parseLongDouble(cur); !ok {
			return "", ErrNotFloat
		}
	}
	return incrLongDouble(x, delta)
}

// FormatIncrFloat formats f as Redis replies to INCRBYFLOAT and
// HINCRBYFLOAT, for the f that IncrByFloat and HIncrByFloat return.
// It is exact when Redis's text is the shortest representation of its own
// float64 (checked against redis-server in the tests); a result with more
// digits than a float64 holds ("3.00000000000000084") is only in the stored
// string, which GET and HGET return exactly.
func FormatIncrFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return formatDouble17(f)
	}
	x, _ := newLongDouble().SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return formatLongDouble(x)
}

func newLongDouble() *big.Float {
	return new(big.Float).SetPrec(64).SetMode(big.ToNearestEven)
}

// ldblMax is LDBL_MAX, (2^64-1)·2^(16384-64); ldblTrueMin is the smallest
// subnormal long double, 2^-16445.
var (
	ldblMax     = newLongDouble().SetMantExp(newLongDouble().SetUint64(math.MaxUint64), 16384-64)
	ldblTrueMin = newLongDouble().SetMantExp(big.NewFloat(1), -16445)
)

// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS: longer input is no float.
const maxLongDoubleChars = 5 * 1024

// parseLongDouble parses b as Redis's string2ld does: strtold over the whole
// input, no leading space, no NaN, no overflow to ±HUGE_VAL nor underflow to
// zero. strtold accepts "inf"/"infinity" and hexadecimal ("0x1p3", "0x10"),
// so this does too. Subnormal long doubles are not emulated exactly.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return nil, false
	}
	s := string(b)
	body, neg := s, false
	if body[0] == '+' || body[0] == '-' {
		body, neg = body[1:], body[0] == '-'
	}
	if lower := strings.ToLower(body); lower == "inf" || lower == "infinity" {
		return newLongDouble().SetInf(neg), true
	}
	hex := len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	var zero, ok bool
	var exp int
	if hex {
		zero, exp, ok = scanFloat(body[2:], isHexDigit, "pP")
	} else {
		zero, exp, ok = scanFloat(body, isDigit, "eE")
	}
	if !ok {
		return nil, false
	}
	if zero {
		return newLongDouble(), true
	}
	// Exponents this large overflow or underflow whatever the mantissa
	// (at most maxLongDoubleChars digits); big.Float would take long.
	if exp > 100_000 || exp < -100_000 {
		return nil, false
	}
	base := 10
	if hex {
		base = 0
	}
	x, _, err := newLongDouble().Parse(s, base)
	if err != nil {
		return nil, false
	}
	if a := new(big.Float).Abs(x); a.Cmp(ldblMax) > 0 || a.Cmp(ldblTrueMin) < 0 {
		return nil, false
	}
	return x, true
}

// scanFloat checks that s is a mantissa of digits with an optional '.' and
// at least one digit, then an optional exponent (a letter of expLetters, a
// sign, decimal digits), and nothing else. It returns whether every mantissa
// digit is zero and the exponent's value (saturated).
func scanFloat(s string, digit func(byte) bool, expLetters string) (zero bool, exp int, ok bool) {
	i, digits, dot := 0, 0, false
	zero = true
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case digit(c):
			digits++
			if c != '0' {
				zero = false
			}
		case c == '.' && !dot:
			dot = true
		default:
			goto mantissaDone
		}
	}
mantissaDone:
	if digits == 0 {
		return false, 0, false
	}
	if i == len(s) {
		return zero, 0, true
	}
	if !strings.ContainsRune(expLetters, rune(s[i])) {
		return false, 0, false
	}
	i++
	sign := 1
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		if s[i] == '-' {
			sign = -1
		}
		i++
	}
	if i == len(s) {
		return false, 0, false
	}
	for ; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false, 0, false
		}
		exp = min(exp*10+int(s[i]-'0'), 1<<30)
	}
	return zero, sign * exp, true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// formatLongDouble prints x as ld2string(LD_STR_HUMAN) does.
func formatLongDouble(x *big.Float) string {
	if x.IsInf() {
		if x.Sign() > 0 {
			return "inf"
		}
		return "-inf"
	}
	s := x.Text('f', 17)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// incrLongDouble is the arithmetic of INCRBYFLOAT and HINCRBYFLOAT: cur (the
// current value, already parsed; nil for a missing key or field) plus
// delta, as text. delta travels as a float64, so it is taken to be what a
// client would have sent: its shortest decimal representation, parsed as a
// long double. An infinite sum (or operand) is ErrNaNOrInfinity.
func incrLongDouble(cur *big.Float, delta float64) (string, error) {
	if cur == nil {
		cur = newLongDouble()
	}
	d, ok := newLongDouble().SetString(strconv.FormatFloat(delta, 'g', -1, 64))
	if !ok || cur.IsInf() || math.IsInf(delta, 0) {
		return "", ErrNaNOrInfinity
	}
	sum := newLongDouble().Add(cur, d)
	if new(big.Float).Abs(sum).Cmp(ldblMax) > 0 {
		return "", ErrNaNOrInfinity
	}
	return formatLongDouble(sum), nil
}

// formatDouble17 prints ±inf as Redis does.
func formatDouble17(f float64) string {
	if math.IsInf(f, 1) {
		return "inf"
	}
	if math.IsInf(f, -1) {
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}
