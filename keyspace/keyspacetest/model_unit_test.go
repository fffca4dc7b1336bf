package keyspacetest

// Tests of the model on its own, on a fake clock: what the comparison with
// Redis cannot pin down (the exact expiry boundary, cursors) and the
// number formats, with expected values taken from redis-server 7.0.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stratakv/strata/keyspace"
)

// TestModelExpiryBoundary: a key is gone from the ms of its expireAt on,
// to every command.
func TestModelExpiryBoundary(t *testing.T) {
	ctx := context.Background()
	now := Epoch
	m := NewModel(func() int64 { return now })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, _, _, err := m.Set(ctx, 0, b("k"), b("v"), SetOptions{ExpireAt: now + 10})
	must(err)
	now += 9
	if ttl, _ := m.PTTL(ctx, 0, b("k")); ttl != 1 {
		t.Fatalf("PTTL 1 ms before expiry = %d, want 1", ttl)
	}
	now++
	if ttl, _ := m.PTTL(ctx, 0, b("k")); ttl != -2 {
		t.Fatalf("PTTL at expireAt = %d, want -2", ttl)
	}
	// Every read sees it gone, even before a lookup deletes it.
	_, _, _, err = m.Set(ctx, 0, b("k"), b("v"), SetOptions{ExpireAt: now + 5})
	must(err)
	now += 5
	n, _ := m.DBSize(ctx, 0)
	_, keys, _ := m.Scan(ctx, 0, nil, "", 0, TypeNone)
	_, found, _ := m.RandomKey(ctx, 0)
	ex, _ := m.Exists(ctx, 0, b("k"))
	typ, _ := m.TypeOf(ctx, 0, b("k"))
	_, got, _ := m.Get(ctx, 0, b("k"))
	if n != 0 || len(keys) != 0 || found || ex != 0 || typ != TypeNone || got {
		t.Fatalf("expired key visible: dbsize %d scan %q randomkey %v exists %d type %v get %v", n, keys, found, ex, typ, got)
	}
	// EXPIRE at now deletes at once and says so.
	_, _, _, err = m.Set(ctx, 0, b("k"), b("v"), SetOptions{})
	must(err)
	if ok, _ := m.Expire(ctx, 0, b("k"), now, ExpireCond{}); !ok {
		t.Fatal("Expire(now) = false")
	}
	if ex, _ := m.Exists(ctx, 0, b("k")); ex != 0 {
		t.Fatal("Expire(now) left the key")
	}
	if next, ok := m.NextExpiry(0); ok {
		t.Fatalf("NextExpiry after all expired = %d", next)
	}
}

// TestModelScanCursor: small pages cover every key once, the empty key
// included, and only the last page has no cursor.
func TestModelScanCursor(t *testing.T) {
	ctx := context.Background()
	m := NewModel(func() int64 { return Epoch })
	want := []string{"", "\x00", "a", "a\x00", "b"}
	for _, k := range want {
		if _, _, _, err := m.Set(ctx, 3, b(k), nil, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var cursor []byte
	var got []string
	for calls := 0; ; calls++ {
		next, keys, err := m.Scan(ctx, 3, cursor, "*", 2, TypeNone)
		if err != nil || calls > 10 {
			t.Fatalf("scan: %v after %d calls", err, calls)
		}
		for _, k := range keys {
			got = append(got, string(k))
		}
		if next == nil {
			break
		}
		cursor = next
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("scan returned %q, want %q", got, want)
	}
	if _, _, err := m.Scan(ctx, 16, nil, "", 0, TypeNone); err != ErrInvalidDB {
		t.Fatalf("scan of db 16: %v", err)
	}
}

func TestFormatFloat(t *testing.T) {
	for f, want := range map[float64]string{
		0.1: "0.10000000000000001", 3.3: "3.2999999999999998", 1e20: "1e+20", 1e17: "1e+17",
		1e16: "10000000000000000", 1.5: "1.5", 100: "100", 1e-5: "1.0000000000000001e-05",
		0: "0", math.Copysign(0, -1): "-0", math.Inf(1): "inf", math.Inf(-1): "-inf",
		0.30000000000000004: "0.30000000000000004",
	} {
		if got := FormatFloat(f); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", f, got, want)
		}
	}
	for f, want := range map[float64]string{
		0.3: "0.3", 10.5: "10.5", 17: "17", 1e17: "100000000000000000",
		3.0000000000000004: "3.0000000000000004", -0.5: "-0.5", math.Copysign(0, -1): "0",
	} {
		if got := FormatIncrFloat(f); got != want {
			t.Errorf("FormatIncrFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestIncrLongDouble: INCRBYFLOAT's arithmetic, with replies seen from
// redis-server 7.0.15 on amd64.
func TestIncrLongDouble(t *testing.T) {
	cases := []struct {
		cur   string // "" for a missing key
		delta float64
		want  string // "!" + error text, or "?" for not a float
	}{
		{"0.1", 0.2, "0.3"},
		{"", 0.1, "0.1"},
		{"3.0000000000000004", 4.4e-16, "3.00000000000000084"},
		{"0x10", 1, "17"},
		{"1e3", 1, "1001"},
		{"", 1e-20, "0"},
		{"", -1e-17, "-0.00000000000000001"},
		{"10.5", -10.5, "0"},
		{"", math.Copysign(0, -1), "0"},
		{"100000000000000000", 0.5, "100000000000000000.5"},
		{"inf", 1, "!" + ErrNaNOrInfinity.Error()},
		{"", math.Inf(1), "!" + ErrNaNOrInfinity.Error()},
		{" 1", 1, "?"},
		{"1 ", 1, "?"},
		{"nan", 1, "?"},
		{"1e5000", 1, "?"},
		{"1e-5000", 1, "?"},
		{"0x", 1, "?"},
		{"1e", 1, "?"},
		{".", 1, "?"},
		// The long double nearest 1e308, not the float64 1e308.
		{"", 1e308, "99999999999999999996685879655845645660560099847415567207797047994921734868838061872100126921888539320446747225054013223152134749593960583597420814430196418767959100019603190778663109604507106667939153395788938914560543563061268364901618630217086589253444881623791300855757318142424510452728255046343928578048"},
	}
	for _, c := range cases {
		got := func() string {
			var cur []byte
			if c.cur != "" {
				cur = []byte(c.cur)
			}
			s, err := keyspace.IncrFloat(cur, c.delta)
			if errors.Is(err, ErrNotFloat) {
				return "?"
			}
			if err != nil {
				return "!" + err.Error()
			}
			return s
		}()
		if got != c.want {
			t.Errorf("%q + %v = %q, want %q", c.cur, c.delta, got, c.want)
		}
	}
}

func TestParseInt(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-1": true, "9223372036854775807": true, "-9223372036854775808": true,
		"9223372036854775808": false, "01": false, "-0": false, "+1": false, " 1": false, "1 ": false,
		"": false, "-": false, "1.0": false, "1e3": false,
	} {
		if _, ok := parseInt([]byte(s)); ok != want {
			t.Errorf("parseInt(%q) ok = %v, want %v", s, ok, want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", false}, // SCAN and KEYS special-case "*"; stringmatchlen does not
		{"*", "abc", true}, {"a*", "a", true}, {"**", "", false}, {"a**", "a", true},
		{"?", "", false}, {"?", "x", true}, {"k?", "k12", false},
		{"[abc]", "b", true}, {"[^abc]", "b", false}, {"[^abc]", "d", true},
		{"[a-c]", "b", true}, {"[c-a]", "b", true}, {"[]", "a", false}, {"[^]", "a", true},
		{"[]]*", "]x", false}, {`[\]]`, "]", true}, {`k\*`, "k*", true}, {`k\*`, "kx", false},
		{`\`, `\`, true}, {"k[", "k", false}, {"k[", "kx", false}, {"k[x", "kx", true},
		{"[a-\xff]", "b", false}, // signed char: 0xff is -1, so the range is [-1, 'a']
		{"[\x80-a]", "\x90", true},
	} {
		if got := GlobMatch([]byte(c.pat), []byte(c.s)); got != c.want {
			t.Errorf("GlobMatch(%q, %q) = %v, want %v", c.pat, c.s, got, c.want)
		}
	}
}
