package resptest

// Reply frames, RESP2 and RESP3, as this package reads them:
//
//	+<text>\r\n                  simple string     -<text>\r\n     error
//	:<int64>\r\n                 integer           _\r\n           null (RESP3)
//	,<double>\r\n                double            #t\r\n, #f\r\n  boolean
//	(<digits>\r\n                big number
//	$<n>\r\n<n bytes>\r\n        bulk string; $-1\r\n is RESP2's null bulk
//	!<n>\r\n<n bytes>\r\n        bulk error
//	=<n>\r\n<fmt>:<text>\r\n     verbatim string (n counts "fmt:" too)
//	*<n>\r\n<n frames>           array; *-1\r\n is RESP2's null array
//	~<n>\r\n<n frames>           set
//	><n>\r\n<n frames>           push
//	%<n>\r\n<2n frames>          map: key, value, key, value...
//	|<n>\r\n<2n frames><frame>   attribute, then the reply it annotates
//
// Lines may hold neither \r nor \n; bulk payloads may hold anything. The
// reader is strict: a server that sends anything else has a bug the
// harness should report, not paper over. RESP3's streamed strings and
// aggregates ($?, *?) are not read: Redis never sends them.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	// maxBulk is Redis's default proto-max-bulk-len.
	maxBulk = 512 << 20
	// maxDepth bounds nesting, so garbage cannot recurse without end.
	maxDepth = 256
)

// ErrProtocol is wrapped by every error about a malformed frame.
var ErrProtocol = errors.New("resptest: protocol error")

// Value is one parsed reply frame.
type Value struct {
	// Kind is the frame's type byte: one of + - : $ * _ , # ( ! = ~ > %.
	Kind byte
	// Str is the text of a line or bulk frame: without the type byte and
	// CRLF, and for verbatim strings with their "fmt:" prefix.
	Str []byte
	// Null is set for $-1, *-1 and _.
	Null bool
	// Elems are an aggregate's elements; a map's keys and values alternate.
	Elems []Value
	// Attr is the attribute frame (Kind '|') that preceded this reply.
	Attr *Value
	// Raw is the frame's bytes, attribute included.
	Raw []byte
}

// IsAggregate says whether v holds elements: an array, set, push or map.
func (v Value) IsAggregate() bool {
	switch v.Kind {
	case '*', '~', '>', '%':
		return !v.Null
	}
	return false
}

// ReadFrame reads one complete reply frame from r and returns its bytes. A
// frame cut short returns io.ErrUnexpectedEOF; nothing read at all, io.EOF.
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	v, err := readValue(r, 0)
	if err != nil {
		return nil, err
	}
	return v.Raw, nil
}

// Parse parses raw, which must be exactly one frame.
func Parse(raw []byte) (Value, error) {
	r := newBytesReader(raw)
	v, err := readValue(r, 0)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return Value{}, err
	}
	if r.Buffered() > 0 {
		return Value{}, fmt.Errorf("%w: %d bytes after the frame", ErrProtocol, r.Buffered())
	}
	return v, nil
}

func newBytesReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// readValue reads one frame. io.EOF means nothing at all was read.
func readValue(r *bufio.Reader, depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, protoErr("nested deeper than %d", maxDepth)
	}
	line, err := readLine(r)
	if err != nil {
		return Value{}, err
	}
	v := Value{Kind: line[0], Raw: line}
	text := line[1 : len(line)-2]
	switch v.Kind {
	case '+', '-':
		v.Str = text
	case ':':
		if _, ok := parseInt(text); !ok {
			return Value{}, protoErr("integer %q", text)
		}
		v.Str = text
	case '(':
		if !isBigNumber(text) {
			return Value{}, protoErr("big number %q", text)
		}
		v.Str = text
	case ',':
		if _, err := strconv.ParseFloat(string(text), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return Value{}, protoErr("double %q", text)
		}
		v.Str = text
	case '#':
		if string(text) != "t" && string(text) != "f" {
			return Value{}, protoErr("boolean %q", text)
		}
		v.Str = text
	case '_':
		if len(text) != 0 {
			return Value{}, protoErr("null with text %q", text)
		}
		v.Null = true
	case '$', '!', '=':
		return readBulk(r, v, text)
	case '*', '~', '>', '%', '|':
		return readAggregate(r, v, text, depth)
	default:
		return Value{}, protoErr("unknown frame type %q", v.Kind)
	}
	return v, nil
}

// readLine reads through the next CRLF. The line is at least "X\r\n".
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, protoErr("line %q not ended by CRLF", line)
	}
	if bytes.IndexByte(line[:len(line)-2], '\r') >= 0 {
		return nil, protoErr("line %q holds a CR", line)
	}
	return line, nil
}

func readBulk(r *bufio.Reader, v Value, text []byte) (Value, error) {
	n, ok := parseInt(text)
	switch {
	case !ok:
		return Value{}, protoErr("%c length %q", v.Kind, text)
	case n == -1 && v.Kind == '$':
		v.Null = true
		return v, nil
	case n < 0 || n > maxBulk:
		return Value{}, protoErr("%c length %d", v.Kind, n)
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		return Value{}, unexpected(err)
	}
	if body[n] != '\r' || body[n+1] != '\n' {
		return Value{}, protoErr("%c payload of %d bytes not followed by CRLF", v.Kind, n)
	}
	if v.Kind == '=' && (n < 4 || body[3] != ':') {
		return Value{}, protoErr("verbatim string %q has no fmt: prefix", body[:n])
	}
	v.Str = body[:n]
	v.Raw = append(v.Raw, body...)
	return v, nil
}

func readAggregate(r *bufio.Reader, v Value, text []byte, depth int) (Value, error) {
	n, ok := parseInt(text)
	switch {
	case !ok:
		return Value{}, protoErr("%c count %q", v.Kind, text)
	case n == -1 && v.Kind == '*':
		v.Null = true
		return v, nil
	case n < 0:
		return Value{}, protoErr("%c count %d", v.Kind, n)
	}
	if v.Kind == '%' || v.Kind == '|' {
		n *= 2
	}
	for range n {
		e, err := readValue(r, depth+1)
		if err != nil {
			return Value{}, unexpected(err)
		}
		v.Elems = append(v.Elems, e)
		v.Raw = append(v.Raw, e.Raw...)
	}
	if v.Kind != '|' {
		return v, nil
	}
	// An attribute is no reply by itself: the reply it annotates follows.
	reply, err := readValue(r, depth+1)
	if err != nil {
		return Value{}, unexpected(err)
	}
	if reply.Attr != nil {
		return Value{}, protoErr("two attributes before one reply")
	}
	attr := v
	reply.Attr = &attr
	reply.Raw = append(attr.Raw[:len(attr.Raw):len(attr.Raw)], reply.Raw...)
	return reply, nil
}

// unexpected turns io.EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseInt parses a decimal int64 as Redis prints one: an optional minus
// sign and digits, no plus sign, no spaces.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || b[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

func isBigNumber(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Format renders a reply as redis-cli prints it on a terminal, for failure
// messages: "OK", "(integer) 1", "\"text\"", "(nil)", numbered and
// indented array elements. Where redis-cli prints two kinds alike it adds
// the kind: "(nil array)", "(verbatim txt)", "(bulk error)". Bytes that do
// not parse are printed quoted, with the reason.
func Format(raw []byte) string {
	v, err := Parse(raw)
	if err != nil {
		return fmt.Sprintf("(unparsable %q: %v)", raw, err)
	}
	var b strings.Builder
	formatValue(&b, v, "")
	return strings.TrimSuffix(b.String(), "\n")
}

// formatValue follows redis-cli's cliFormatReplyTTY: an element's index is
// printed by its parent, and lines after an aggregate's first are indented
// by prefix.
func formatValue(b *strings.Builder, v Value, prefix string) {
	if v.Attr != nil {
		b.WriteString("(attribute) ")
		formatElems(b, *v.Attr, prefix)
		b.WriteString(prefix)
	}
	switch v.Kind {
	case '+':
		b.Write(v.Str)
	case '-':
		fmt.Fprintf(b, "(error) %s", v.Str)
	case '!':
		fmt.Fprintf(b, "(bulk error) %s", Quote(v.Str))
	case ':':
		fmt.Fprintf(b, "(integer) %s", v.Str)
	case ',':
		fmt.Fprintf(b, "(double) %s", v.Str)
	case '(':
		fmt.Fprintf(b, "(big number) %s", v.Str)
	case '#':
		if v.Str[0] == 't' {
			b.WriteString("(true)")
		} else {
			b.WriteString("(false)")
		}
	case '_':
		b.WriteString("(nil)")
	case '$':
		if v.Null {
			b.WriteString("(nil)")
		} else {
			b.WriteString(Quote(v.Str))
		}
	case '=':
		fmt.Fprintf(b, "(verbatim %s) %s", v.Str[:3], Quote(v.Str[4:]))
	default:
		formatElems(b, v, prefix)
		return
	}
	b.WriteByte('\n')
}

func formatElems(b *strings.Builder, v Value, prefix string) {
	if v.Null {
		b.WriteString("(nil array)\n")
		return
	}
	pairs := v.Kind == '%' || v.Kind == '|'
	n := len(v.Elems)
	if pairs {
		n /= 2
	}
	if n == 0 {
		b.WriteString(map[byte]string{'*': "(empty array)", '~': "(empty set)", '>': "(empty push)",
			'%': "(empty hash)", '|': "(empty attribute)"}[v.Kind])
		b.WriteByte('\n')
		return
	}
	mark := map[byte]string{'*': ") ", '>': ") ", '~': "~ ", '%': "# ", '|': "# "}[v.Kind]
	width := len(strconv.Itoa(n))
	inner := prefix + strings.Repeat(" ", width+2)
	for i := range n {
		if i > 0 {
			b.WriteString(prefix)
		}
		fmt.Fprintf(b, "%*d%s", width, i+1, mark)
		if !pairs {
			formatValue(b, v.Elems[i], inner)
			continue
		}
		var key strings.Builder
		formatValue(&key, v.Elems[2*i], inner)
		b.WriteString(strings.TrimSuffix(key.String(), "\n"))
		b.WriteString(" => ")
		formatValue(b, v.Elems[2*i+1], inner)
	}
}

// Quote quotes s as redis-cli does (sdscatrepr): in double quotes, with
// \\ \" \n \r \t \a \b escaped and other unprintable bytes as \xHH.
func Quote(s []byte) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c <= 0x7e {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
