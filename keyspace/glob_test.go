package keyspace

import "testing"

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", false}, {"**", "", false}, {"", "", true}, {"*", "abc", true}, {"a*", "abc", true}, {"a*", "bac", false},
		{"*c", "abc", true}, {"a*c", "ac", true}, {"a*c", "abd", false}, {"a**c", "abbbc", true},
		{"h?llo", "hello", true}, {"h?llo", "hllo", false}, {"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false}, {"h[^e]llo", "hallo", true}, {"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true}, {"h[a-b]llo", "hcllo", false}, {"h[b-a]llo", "hallo", true},
		{`h\*llo`, "h*llo", true}, {`h\*llo`, "hello", false}, {`[\]]`, "]", true},
		{"user:*:name", "user:42:name", true}, {"user:*:name", "user:42:age", false},
		{"abc", "abcd", false}, {"abc?", "abc", false},
	} {
		if got := globMatch(c.p, []byte(c.s)); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}
