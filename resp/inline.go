package resp

// splitArgs splits an inline command as Redis's sdssplitargs does:
// arguments separated by white space; in double quotes the escapes \n \r
// \t \b \a \xHH and \c (any other c); in single quotes only \'; a closing
// quote must be followed by white space or the end. A NUL ends the line,
// as it ends the C string. ok is false for unbalanced quotes.
func splitArgs(line []byte) (args [][]byte, ok bool) {
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	p := 0
	for {
		for isSpace(at(p)) {
			p++
		}
		if at(p) == 0 {
			return args, true
		}
		var cur []byte
		inq, insq := false, false
		for done := false; !done; {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
					cur = append(cur, unhex(at(p+2))<<4|unhex(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					e := at(p)
					switch e {
					case 'n':
						e = '\n'
					case 'r':
						e = '\r'
					case 't':
						e = '\t'
					case 'b':
						e = '\b'
					case 'a':
						e = '\a'
					}
					cur = append(cur, e)
				case c == '"':
					if at(p+1) != 0 && !isSpace(at(p+1)) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if at(p+1) != 0 && !isSpace(at(p+1)) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if c != 0 {
				p++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
