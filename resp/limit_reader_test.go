package resp

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tidwall/redcon"
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

// TestLimitReaderOneByte: framing is followed across any split of the
// stream: a one-byte reader gives redcon the same commands.
func TestLimitReaderOneByte(t *testing.T) {
	in := "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*0\r\n*-1\r\nset b \"x y\"\r\n\r\n*1\r\n$4\r\nPING\r\n"
	want := [][]string{{"GET", "a"}, {"set", "b", "x y"}, {"PING"}}
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
		rd := redcon.NewReader(newLimitReader(r, 1<<20, 1<<20))
		var got [][]string
		for {
			cmds, err := rd.ReadCommands()
			if err != nil {
				break
			}
			for _, c := range cmds {
				var args []string
				for _, a := range c.Args {
					args = append(args, string(a))
				}
				got = append(got, args)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		for i := range want {
			if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
				t.Fatalf("got %q, want %q", got, want)
			}
		}
	}
}

// TestLimitReaderRefusesBeforeBuffering: a declared bulk over the limit is
// refused from its header; nothing of it is passed on.
func TestLimitReaderRefusesBeforeBuffering(t *testing.T) {
	l := newLimitReader(strings.NewReader("*2\r\n$3\r\nGET\r\n$99999999\r\nxx"), 1000, 1<<30)
	b, err := io.ReadAll(l)
	if pe, ok := err.(*protocolError); !ok || pe.msg != "ERR Protocol error: invalid bulk length" {
		t.Fatalf("err %v", err)
	}
	if bytes.Contains(b, []byte("99999999")) {
		t.Fatalf("passed on the refused header: %q", b)
	}
}
