package resp

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stratakv/strata/resp/resptest"
)

// TestSplitArgs: inline commands split as redis-server 7.0 splits them
// (each case checked against it).
func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // nil: unbalanced quotes
	}{
		{`set k a"b c"`, []string{"set", "k", "ab c"}},
		{`set k "a"b`, nil},
		{"set\tk2\t\"\\x41\\x4g\\q\"", []string{"set", "k2", "Ax4gq"}},
		{`set k3 'a\nb\'c'`, []string{"set", "k3", `a\nb'c`}},
		{`echo ""`, []string{"echo", ""}},
		{`  ping  `, []string{"ping"}},
		{``, []string{}},
		{`get "abc`, nil},
		{`get 'abc`, nil},
		{"get a\x00b", []string{"get", "a"}},
		{`"\n\r\t\b\a\\\""`, []string{"\n\r\t\b\a\\\""}},
	} {
		args, ok := splitArgs([]byte(tc.in))
		if tc.want == nil {
			if ok {
				t.Errorf("%q: want unbalanced, got %q", tc.in, args)
			}
			continue
		}
		got := make([]string, len(args))
		for i, a := range args {
			got[i] = string(a)
		}
		if !ok || strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("%q: got %q (%v), want %q", tc.in, got, ok, tc.want)
		}
	}
}

// readAll returns every command rd gives (copied) and the error that ended
// the stream.
func readAll(rd *reader) ([][]string, error) {
	var got [][]string
	for {
		args, err := rd.next()
		if err != nil {
			return got, err
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		got = append(got, cmd)
	}
}

// TestReaderOneByte: framing is followed across any split of the stream:
// read a byte at a time, the same commands come out; empty multibulks and
// blank lines are skipped; inline commands are split as Redis splits them.
func TestReaderOneByte(t *testing.T) {
	in := "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*0\r\n*-1\r\nset b \"x y\"\r\n\r\n*1\r\n$4\r\nPING\r\n"
	want := "[[GET a] [set b x y] [PING]]"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
		got, err := readAll(newReader(r, 1<<20, 1<<20))
		if err != io.EOF || fmt.Sprint(got) != want {
			t.Fatalf("got %v (%v), want %v", got, err, want)
		}
	}
}

// TestReaderRefusesBeforeBuffering: a declared bulk over the limit is
// refused from its header, before any of it is buffered; the commands
// before it come out first.
func TestReaderRefusesBeforeBuffering(t *testing.T) {
	in := "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$99999999\r\n" + strings.Repeat("x", 1<<16)
	rd := newReader(strings.NewReader(in), 1000, 1<<30)
	got, err := readAll(rd)
	if pe, ok := err.(*protocolError); !ok || pe.msg != "ERR Protocol error: invalid bulk length" {
		t.Fatalf("err %v", err)
	}
	if fmt.Sprint(got) != "[[PING]]" {
		t.Fatalf("got %v before the error", got)
	}
	if cap(rd.buf) > readBufSize {
		t.Fatalf("buffered %d bytes of a refused command", cap(rd.buf))
	}
}

// TestReaderBigCommands: a command far larger than the buffer, of many
// arguments or one big one, arrives in small reads and comes out whole;
// the buffer shrinks back once it is done.
func TestReaderBigCommands(t *testing.T) {
	many := make([][]byte, 200_000)
	for i := range many {
		many[i] = []byte(strconv.Itoa(i))
	}
	big := [][]byte{[]byte("SET"), []byte("k"), bytes.Repeat([]byte("v"), 3<<20)}
	var in []byte
	in = multibulk(in, many)
	in = multibulk(in, big)
	in = multibulk(in, [][]byte{[]byte("PING")})
	rd := newReader(&chunkReader{b: in, n: 1500}, 512<<20, 1<<30)
	for _, want := range [][][]byte{many, big} {
		args, err := rd.next()
		if err != nil {
			t.Fatal(err)
		}
		if len(args) != len(want) {
			t.Fatalf("%d arguments, want %d", len(args), len(want))
		}
		for i := range want {
			if !bytes.Equal(args[i], want[i]) {
				t.Fatalf("argument %d differs", i)
			}
		}
	}
	if args, err := rd.next(); err != nil || string(args[0]) != "PING" {
		t.Fatalf("after the big commands: %q, %v", args, err)
	}
	if _, err := rd.next(); err != io.EOF {
		t.Fatalf("at the end: %v", err)
	}
	if cap(rd.buf) > readBufSize {
		t.Fatalf("kept a %d-byte buffer after the big command", cap(rd.buf))
	}
}

// TestReaderUnread: bytes a blocked client's watcher read come after what
// was buffered, in order, however often the client blocked.
func TestReaderUnread(t *testing.T) {
	rd := newReader(strings.NewReader("PING c\r\n"), 1<<20, 1<<20)
	rd.buf = append(rd.buf[:0], "PING a\r\nPI"...)
	rd.end = len(rd.buf)
	rd.buf = rd.buf[:cap(rd.buf)]
	first, err := rd.next()
	if err != nil || string(first[1]) != "a" {
		t.Fatalf("%q %v", first, err)
	}
	rd.unread([]byte("NG "))
	rd.unread([]byte("b\r\n"))
	got, err := readAll(rd)
	if err != io.EOF || fmt.Sprint(got) != "[[PING b] [PING c]]" {
		t.Fatalf("got %v, %v", got, err)
	}
}

// multibulk appends args as the RESP multibulk a client sends.
func multibulk(dst []byte, args [][]byte) []byte {
	strs := make([]string, len(args))
	for i, a := range args {
		strs[i] = string(a)
	}
	return resptest.AppendCommand(dst, strs...)
}

// TestReaderPeekKeys: the first arguments of the keyed commands buffered
// behind the command returned last, in any letter case, up to the first
// frame that is not a whole RESP command the filter accepts, without
// consuming anything; and for commands on one member of a collection, that
// member ("-": none).
func TestReaderPeekKeys(t *testing.T) {
	cmd := func(args ...string) string { return string(resptest.AppendCommand(nil, args...)) }
	memberCmds := cmd("HSET", "h", "f", "v") + cmd("sadd", "s", "m", "n") + cmd("ZADD", "z", "1", "zm") +
		cmd("ZINCRBY", "z", "2", "zi") + cmd("GET", "a") + cmd("HGET", "h", "g") + cmd("HSET", "h")
	for _, tc := range []struct {
		name, buffered string
		want           []string
	}{
		{"keyed commands", cmd("GET", "a") + cmd("set", "bb", "1") + cmd("Incr", "") + cmd("HSET", "h", "f", "v"),
			[]string{"a", "bb", "", "h"}},
		{"stops at an unkeyed command", cmd("GET", "a") + cmd("PING", "x") + cmd("GET", "c"), []string{"a"}},
		{"stops at a command without arguments", cmd("GET", "a") + cmd("MULTI") + cmd("GET", "c"), []string{"a"}},
		{"stops at an unknown command", cmd("GET", "a") + cmd("NOSUCH", "b"), []string{"a"}},
		{"stops at a partial frame", cmd("GET", "a") + cmd("SET", "bcd", "value")[:27], []string{"a"}},
		{"stops at an inline command", "GET a\r\n" + cmd("GET", "b"), nil},
		{"stops at a bad length", cmd("GET", "a") + "*2\r\n$3\r\nGET\r\n$x\r\nb\r\n", []string{"a"}},
		{"stops at a null bulk", cmd("GET", "a") + "*2\r\n$3\r\nGET\r\n$-1\r\n", []string{"a"}},
		{"stops at a length with a leading zero", cmd("GET", "a") + "*2\r\n$3\r\nGET\r\n$01\r\nb\r\n", []string{"a"}},
		{"stops at a bulk longer than said", cmd("GET", "a") + "*2\r\n$3\r\nGET\r\n$1\r\nbc\r\n", []string{"a"}},
		{"a key holding a frame", cmd("GET", cmd("GET", "x")) + cmd("GET", "y"), []string{cmd("GET", "x"), "y"}},
		{"at most len(keys)", strings.Repeat(cmd("GET", "k"), 20), slices.Repeat([]string{"k"}, 16)},
		{"nothing buffered", "", nil},
		{"members", memberCmds, []string{"h", "s", "z", "z", "a", "h", "h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := cmd("GET", "first") + tc.buffered
			rd := newReader(strings.NewReader(in), 1<<20, 1<<20)
			first, err := rd.next()
			if err != nil || string(first[1]) != "first" {
				t.Fatalf("%q %v", first, err)
			}
			keys, members := make([][]byte, 16), make([][]byte, 16)
			var got, gotMembers []string
			n := rd.peekKeys(keys, members, warmArgs)
			for i, k := range keys[:n] {
				got = append(got, string(k))
				if members[i] == nil {
					gotMembers = append(gotMembers, "-")
				} else {
					gotMembers = append(gotMembers, string(members[i]))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("peeked %q, want %q", got, tc.want)
			}
			wantMembers := slices.Repeat([]string{"-"}, len(got))
			switch tc.name {
			case "keyed commands":
				wantMembers = []string{"-", "-", "-", "f"}
			case "members":
				wantMembers = []string{"f", "m", "zm", "zi", "-", "g", "-"}
			}
			if !slices.Equal(gotMembers, wantMembers) {
				t.Errorf("peeked members %q, want %q", gotMembers, wantMembers)
			}
			// Nothing was consumed: the reader returns every command after
			// the first, as it would have without the peek.
			rest, _ := readAll(rd)
			want, _ := readAll(newReader(strings.NewReader(tc.buffered), 1<<20, 1<<20))
			if fmt.Sprint(rest) != fmt.Sprint(want) {
				t.Errorf("after the peek the reader returned %q, want %q", rest, want)
			}
		})
	}
}
