package resp

import (
	"bytes"
	"io"
)

// Limits of the protocol reader, as redis-server has them.
const (
	maxMultibulkLen = 1024 * 1024 // arguments of one command
	maxInlineSize   = 64 * 1024   // bytes of one inline command
	maxHeaderLine   = 64 * 1024   // bytes of a "*n" or "$n" line
	readBufSize     = 4 << 10     // a client's read buffer to begin with, and after a big command
)

// protocolError is a request the server refuses. msg, when set, is sent to
// the client before the connection is closed.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// reader parses the commands a client sends, as redis-server does: RESP
// multibulks and inline commands (split as sdssplitargs splits them), with
// Redis's limits and error texts. A multibulk's arguments are slices of the
// read buffer, not copies: they are valid until the next call to next or
// buffered, and whoever keeps one (MULTI's queue) copies it.
//
// Parsing is resumable: a command that arrives in many reads is followed
// from where the last read ended, never parsed again from its start, so a
// command of a million arguments costs linear time. A refused frame ends
// the stream: the commands before it are returned first, then the error.
type reader struct {
	r        io.Reader
	maxBulk  int64
	maxQuery int64

	buf        []byte // buf[start:end] is read and not yet returned
	start, end int
	nread      uint64 // bytes read since takeRead

	// A multibulk being parsed: it begins at start; pos is where parsing
	// goes on; nargs arguments are declared, and marks holds the start
	// and end offsets (from start) of those parsed so far.
	pos   int
	nargs int
	marks []int
	args  [][]byte
	err   error // the refused frame, returned once buf[start:] is used up

	// last is the extent of the command returned last (test scribbling).
	lastFrom, lastTo int
}

// scribble makes the reader overwrite a returned command's bytes as soon
// as the next one is asked for, so tests catch anyone who keeps arguments
// without copying them.
var scribble = false

func newReader(r io.Reader, maxBulk, maxQuery int64) *reader {
	return &reader{r: r, maxBulk: maxBulk, maxQuery: maxQuery, buf: make([]byte, readBufSize)}
}

// next returns the next command's arguments, reading from the connection
// as needed. Empty multibulks and blank lines are skipped, as Redis skips
// them.
func (rd *reader) next() ([][]byte, error) {
	for {
		args, ok, err := rd.buffered()
		if ok || err != nil {
			return args, err
		}
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

// buffered returns the next command if the buffer holds all of it; ok is
// false if it does not (nothing is read).
func (rd *reader) buffered() (args [][]byte, ok bool, err error) {
	if scribble && rd.lastTo > rd.lastFrom {
		for i := rd.lastFrom; i < rd.lastTo; i++ {
			rd.buf[i] = '#'
		}
		rd.lastFrom, rd.lastTo = 0, 0
	}
	for rd.start < rd.end {
		from := rd.start
		args, ok, skip := rd.parse()
		if ok {
			rd.lastFrom, rd.lastTo = from, rd.start
			return args, true, nil
		}
		if !skip {
			break
		}
	}
	return nil, false, rd.err // incomplete (nil), or refused, or the read's end
}

// peekKeys fills keys with the first arguments of the commands buffered
// after the command returned last, in order, while they are whole RESP
// multibulks of two arguments or more whose name args calls keyed, and
// returns how many it found. members[i] is the argument of command i at the
// member position args gives for its name, or nil. It consumes nothing,
// and the arguments point into the buffer: valid until the next call that
// returns a command.
func (rd *reader) peekKeys(keys, members [][]byte, args func(name []byte) (keyed bool, member int)) int {
	b := rd.buf[rd.start:rd.end]
	n := 0
	for n < len(keys) {
		nargs, rest, ok := peekHeader(b, '*')
		if !ok || nargs < 2 {
			return n
		}
		name, rest, ok := peekBulk(rest)
		if !ok {
			return n
		}
		keyed, m := args(name)
		if !keyed {
			return n
		}
		key, rest, ok := peekBulk(rest)
		var member []byte
		for i := 2; ok && i < nargs; i++ {
			var arg []byte
			arg, rest, ok = peekBulk(rest)
			if i == m {
				member = arg
			}
		}
		if !ok {
			return n
		}
		keys[n], members[n] = key, member
		n++
		b = rest
	}
	return n
}

// peekHeader parses the "*<n>\r\n" or "$<n>\r\n" (as kind says) that b
// starts with, by the parser's own rules (parseHeader); a negative count
// is not a command's, and none is returned.
func peekHeader(b []byte, kind byte) (n int, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != kind {
		return 0, nil, false
	}
	// Each path refuses a length beyond what b holds in its own type: the
	// general one before its int64 becomes an int.
	if v, next, ok := shortHeader(b, 1); ok {
		if v > len(b) {
			return 0, nil, false
		}
		return v, b[next:], true
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return 0, nil, false
	}
	v, neg, bad := parseHeader(b[1 : nl+1])
	if neg || bad || v > int64(len(b)) {
		return 0, nil, false
	}
	return int(v), b[nl+1:], true
}

// peekBulk parses the bulk string b starts with.
func peekBulk(b []byte) (arg, rest []byte, ok bool) {
	n, rest, ok := peekHeader(b, '$')
	if !ok || len(rest) < n+2 || rest[n] != '\r' || rest[n+1] != '\n' {
		return nil, nil, false
	}
	return rest[:n:n], rest[n+2:], true
}

// takeRead returns the bytes read from the connection since its last call.
func (rd *reader) takeRead() uint64 {
	n := rd.nread
	rd.nread = 0
	return n
}

// unread appends bytes that were read from the connection by someone else
// (a blocked client's watcher): they follow everything buffered. The
// arguments being run stay valid: a reallocation leaves them in the old
// array, and bytes are only added past end.
func (rd *reader) unread(b []byte) {
	rd.buf = append(rd.buf[:rd.end], b...)
	rd.buf = rd.buf[:cap(rd.buf)]
	rd.end += len(b)
	rd.nread += uint64(len(b))
}

// fill reads more of the stream into the buffer: moving the unfinished
// command to the front, or growing the buffer when it is all one command.
func (rd *reader) fill() error {
	if rd.err != nil {
		return rd.err
	}
	// The unfinished command moves to the front of: a small buffer once a
	// big command is done (given back before waiting), a doubled one when
	// one command fills it, or the same one when a quarter or less is free.
	var dst []byte
	switch {
	case len(rd.buf) > 16*readBufSize && rd.end-rd.start < readBufSize/2:
		dst = make([]byte, readBufSize)
	case rd.start == 0 && rd.end == len(rd.buf):
		dst = make([]byte, 2*len(rd.buf))
	case rd.start > 0 && (rd.start == rd.end || len(rd.buf)-rd.end < len(rd.buf)/4):
		dst = rd.buf
	}
	if dst != nil {
		n := copy(dst, rd.buf[rd.start:rd.end])
		rd.buf = dst
		rd.pos -= rd.start
		rd.start, rd.end = 0, n
	}
	n, err := rd.r.Read(rd.buf[rd.end:])
	rd.end += n
	rd.nread += uint64(n)
	if err != nil && n > 0 {
		rd.err = err // the commands read with the error come first
		return nil
	}
	return err
}

// parse parses the command at start. It returns the command (ok), or skip
// if it consumed something that is no command (an empty multibulk, a blank
// line), or neither if the command is incomplete or refused (rd.err).
func (rd *reader) parse() (args [][]byte, ok, skip bool) {
	if rd.buf[rd.start] != '*' {
		return rd.parseInline()
	}
	b := rd.buf[:rd.end]
	if rd.pos == rd.start {
		n, neg, bad, next, whole := rd.header(rd.start, "ERR Protocol error: too big mbulk count string")
		if !whole {
			return rd.overLimit()
		}
		switch {
		case bad || n > maxMultibulkLen:
			rd.refuse("ERR Protocol error: invalid multibulk length")
			return nil, false, false
		case neg || n == 0:
			rd.start, rd.pos = next, next // ignored, as Redis does
			return nil, false, true
		}
		rd.nargs = int(n)
		rd.marks = rd.marks[:0]
		rd.pos = next
	}
	for len(rd.marks) < 2*rd.nargs {
		if rd.pos == rd.end {
			return rd.overLimit()
		}
		if c := b[rd.pos]; c != '$' {
			rd.refuse("ERR Protocol error: expected '$', got '" + string(c) + "'")
			return nil, false, false
		}
		n, neg, bad, next, whole := rd.header(rd.pos, "ERR Protocol error: too big bulk count string")
		if !whole {
			return rd.overLimit()
		}
		if bad || neg || n > rd.maxBulk {
			rd.refuse("ERR Protocol error: invalid bulk length")
			return nil, false, false
		}
		// The payload and the two bytes after it, which Redis skips
		// unread.
		if int64(rd.end-next) < n+2 {
			return rd.overLimit()
		}
		from := next - rd.start
		rd.marks = append(rd.marks, from, from+int(n))
		rd.pos = next + int(n) + 2
	}
	if rd.maxQuery > 0 && int64(rd.pos-rd.start) > rd.maxQuery {
		rd.err = &protocolError{} // Redis closes such a client without a reply
		return nil, false, false
	}
	args = rd.args[:0]
	for i := 0; i < len(rd.marks); i += 2 {
		args = append(args, b[rd.start+rd.marks[i]:rd.start+rd.marks[i+1]:rd.start+rd.marks[i+1]])
	}
	rd.args = args
	rd.start = rd.pos
	return args, true, false
}

// header finds the header line ("*n" or "$n") whose type byte is at i and
// parses its number; next is the offset after the line. whole is false if
// the line has not all arrived; if it is already longer than Redis allows,
// the stream is refused with tooBig.
func (rd *reader) header(i int, tooBig string) (n int64, neg, bad bool, next int, whole bool) {
	if v, next, ok := shortHeader(rd.buf[:rd.end], i+1); ok {
		return int64(v), false, false, next, true
	}
	nl := bytes.IndexByte(rd.buf[i+1:rd.end], '\n')
	if nl < 0 {
		if rd.end-i > maxHeaderLine {
			rd.refuse(tooBig)
		}
		return 0, false, false, 0, false
	}
	nl += i + 1
	n, neg, bad = parseHeader(rd.buf[i+1 : nl+1])
	return n, neg, bad, nl + 1, true
}

// parseInline parses an inline command: one line, split as Redis splits it.
func (rd *reader) parseInline() (args [][]byte, ok, skip bool) {
	b := rd.buf[rd.start:rd.end]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) > maxInlineSize {
			rd.refuse("ERR Protocol error: too big inline request")
			return nil, false, false
		}
		return rd.overLimit()
	}
	line := bytes.TrimSuffix(b[:nl], []byte("\r"))
	if rd.maxQuery > 0 && int64(nl+1) > rd.maxQuery {
		rd.err = &protocolError{}
		return nil, false, false
	}
	args, balanced := splitArgs(line)
	if !balanced {
		rd.refuse("ERR Protocol error: unbalanced quotes in request")
		return nil, false, false
	}
	rd.start += nl + 1
	rd.pos = rd.start
	return args, len(args) > 0, len(args) == 0
}

// overLimit reports an incomplete command, refusing it if its bytes so far
// exceed the query buffer limit.
func (rd *reader) overLimit() (args [][]byte, ok, skip bool) {
	if rd.maxQuery > 0 && int64(rd.end-rd.start) > rd.maxQuery {
		rd.err = &protocolError{}
	}
	return nil, false, false
}

// refuse ends the stream with a protocol error: the commands before it run,
// then msg is sent and the connection closed.
func (rd *reader) refuse(msg string) {
	rd.err = &protocolError{msg}
	rd.end = rd.start // nothing from the refused frame on is used
}

// shortHeader parses the header number that starts at b[i] when it has the
// usual form: "0", or 1 to 18 digits without a leading zero, then "\r\n".
// next is the offset after the line. Anything else (a sign, a longer
// number, stray bytes, a line not all read yet) is left to the general
// path (header, parseHeader), which accepts and refuses as Redis does: on
// the lines this accepts, the two agree. It reads each byte once, where the
// general path finds the line's end first and then parses it.
func shortHeader(b []byte, i int) (n, next int, ok bool) {
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	c := b[i]
	if b[i+1] == '\r' && b[i+2] == '\n' && '0' <= c && c <= '9' {
		return int(c - '0'), i + 3, true // one digit: most headers
	}
	if c < '1' || c > '9' {
		return 0, 0, false
	}
	n = int(c - '0')
	j := i + 1
	for j < len(b) && j-i < 18 && '0' <= b[j] && b[j] <= '9' {
		n = n*10 + int(b[j]-'0')
		j++
	}
	if j+1 >= len(b) || b[j] != '\r' || b[j+1] != '\n' {
		return 0, 0, false
	}
	return n, j + 2, true
}

// parseHeader parses the number of a header line ("*12\r\n", "$5\r\n")
// from its bytes after the type byte, through '\n', as Redis's string2ll
// reads it: no leading zeros, no "-0", nothing but an optional '-' and
// digits before the line end.
func parseHeader(line []byte) (n int64, neg, bad bool) {
	digits := 0
	for _, c := range line {
		switch {
		case c == '-' && digits == 0 && !neg:
			neg = true
		case '0' <= c && c <= '9':
			if digits == 1 && n == 0 || c == '0' && digits == 0 && neg {
				bad = true
			}
			digits++
			if n > (1<<62)/10 {
				bad = true
				continue
			}
			n = n*10 + int64(c-'0')
		case c == '\r' || c == '\n':
		default:
			bad = true
		}
	}
	return n, neg, bad || digits == 0
}

// cloneArgs copies args into one allocation, for keeping past the command.
func cloneArgs(args [][]byte) [][]byte {
	size := 0
	for _, a := range args {
		size += len(a)
	}
	buf := make([]byte, 0, size)
	out := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return out
}
