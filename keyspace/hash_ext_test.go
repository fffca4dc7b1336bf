package keyspace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
)

// bs makes a [][]byte of strings.
func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// show renders a [][]byte with nil entries told apart from empty ones.
func show(v [][]byte) string {
	out := make([]string, len(v))
	for i, b := range v {
		if b == nil {
			out[i] = "<nil>"
		} else {
			out[i] = fmt.Sprintf("%q", b)
		}
	}
	return fmt.Sprint(out)
}

// wantErr fails unless err is want (nil: no error).
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
}

// hashFixture makes h = {a:1, b:22, c:333, e:""} and the string str.
func hashFixture(t *testing.T) (*Store, context.Context) {
	t.Helper()
	ctx := context.Background()
	s, _ := openTestStore(t)
	if _, err := s.HSet(ctx, 0, []byte("h"), [2][]byte{[]byte("a"), []byte("1")}, [2][]byte{[]byte("b"), []byte("22")},
		[2][]byte{[]byte("c"), []byte("333")}, [2][]byte{[]byte("e"), []byte("")}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Set(ctx, 0, []byte("str"), []byte("x"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, ctx
}

// Replies checked against redis-server 7.0.
func TestHSetNX(t *testing.T) {
	s, ctx := hashFixture(t)
	for _, tc := range []struct {
		key, field, val string
		want            bool
		err             error
		hlen            int64
	}{
		{"h", "a", "9", false, nil, 4},
		{"h", "z", "9", true, nil, 5},
		{"h", "z", "10", false, nil, 5},
		{"str", "a", "1", false, ErrWrongType, 0},
		{"nokey", "f", "v", true, nil, 1},
	} {
		what := fmt.Sprintf("HSETNX %s %s %s", tc.key, tc.field, tc.val)
		got, err := s.HSetNX(ctx, 0, []byte(tc.key), []byte(tc.field), []byte(tc.val))
		wantErr(t, what, err, tc.err)
		if got != tc.want {
			t.Fatalf("%s = %v, want %v", what, got, tc.want)
		}
		if tc.err != nil {
			continue
		}
		if n, err := s.HLen(ctx, 0, []byte(tc.key)); err != nil || n != tc.hlen {
			t.Fatalf("after %s: HLEN = %d, %v, want %d", what, n, err, tc.hlen)
		}
	}
	for field, want := range map[string]string{"a": "1", "z": "9"} {
		if v, ok, err := s.HGet(ctx, 0, []byte("h"), []byte(field)); err != nil || !ok || string(v) != want {
			t.Fatalf("HGET h %s = %q %v %v, want %q", field, v, ok, err, want)
		}
	}
}

func TestHStrLenKeysValsMGet(t *testing.T) {
	s, ctx := hashFixture(t)
	for _, tc := range []struct {
		key, field string
		want       int64
		err        error
	}{
		{"h", "c", 3, nil}, {"h", "e", 0, nil}, {"h", "missing", 0, nil}, {"nokey", "f", 0, nil}, {"str", "f", 0, ErrWrongType},
	} {
		got, err := s.HStrLen(ctx, 0, []byte(tc.key), []byte(tc.field))
		wantErr(t, "HSTRLEN "+tc.key, err, tc.err)
		if got != tc.want {
			t.Fatalf("HSTRLEN %s %s = %d, want %d", tc.key, tc.field, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		fn   func(ctx context.Context, db int, key []byte) ([][]byte, error)
		key  string
		want string
		err  error
	}{
		{"HKEYS", s.HKeys, "h", show(bs("a", "b", "c", "e")), nil},
		{"HVALS", s.HVals, "h", show(bs("1", "22", "333", "")), nil},
		{"HKEYS", s.HKeys, "nokey", "[]", nil},
		{"HVALS", s.HVals, "nokey", "[]", nil},
		{"HKEYS", s.HKeys, "str", "[]", ErrWrongType},
		{"HVALS", s.HVals, "str", "[]", ErrWrongType},
	} {
		got, err := tc.fn(ctx, 0, []byte(tc.key))
		wantErr(t, tc.name+" "+tc.key, err, tc.err)
		if show(got) != tc.want {
			t.Fatalf("%s %s = %s, want %s", tc.name, tc.key, show(got), tc.want)
		}
	}
	for _, tc := range []struct {
		key    string
		fields []string
		want   string
		err    error
	}{
		{"h", []string{"a", "missing", "c", "e", "a"}, `["1" <nil> "333" "" "1"]`, nil},
		{"nokey", []string{"a", "b"}, "[<nil> <nil>]", nil},
		{"str", []string{"a"}, "[]", ErrWrongType},
	} {
		got, err := s.HMGet(ctx, 0, []byte(tc.key), bs(tc.fields...)...)
		wantErr(t, "HMGET "+tc.key, err, tc.err)
		if err == nil && show(got) != tc.want {
			t.Fatalf("HMGET %s %q = %s, want %s", tc.key, tc.fields, show(got), tc.want)
		}
	}
}

// TestHRandFieldReplies: the replies whose content is not random.
func TestHRandFieldReplies(t *testing.T) {
	s, ctx := hashFixture(t)
	all := [][2][]byte{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("22")}, {[]byte("c"), []byte("333")}, {[]byte("e"), []byte("")}}
	for _, tc := range []struct {
		key       string
		count     int64
		withCount bool
		want      [][2][]byte
		err       error
	}{
		{"nokey", 0, false, nil, nil},
		{"nokey", 5, true, nil, nil},
		{"nokey", -5, true, nil, nil},
		{"str", 0, false, nil, ErrWrongType},
		{"str", 0, true, nil, ErrWrongType},
		{"h", 0, true, [][2][]byte{}, nil},
		{"h", 4, true, all, nil},
		{"h", math.MaxInt64, true, all, nil},
		{"nokey", math.MinInt64, true, nil, errHashSetRandRange},
		{"h", math.MinInt64, true, nil, errHashSetRandRange},
	} {
		what := fmt.Sprintf("HRANDFIELD %s %d (count given: %v)", tc.key, tc.count, tc.withCount)
		got, err := s.HRandField(ctx, 0, []byte(tc.key), tc.count, tc.withCount)
		wantErr(t, what, err, tc.err)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) || (got == nil) != (tc.want == nil) {
			t.Fatalf("%s = %q, want %q", what, got, tc.want)
		}
	}
	if errHashSetRandRange.Error() != "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807" {
		t.Fatalf("range error text %q", errHashSetRandRange)
	}
}

// TestHRandFieldRandom: random picks are real pairs of the hash, distinct
// for a positive count, exactly |count| for a negative one, and every field
// gets picked.
func TestHRandFieldRandom(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	const n = 50
	k := []byte("h")
	value := map[string]string{}
	for i := range n {
		f, v := fmt.Sprintf("f%02d", i), fmt.Sprintf("v%d", i)
		value[f] = v
		if _, err := s.HSet(ctx, 0, k, [2][]byte{[]byte(f), []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	check := func(what string, got [][2][]byte, wantLen int, distinct bool) {
		t.Helper()
		if len(got) != wantLen {
			t.Fatalf("%s: %d pairs, want %d", what, len(got), wantLen)
		}
		picked := map[string]bool{}
		for _, p := range got {
			f := string(p[0])
			if v, ok := value[f]; !ok || v != string(p[1]) {
				t.Fatalf("%s: pair %q is not in the hash", what, p)
			}
			if distinct && picked[f] {
				t.Fatalf("%s: field %q picked twice in %q", what, f, got)
			}
			picked[f] = true
			seen[f]++
		}
	}
	for range 300 {
		got, err := s.HRandField(ctx, 0, k, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		check("no count", got, 1, true)
		if got, err = s.HRandField(ctx, 0, k, 7, true); err != nil {
			t.Fatal(err)
		}
		check("count 7", got, 7, true)
		if got, err = s.HRandField(ctx, 0, k, n-1, true); err != nil {
			t.Fatal(err)
		}
		check("count n-1", got, n-1, true)
	}
	got, err := s.HRandField(ctx, 0, k, -3*n, true)
	if err != nil {
		t.Fatal(err)
	}
	check("count -3n", got, 3*n, false) // more picks than fields: repeats
	for f := range value {
		if seen[f] == 0 {
			t.Fatalf("field %s never picked: picks are not spread over the hash", f)
		}
	}
	if n, _ := s.HLen(ctx, 0, k); n != 50 {
		t.Fatalf("HRANDFIELD changed the hash: HLEN %d", n)
	}
}

// TestPickRandomRanks: the rank draws behind HRANDFIELD, SRANDMEMBER and
// SPOP.
func TestPickRandomRanks(t *testing.T) {
	for _, tc := range []struct{ n, count int64 }{
		{0, 5}, {0, -5}, {5, 0}, {5, 1}, {5, 4}, {5, 5}, {5, 9}, {5, -1}, {5, -12}, {1000, 3}, {1000, 999},
	} {
		r := pickRandomRanks(tc.n, tc.count)
		want := min(tc.count, tc.n)
		if tc.count < 0 {
			want = -tc.count
		}
		if tc.n == 0 {
			want = 0
		}
		if int64(len(r)) != want || r == nil {
			t.Fatalf("pickRandomRanks(%d, %d) gave %d ranks, want %d", tc.n, tc.count, len(r), want)
		}
		for _, x := range r {
			if x < 0 || x >= tc.n {
				t.Fatalf("pickRandomRanks(%d, %d): rank %d out of range", tc.n, tc.count, x)
			}
		}
		if tc.count > 0 {
			sorted := slices.Clone(r)
			slices.Sort(sorted)
			if len(slices.Compact(sorted)) != len(r) {
				t.Fatalf("pickRandomRanks(%d, %d) repeats: %v", tc.n, tc.count, r)
			}
		}
	}
}
