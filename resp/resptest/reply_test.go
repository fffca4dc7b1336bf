package resptest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadFrame(t *testing.T) {
	for _, tc := range []struct {
		name, in, frame string
	}{
		{"simple", "+OK\r\n", "+OK\r\n"},
		{"error", "-ERR bad thing\r\n", "-ERR bad thing\r\n"},
		{"integer", ":-42\r\n", ":-42\r\n"},
		{"bulk", "$5\r\nhello\r\n", "$5\r\nhello\r\n"},
		{"empty bulk", "$0\r\n\r\n", "$0\r\n\r\n"},
		{"null bulk", "$-1\r\n", "$-1\r\n"},
		{"null array", "*-1\r\n", "*-1\r\n"},
		{"empty array", "*0\r\n", "*0\r\n"},
		{"binary bulk", "$8\r\na\r\nb\x00\r\n\xff\r\n", "$8\r\na\r\nb\x00\r\n\xff\r\n"},
		{"bulk of CRLFs", "$4\r\n\r\n\r\n\r\n", "$4\r\n\r\n\r\n\r\n"},
		{"nested", "*2\r\n*2\r\n:1\r\n$-1\r\n*1\r\n*0\r\n", "*2\r\n*2\r\n:1\r\n$-1\r\n*1\r\n*0\r\n"},
		{"scan reply", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"first of two", "+A\r\n+B\r\n", "+A\r\n"},
		{"resp3 null", "_\r\n", "_\r\n"},
		{"double", ",3.14\r\n", ",3.14\r\n"},
		{"double inf", ",-inf\r\n", ",-inf\r\n"},
		{"bool", "#t\r\n", "#t\r\n"},
		{"big number", "(-3492890328409238509324850943850943825024385\r\n",
			"(-3492890328409238509324850943850943825024385\r\n"},
		{"bulk error", "!8\r\nERR a\r\nb\r\n", "!8\r\nERR a\r\nb\r\n"},
		{"verbatim", "=8\r\ntxt:a\r\nb\r\n", "=8\r\ntxt:a\r\nb\r\n"},
		{"map", "%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n:2\r\n", "%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n:2\r\n"},
		{"set", "~2\r\n+a\r\n+b\r\n:9\r\n", "~2\r\n+a\r\n+b\r\n"},
		{"push", ">2\r\n$7\r\nmessage\r\n:1\r\n", ">2\r\n$7\r\nmessage\r\n:1\r\n"},
		{"attribute and its reply", "|1\r\n+ttl\r\n:3\r\n*1\r\n:7\r\n+next\r\n", "|1\r\n+ttl\r\n:3\r\n*1\r\n:7\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.in))
			got, err := ReadFrame(r)
			if err != nil {
				t.Fatalf("ReadFrame(%q): %v", tc.in, err)
			}
			if string(got) != tc.frame {
				t.Fatalf("ReadFrame(%q) = %q, want %q", tc.in, got, tc.frame)
			}
			rest, _ := io.ReadAll(r)
			if string(rest) != tc.in[len(tc.frame):] {
				t.Fatalf("left %q, want %q", rest, tc.in[len(tc.frame):])
			}
		})
	}
}

func TestReadFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     error
	}{
		{"nothing", "", io.EOF},
		{"cut line", "+OK", io.ErrUnexpectedEOF},
		{"cut bulk", "$5\r\nhel", io.ErrUnexpectedEOF},
		{"cut bulk CRLF", "$5\r\nhello\r", io.ErrUnexpectedEOF},
		{"cut array", "*3\r\n:1\r\n:2\r\n", io.ErrUnexpectedEOF},
		{"cut nested", "*1\r\n*2\r\n:1\r\n", io.ErrUnexpectedEOF},
		{"cut after attribute", "|1\r\n+a\r\n+b\r\n", io.ErrUnexpectedEOF},
		{"LF only", "+OK\n", ErrProtocol},
		{"CR in line", "+O\rK\r\n", ErrProtocol},
		{"empty line", "\r\n", ErrProtocol},
		{"unknown type", "?3\r\n", ErrProtocol},
		{"inline text", "PING\r\n", ErrProtocol},
		{"bulk length word", "$x\r\n", ErrProtocol},
		{"bulk length plus", "$+1\r\na\r\n", ErrProtocol},
		{"bulk -2", "$-2\r\n", ErrProtocol},
		{"bulk too long", "$999999999999\r\n", ErrProtocol},
		{"bulk longer than said", "$3\r\nhello\r\n", ErrProtocol},
		{"map -1", "%-1\r\n", ErrProtocol},
		{"set -1", "~-1\r\n", ErrProtocol},
		{"integer word", ":1a\r\n", ErrProtocol},
		{"integer empty", ":\r\n", ErrProtocol},
		{"integer overflow", ":9223372036854775808\r\n", ErrProtocol},
		{"bool", "#x\r\n", ErrProtocol},
		{"double", ",1.2.3\r\n", ErrProtocol},
		{"big number", "(12a\r\n", ErrProtocol},
		{"null with text", "_x\r\n", ErrProtocol},
		{"verbatim without fmt", "=3\r\nabc\r\n", ErrProtocol},
		{"bad element", "*2\r\n:1\r\n:x\r\n", ErrProtocol},
		{"two attributes", "|0\r\n|0\r\n+a\r\n", ErrProtocol},
		{"too deep", strings.Repeat("*1\r\n", maxDepth+2) + ":1\r\n", ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFrame(bufio.NewReader(strings.NewReader(tc.in)))
			if !errors.Is(err, tc.want) {
				t.Fatalf("ReadFrame(%q) = %q, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

// Lines longer than the reader's buffer are still read whole.
func TestReadFrameLongLine(t *testing.T) {
	line := "+" + strings.Repeat("x", 100) + "\r\n"
	got, err := ReadFrame(bufio.NewReaderSize(strings.NewReader(line+":1\r\n"), 16))
	if err != nil || string(got) != line {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestParse(t *testing.T) {
	v, err := Parse([]byte("*3\r\n$-1\r\n%1\r\n+k\r\n$2\r\nv\n\r\n*0\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != '*' || len(v.Elems) != 3 || !v.Elems[0].Null || v.Elems[0].Kind != '$' {
		t.Fatalf("got %+v", v)
	}
	m := v.Elems[1]
	if m.Kind != '%' || len(m.Elems) != 2 || string(m.Elems[1].Str) != "v\n" || string(m.Raw) != "%1\r\n+k\r\n$2\r\nv\n\r\n" {
		t.Fatalf("map: %+v", m)
	}
	if !v.Elems[2].IsAggregate() || v.Elems[2].Null {
		t.Fatalf("empty array: %+v", v.Elems[2])
	}
	a, err := Parse([]byte("|1\r\n+a\r\n+b\r\n:5\r\n"))
	if err != nil || a.Kind != ':' || string(a.Str) != "5" || a.Attr == nil || len(a.Attr.Elems) != 2 {
		t.Fatalf("attribute: %+v, %v", a, err)
	}
	for _, bad := range []string{"", "+a\r\n+b\r\n", "*2\r\n:1\r\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"+OK\r\n", "OK"},
		{"-ERR no\r\n", "(error) ERR no"},
		{":7\r\n", "(integer) 7"},
		{"$-1\r\n", "(nil)"},
		{"*-1\r\n", "(nil array)"},
		{"_\r\n", "(nil)"},
		{"$0\r\n\r\n", `""`},
		{"$8\r\na\"\\\r\n\t\x01\xff\r\n", `"a\"\\\r\n\t\x01\xff"`},
		{"*0\r\n", "(empty array)"},
		{",1.5\r\n", "(double) 1.5"},
		{"#f\r\n", "(false)"},
		{"(12\r\n", "(big number) 12"},
		{"=7\r\ntxt:abc\r\n", `(verbatim txt) "abc"`},
		{"!5\r\nERR x\r\n", `(bulk error) "ERR x"`},
		{"*2\r\n$1\r\na\r\n:2\r\n", "1) \"a\"\n2) (integer) 2"},
		{"*2\r\n*2\r\n:1\r\n:2\r\n$1\r\nc\r\n", "1) 1) (integer) 1\n   2) (integer) 2\n2) \"c\""},
		{"*10\r\n" + strings.Repeat(":0\r\n", 9) + "*2\r\n:1\r\n:2\r\n",
			" 1) (integer) 0\n 2) (integer) 0\n 3) (integer) 0\n 4) (integer) 0\n 5) (integer) 0\n" +
				" 6) (integer) 0\n 7) (integer) 0\n 8) (integer) 0\n 9) (integer) 0\n10) 1) (integer) 1\n    2) (integer) 2"},
		{"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n:2\r\n", "1# a => (integer) 1\n2# b => 1) (integer) 2"},
		{"~1\r\n+x\r\n", "1~ x"},
		{"|1\r\n+a\r\n+b\r\n:1\r\n", "(attribute) 1# a => b\n(integer) 1"},
		{"+OK", `(unparsable "+OK": unexpected EOF)`},
	} {
		if got := Format([]byte(tc.in)); got != tc.want {
			t.Errorf("Format(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := AppendCommand([]byte("x"), "SET", "k", "a\r\nb", "")
	want := "x*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n$0\r\n\r\n"
	if !bytes.Equal(got, []byte(want)) {
		t.Fatalf("got %q, want %q", got, want)
	}
	// A command is itself a frame: what a server reads.
	if frame, err := ReadFrame(bufio.NewReader(bytes.NewReader(got[1:]))); err != nil || string(frame) != want[1:] {
		t.Fatalf("reading back: %q, %v", frame, err)
	}
}
