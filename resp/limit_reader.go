package resp

import (
	"bytes"
	"io"
	"strconv"
)

// Limits of the protocol reader, as redis-server has them.
const (
	maxMultibulkLen = 1024 * 1024 // arguments of one command
	maxInlineSize   = 64 * 1024   // bytes of one inline command
	maxHeaderLine   = 64 * 1024
	holdMax         = 1 << 20 // bytes of an unfinished command held back from redcon
)

// protocolError is a request the server refuses before parsing it. msg,
// when set, is sent to the client before the connection is closed.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// limitReader sits between a connection and redcon's reader and enforces
// the limits redcon lacks: it follows the RESP framing of the byte stream
// (without copying bulk payloads aside) to refuse a bulk longer than
// proto-max-bulk-len, too many arguments, an oversized inline command or a
// command larger than the query buffer limit, before redcon buffers it.
// It also drops the empty multibulks `*0` and `*-1`, which Redis ignores
// and redcon rejects, words framing errors as Redis does, and turns inline
// commands into multibulks split as Redis splits them (sdssplitargs:
// quotes, \xHH escapes, tabs), which redcon does differently.
//
// The bytes before a refused frame are returned first, so the commands
// that preceded it run; the error comes with the next Read.
type limitReader struct {
	r        io.Reader
	maxBulk  int64
	maxQuery int64

	buf     []byte
	out     []byte // scanned bytes not yet returned
	held    []byte // an array header line, emitted once complete and valid
	pending []byte // bytes read ahead by a blocked client's watcher
	err     error

	state    int
	line     int   // length of the header/inline line so far
	num      int64 // the number being parsed from a header line
	neg      bool
	digits   int
	bad      bool
	left     int64 // bulk bytes (with CRLF) left
	args     int64 // bulks left in the current multibulk
	cmdBytes int64
}

const (
	stFrame = iota
	stArrayHeader
	stBulkStart
	stBulkHeader
	stBulkBody
	stInline
)

func newLimitReader(r io.Reader, maxBulk, maxQuery int64) *limitReader {
	return &limitReader{r: r, maxBulk: maxBulk, maxQuery: maxQuery, buf: make([]byte, 16<<10)}
}

// unread puts bytes back in front of the stream.
func (l *limitReader) unread(b []byte) {
	l.pending = append(b, l.pending...)
}

func (l *limitReader) Read(p []byte) (int, error) {
	for {
		// Hand redcon whole commands (or big pieces): it parses its buffer
		// from the start of the unfinished command on every Read, so a
		// command of a million arguments fed 16 KB at a time would cost
		// quadratic time.
		if len(l.out) > 0 && (l.state == stFrame || len(l.out) >= holdMax || l.err != nil) {
			n := copy(p, l.out)
			l.out = l.out[n:]
			return n, nil
		}
		if l.err != nil {
			return 0, l.err
		}
		var n int
		var err error
		if len(l.pending) > 0 {
			n = copy(l.buf, l.pending)
			l.pending = l.pending[n:]
		} else {
			n, err = l.r.Read(l.buf)
		}
		l.out = l.scan(l.buf[:n], l.out)
		if err != nil {
			l.err = err
		}
	}
}

// scan follows the framing through b, appending what passes to out.
func (l *limitReader) scan(b []byte, out []byte) []byte {
	for i := 0; i < len(b); {
		if l.err != nil {
			return out
		}
		c := b[i]
		switch l.state {
		case stFrame:
			l.cmdBytes = 0
			if c == '*' {
				l.startLine(stArrayHeader)
				l.held = append(l.held[:0], c)
				i++
				continue
			}
			l.startLine(stInline)
			l.held = l.held[:0]
		case stBulkBody:
			n := min(int64(len(b)-i), l.left)
			start := len(out)
			out = append(out, b[i:i+int(n)]...)
			// Redis skips the two bytes after a payload unread; redcon
			// insists on CRLF there, so they are made CRLF.
			for k := max(0, l.left-2); k < n; k++ {
				out[start+int(k)] = "\r\n"[2-(l.left-k)]
			}
			i += int(n)
			l.left -= n
			if !l.count(n) {
				return out
			}
			if l.left == 0 {
				l.args--
				l.state = stBulkStart
				if l.args == 0 {
					l.state = stFrame
				}
			}
			continue
		case stBulkStart:
			if c != '$' {
				l.err = &protocolError{"ERR Protocol error: expected '$', got '" + string(c) + "'"}
				return out
			}
			l.startLine(stBulkHeader)
			out = append(out, c)
			i++
			if !l.count(1) {
				return out
			}
			continue
		}
		// A header or inline line: up to and including '\n'.
		j := i
		for j < len(b) && b[j] != '\n' {
			j++
		}
		done := j < len(b)
		if done {
			j++
		}
		chunk := b[i:j]
		i = j
		l.line += len(chunk)
		if !l.count(int64(len(chunk))) {
			return out
		}
		switch l.state {
		case stInline:
			if l.line > maxInlineSize && !done {
				l.err = &protocolError{"ERR Protocol error: too big inline request"}
				return out
			}
			l.held = append(l.held, chunk...)
			if done {
				l.state = stFrame
				line := bytes.TrimSuffix(bytes.TrimSuffix(l.held, []byte("\n")), []byte("\r"))
				args, ok := splitArgs(line)
				if !ok {
					l.err = &protocolError{"ERR Protocol error: unbalanced quotes in request"}
					return out
				}
				out = appendCommand(out, args)
			}
		case stArrayHeader:
			l.held = append(l.held, chunk...)
			l.digest(chunk)
			if l.line > maxHeaderLine {
				l.err = &protocolError{"ERR Protocol error: too big mbulk count string"}
				return out
			}
			if !done {
				continue
			}
			switch {
			case l.bad:
				l.err = &protocolError{"ERR Protocol error: invalid multibulk length"}
				return out
			case l.neg || l.num == 0:
				l.state = stFrame // ignored, as Redis does
			case l.num > maxMultibulkLen:
				l.err = &protocolError{"ERR Protocol error: invalid multibulk length"}
				return out
			default:
				out = append(out, l.held...)
				l.args = l.num
				l.state = stBulkStart
			}
		case stBulkHeader:
			l.digest(chunk)
			if l.line > maxHeaderLine {
				l.err = &protocolError{"ERR Protocol error: too big bulk count string"}
				return out
			}
			if !done {
				out = append(out, chunk...)
				continue
			}
			// A bad header is not passed on: redcon would refuse the
			// whole buffer, dropping the commands before it.
			if l.bad || l.neg || l.num > l.maxBulk {
				l.err = &protocolError{"ERR Protocol error: invalid bulk length"}
				return out
			}
			out = append(out, chunk...)
			l.left = l.num + 2
			l.state = stBulkBody
		}
	}
	return out
}

func (l *limitReader) startLine(state int) {
	l.state, l.line, l.num, l.neg, l.digits, l.bad = state, 0, 0, false, 0, false
}

// digest parses the decimal number of a header line ("*12\r\n", "$5\r\n")
// from its bytes after the type byte, as Redis's string2ll: no leading
// zeros, no "-0".
func (l *limitReader) digest(chunk []byte) {
	for _, c := range chunk {
		switch {
		case c == '-' && l.digits == 0 && !l.neg:
			l.neg = true
		case '0' <= c && c <= '9':
			if l.digits == 1 && l.num == 0 || c == '0' && l.digits == 0 && l.neg {
				l.bad = true
			}
			l.digits++
			if l.num > (1<<62)/10 {
				l.bad = true
				continue
			}
			l.num = l.num*10 + int64(c-'0')
		case c == '\r' || c == '\n':
		default:
			l.bad = true
		}
	}
	if l.digits == 0 && chunk[len(chunk)-1] == '\n' {
		l.bad = true
	}
}

// count adds n bytes to the current command and checks the query buffer
// limit.
func (l *limitReader) count(n int64) bool {
	l.cmdBytes += n
	if l.maxQuery > 0 && l.cmdBytes > l.maxQuery {
		l.err = &protocolError{} // Redis closes such a client without a reply
		return false
	}
	return true
}

// appendCommand appends args as a RESP multibulk.
func appendCommand(dst []byte, args [][]byte) []byte {
	if len(args) == 0 {
		return dst // a blank line: Redis ignores it
	}
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

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
