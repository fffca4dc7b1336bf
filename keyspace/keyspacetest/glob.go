package keyspacetest

// GlobMatch reports whether s matches the glob pattern as Redis's
// stringmatchlen (util.c, case-sensitive) decides, for KEYS and SCAN MATCH:
//
//   - any run of bytes, also none
//     ?        any one byte
//     [abc]    one of the bytes; [^abc] any byte but those; [a-z] a range (a
//     reversed range [z-a] works too; bytes compare as C's signed
//     char, so a range across 0x7f/0x80 behaves as in Redis);
//     \x inside brackets is x; a '[' never closed runs to the end
//     \x       the byte x
//
// Its quirks are kept: the whole pattern "*" is special-cased by SCAN and
// KEYS, not here, so GlobMatch("*", "") is false, as stringmatchlen is.
func GlobMatch(pattern, s []byte) bool {
	skipLonger := false
	return globMatch(pattern, s, &skipLonger)
}

// globMatch is stringmatchlen_impl. skipLonger is set once the rest of the
// pattern after a '*' matched nowhere: an earlier '*' cannot help then.
func globMatch(p, s []byte, skipLonger *bool) bool {
	for len(p) > 0 && len(s) > 0 {
		consumedAll := false // the pattern ended inside an unclosed '['
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatch(p[1:], s, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			var match bool
			p, match, consumedAll = globClass(p[1:], s[0])
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		if consumedAll {
			p = p[:0]
		} else {
			p = p[1:]
		}
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// globClass matches c against the bracket class p starts (just after '[').
// It returns the pattern at the class's closing ']' (the caller steps over
// it) and whether c matched; consumedAll is set when no ']' closed it.
func globClass(p []byte, c byte) (rest []byte, match, consumedAll bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	for {
		switch {
		case len(p) >= 2 && p[0] == '\\':
			p = p[1:]
			if p[0] == c {
				match = true
			}
		case len(p) > 0 && p[0] == ']':
			return p, match != not, false
		case len(p) == 0:
			return p, match != not, true
		case len(p) >= 3 && p[1] == '-':
			// C compares these as (signed) char.
			start, end, ch := int(int8(p[0])), int(int8(p[2])), int(int8(c))
			if start > end {
				start, end = end, start
			}
			p = p[2:]
			if start <= ch && ch <= end {
				match = true
			}
		default:
			if p[0] == c {
				match = true
			}
		}
		p = p[1:]
	}
}
