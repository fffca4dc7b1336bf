package resp

import (
	"errors"
	"math"
	"strconv"

	"github.com/stratakv/strata/keyspace"
)

// Numbers and ranges as Redis reads them. Redis parses scores with C's
// strtod, which accepts more than strconv.ParseFloat (hexadecimal without
// an exponent, "infinity", leading spaces in ranges), and its range parser
// does not check for overflow: "1e400" is +inf there but not a valid ZADD
// score. strtod below is a port of glibc's grammar over ParseFloat.

// parseDouble reads a score, increment or weight as Redis's string2d: the
// whole argument, no leading space, no overflow or underflow to zero, no
// NaN.
func parseDouble(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	f, n, erange := strtod(b)
	if n != len(b) || math.IsNaN(f) || (erange && (math.IsInf(f, 0) || f == 0)) {
		return 0, false
	}
	return f, true
}

// parseScoreBound reads one end of a score range as zslParseRange: "(x"
// is exclusive; strtod must stop at the end of the argument (or at a NUL
// byte, where C's string ends); NaN is refused. An empty x is 0.
func parseScoreBound(b []byte) (keyspace.ScoreBound, bool) {
	var sb keyspace.ScoreBound
	if len(b) > 0 && b[0] == '(' {
		sb.Exclusive = true
		b = b[1:]
	}
	f, n, _ := strtod(b)
	if (n != len(b) && b[n] != 0) || math.IsNaN(f) {
		return sb, false
	}
	sb.Value = f
	return sb, true
}

// parseLexBound reads one end of a lexicographic range: "-", "+", "(x" or
// "[x".
func parseLexBound(b []byte) (keyspace.LexBound, bool) {
	switch {
	case len(b) == 0:
		return keyspace.LexBound{}, false
	case b[0] == '-' || b[0] == '+':
		if len(b) != 1 {
			return keyspace.LexBound{}, false
		}
		if b[0] == '-' {
			return keyspace.LexMin, true
		}
		return keyspace.LexMax, true
	case b[0] == '(' || b[0] == '[':
		return keyspace.LexBound{Value: b[1:], Exclusive: b[0] == '('}, true
	}
	return keyspace.LexBound{}, false
}

func isCSpace(ch byte) bool {
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r'
}

func isDigit(ch byte) bool { return '0' <= ch && ch <= '9' }

func isHexDigit(ch byte) bool {
	return isDigit(ch) || ('a' <= ch|0x20 && ch|0x20 <= 'f')
}

// hasPrefixFold reports whether b starts with the lower-case ASCII word w,
// ignoring case.
func hasPrefixFold(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	for i := range len(w) {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

// strtod parses the longest prefix of b that glibc's strtod accepts and
// returns its value, the bytes it used (0: no number) and whether the value
// overflowed or underflowed to zero (errno ERANGE; Redis checks no more).
func strtod(b []byte) (float64, int, bool) {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	sign := 1.0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		if b[i] == '-' {
			sign = -1
		}
		i++
	}
	rest := b[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return math.Inf(int(sign)), i + 8, false
	case hasPrefixFold(rest, "inf"):
		return math.Inf(int(sign)), i + 3, false
	case hasPrefixFold(rest, "nan"):
		n := i + 3
		if n < len(b) && b[n] == '(' { // nan(n-char-sequence)
			j := n + 1
			for j < len(b) && (isHexDigit(b[j]) || b[j] == '_' || (b[j]|0x20 >= 'a' && b[j]|0x20 <= 'z')) {
				j++
			}
			if j < len(b) && b[j] == ')' {
				n = j + 1
			}
		}
		return math.NaN(), n, false
	case len(rest) > 2 && rest[0] == '0' && rest[1]|0x20 == 'x':
		if n := scanMantissa(rest[2:], isHexDigit, 'p'); n > 0 {
			text := "0x" + string(rest[2:2+n])
			if !bytesContainFold(rest[2:2+n], 'p') {
				text += "p0" // ParseFloat wants the exponent strtod allows to omit
			}
			return parsed(sign, text, true, i+2+n)
		}
		return sign * 0, i + 1, false // "0", then the 'x' is left over
	}
	if n := scanMantissa(rest, isDigit, 'e'); n > 0 {
		return parsed(sign, string(rest[:n]), false, i+n)
	}
	return 0, 0, false
}

// scanMantissa returns the length of digits[.digits][<exp>[sign]digits] at
// the start of b (0 if there is no digit before the exponent); an exponent
// without digits is left out, as strtod leaves it.
func scanMantissa(b []byte, digit func(byte) bool, exp byte) int {
	i, digits := 0, 0
	for i < len(b) && digit(b[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && digit(b[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(b) && b[i]|0x20 == exp {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j < len(b) && isDigit(b[j]) {
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func bytesContainFold(b []byte, ch byte) bool {
	for _, c := range b {
		if c|0x20 == ch {
			return true
		}
	}
	return false
}

// parsed converts text, an unsigned number in strtod's grammar (hex: with
// its 0x), applies sign and reports ERANGE: ParseFloat's overflow, or an
// underflow to zero from a mantissa that is not zero.
func parsed(sign float64, text string, hex bool, n int) (float64, int, bool) {
	f, err := strconv.ParseFloat(text, 64)
	erange := errors.Is(err, strconv.ErrRange) || (f == 0 && mantissaNonZero(text, hex))
	return sign * f, n, erange
}

func mantissaNonZero(text string, hex bool) bool {
	exp := byte('e')
	if hex {
		text, exp = text[2:], 'p'
	}
	for i := 0; i < len(text) && text[i]|0x20 != exp; i++ {
		if text[i] != '0' && text[i] != '.' {
			return true
		}
	}
	return false
}
