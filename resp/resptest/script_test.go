package resptest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"GET k", []string{"GET", "k"}},
		{"  SET   k\tv  ", []string{"SET", "k", "v"}},
		{`SET k "hello world"`, []string{"SET", "k", "hello world"}},
		{`SET k ""`, []string{"SET", "k", ""}},
		{`"a\nb\rc\td\"e\\f"`, []string{"a\nb\rc\td\"e\\f"}},
		{`"\x00\xff\x41\xAb"`, []string{"\x00\xff\x41\xab"}},
		{`"\a\b\q"`, []string{"\a\bq"}},
		{`"\xZZ"`, []string{"xZZ"}}, // not hex: \x is x
		{`"\x4"`, []string{"x4"}},
		{`'it\'s' 'a\nb' 'x"y'`, []string{"it's", `a\nb`, `x"y`}},
		{`ab"c d"`, []string{"abc d"}}, // a quote opens mid-argument, as in redis-cli
		{`a\nb`, []string{`a\nb`}},     // no escapes outside quotes
		{`"#" #`, []string{"#", "#"}},
	} {
		got, err := SplitArgs(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`"abc`, `'abc`, `"a"b`, `'a'b`, `"abc\"`, `"\`} {
		if got, err := SplitArgs(bad); err == nil {
			t.Errorf("SplitArgs(%q) = %q, want an error", bad, got)
		}
	}
}

func TestParseScript(t *testing.T) {
	src := "# comment\n\n  SET k v\r\n" +
		"unordered SMEMBERS s\n" +
		"unordered-pairs HGETALL h\n" +
		"len SPOP s 2\n" +
		"typeonly PTTL k\n" +
		"scan SCAN 0 COUNT 100\n" +
		"scan sscan s 0\n" +
		"scan 0\n" +
		"noreply-compare TIME\n" +
		"sleep 150\n" +
		`"len" x` + "\n" +
		"   # indented comment\n" +
		`GET "a b"`
	want := []Step{
		{Line: 3, Text: "SET k v", Args: []string{"SET", "k", "v"}},
		{Line: 4, Text: "unordered SMEMBERS s", Args: []string{"SMEMBERS", "s"}, Mode: Unordered},
		{Line: 5, Text: "unordered-pairs HGETALL h", Args: []string{"HGETALL", "h"}, Mode: UnorderedPairs},
		{Line: 6, Text: "len SPOP s 2", Args: []string{"SPOP", "s", "2"}, Mode: Len},
		{Line: 7, Text: "typeonly PTTL k", Args: []string{"PTTL", "k"}, Mode: TypeOnly},
		{Line: 8, Text: "scan SCAN 0 COUNT 100", Args: []string{"SCAN", "0", "COUNT", "100"}, Mode: Scan},
		{Line: 9, Text: "scan sscan s 0", Args: []string{"sscan", "s", "0"}, Mode: Scan},
		{Line: 10, Text: "scan 0", Args: []string{"scan", "0"}},
		{Line: 11, Text: "noreply-compare TIME", Args: []string{"TIME"}, Mode: NoCompare},
		{Line: 12, Text: "sleep 150", Sleep: 150 * time.Millisecond},
		{Line: 13, Text: `"len" x`, Args: []string{"len", "x"}},
		{Line: 15, Text: `GET "a b"`, Args: []string{"GET", "a b"}},
	}
	got, err := ParseScript(src)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	for _, tc := range []struct {
		src  string
		line int
	}{
		{"GET k\nSET k \"v", 2},
		{"sleep", 1},
		{"GET a\n\nsleep -1", 3},
		{"sleep 1.5", 1},
		{"len", 1},
		{"unordered ", 1},
	} {
		_, err := ParseScript(tc.src)
		var le *LineError
		if !errors.As(err, &le) || le.Line != tc.line {
			t.Errorf("ParseScript(%q) = %v, want an error on line %d", tc.src, err, tc.line)
		}
	}
}

func TestCompareReplies(t *testing.T) {
	const (
		abc  = "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
		cab  = "*3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n"
		aab  = "*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\nb\r\n"
		abb  = "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nb\r\n"
		hash = "*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n"
		hsw  = "*4\r\n$1\r\ng\r\n$1\r\n2\r\n$1\r\nf\r\n$1\r\n1\r\n"
		hmix = "*4\r\n$1\r\nf\r\n$1\r\n2\r\n$1\r\ng\r\n$1\r\n1\r\n" // values swapped between fields
		map1 = "%2\r\n+f\r\n:1\r\n+g\r\n:2\r\n"
		map2 = "%2\r\n+g\r\n:2\r\n+f\r\n:1\r\n"
		scn1 = "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"
		scn2 = "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\na\r\n"
		scn3 = "*2\r\n$2\r\n17\r\n*2\r\n$1\r\nb\r\n$1\r\na\r\n"
		scn4 = "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\nc\r\n"
		wt1  = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
		wt2  = "-ERR wrong kind\r\n"
	)
	for _, tc := range []struct {
		a, b string
		mode Mode
		ok   bool
	}{
		{"+OK\r\n", "+OK\r\n", Exact, true},
		{"+OK\r\n", "$2\r\nOK\r\n", Exact, false},
		{abc, cab, Exact, false},
		{abc, cab, Unordered, true},
		{aab, abb, Unordered, false}, // multisets, not sets
		{abc, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", Unordered, false},
		{abc, "~3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n", Unordered, false}, // array is not set
		{"$1\r\na\r\n", "$1\r\nb\r\n", Unordered, false},
		{wt1, wt2, Unordered, false},
		{map1, map2, Unordered, true},
		{map1, "%2\r\n+f\r\n:2\r\n+g\r\n:1\r\n", Unordered, false},
		{hash, hsw, UnorderedPairs, true},
		{hash, hsw, Unordered, true},
		{hash, hmix, UnorderedPairs, false},
		{hash, hmix, Unordered, true}, // why pairs exist
		{abc, abc, UnorderedPairs, true},
		{abc, cab, UnorderedPairs, false}, // odd length
		{abc, aab, Len, true},
		{abc, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", Len, false},
		{"$1\r\na\r\n", "$3\r\nxyz\r\n", Len, true},
		{"$1\r\na\r\n", "$-1\r\n", Len, false},
		{"*0\r\n", "*-1\r\n", Len, false},
		{":3\r\n", ":4\r\n", Len, false},
		{":3\r\n", ":3\r\n", Len, true},
		{"+a\r\n", "$1\r\na\r\n", Len, false},
		{wt1, wt2, Len, false},
		{":3\r\n", ":4\r\n", TypeOnly, true},
		{":3\r\n", "$1\r\n3\r\n", TypeOnly, false},
		{"$1\r\na\r\n", "$-1\r\n", TypeOnly, false},
		{wt1, wt2, TypeOnly, false},
		{scn1, scn2, Scan, true},
		{scn1, scn4, Scan, false},
		{scn3, scn3, Scan, true}, // equal bytes agree
		{scn1, scn3, Scan, false},
		{scn3, scn2, Scan, false},
		{"-ERR x\r\n", "-ERR x\r\n", Scan, true},
		{"-ERR x\r\n", "-ERR y\r\n", Scan, false},
		{abc, cab, Scan, false},
		{"+a\r\n", "-b\r\n", NoCompare, true},
		{"garbage", "garbage", Unordered, true},
		{"garbage", abc, Unordered, false},
		{"|1\r\n+a\r\n+b\r\n" + abc, cab, Unordered, false},
	} {
		err := CompareReplies([]byte(tc.a), []byte(tc.b), tc.mode)
		if (err == nil) != tc.ok {
			t.Errorf("CompareReplies(%q, %q, %v) = %v, want ok=%v", tc.a, tc.b, tc.mode, err, tc.ok)
		}
	}
}

func TestCompareRepliesNamesDifference(t *testing.T) {
	err := CompareReplies([]byte("*2\r\n$1\r\na\r\n$1\r\nb\r\n"), []byte("*2\r\n$1\r\nb\r\n$1\r\nc\r\n"), Unordered)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `only in the first: ["a"]; only in the second: ["c"]`) {
		t.Fatalf("got %v", err)
	}
	err = CompareReplies([]byte("*2\r\n$1\r\nf\r\n:1\r\n"), []byte("*2\r\n$1\r\nf\r\n:2\r\n"), UnorderedPairs)
	if !strings.Contains(err.Error(), `["f" => (integer) 1]`) {
		t.Fatalf("got %v", err)
	}
	err = CompareReplies([]byte("*2\r\n$1\r\n5\r\n*0\r\n"), []byte("*2\r\n$1\r\n0\r\n*0\r\n"), Scan)
	if !strings.Contains(err.Error(), `cursor "5"`) {
		t.Fatalf("got %v", err)
	}
}
