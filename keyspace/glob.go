package keyspace

// globMatch reports whether s matches the Redis glob pattern p (KEYS,
// SCAN MATCH): * any run, ? any byte, [abc] [^abc] [a-z] classes, and \x
// for a literal x. Bytes, not runes, as Redis compares.
//
// Like Redis's matcher, an empty string matches only the empty pattern
// (SCAN's and KEYS's "*" shortcut, which the caller applies, aside).
func globMatch(p string, s []byte) bool { return MatchPattern(p, s) }

// MatchPattern reports whether s matches the glob-style pattern p, as
// Redis matches KEYS, SCAN MATCH and PSUBSCRIBE patterns.
func MatchPattern(p string, s []byte) bool {
	if len(s) == 0 {
		return len(p) == 0
	}
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			p, s = p[1:], s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			rest, ok := matchClass(p[1:], s[0])
			if !ok {
				return false
			}
			p, s = rest, s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || p[0] != s[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return len(s) == 0
}

// matchClass matches c against the class that p starts just inside of, and
// returns the pattern after the class. An unterminated class runs to the
// end of the pattern, as in Redis.
func matchClass(p string, c byte) (string, bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	match := false
	for len(p) > 0 && p[0] != ']' {
		switch {
		case p[0] == '\\' && len(p) >= 2:
			match = match || p[1] == c
			p = p[2:]
		case len(p) >= 3 && p[1] == '-':
			lo, hi := p[0], p[2]
			if lo > hi {
				lo, hi = hi, lo
			}
			match = match || (c >= lo && c <= hi)
			p = p[3:]
		default:
			match = match || p[0] == c
			p = p[1:]
		}
	}
	if len(p) > 0 {
		p = p[1:] // the closing ]
	}
	return p, match != not
}
