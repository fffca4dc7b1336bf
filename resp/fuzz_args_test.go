package resp

import (
	"math"
	"strconv"
	"testing"
)

// FuzzParseArgs feeds the argument parsers every command uses (integers,
// doubles, score and lex range ends, timeouts, inline splitting): none may
// panic; an integer parses only from its canonical text, as string2ll; no
// parser yields NaN.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"0", "-0", "007", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "1.5", "1e400", "-1e400", "0x1p3", "0x10", "inf", "-infinity", "nan",
		"(1", "(", "[a", "-", "+", "(nan", " 1", "1e-400", `"a\x41" 'b'`, `"unbalanced`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, ok := parseInt(b); ok && strconv.FormatInt(n, 10) != string(b) {
			t.Fatalf("parseInt accepted %q as %d", b, n)
		}
		if x, ok := parseFloat(b); ok && math.IsNaN(x) {
			t.Fatalf("parseFloat(%q) is NaN", b)
		}
		if x, ok := parseDouble(b); ok && math.IsNaN(x) {
			t.Fatalf("parseDouble(%q) is NaN", b)
		}
		if sb, ok := parseScoreBound(b); ok && math.IsNaN(sb.Value) {
			t.Fatalf("parseScoreBound(%q) is NaN", b)
		}
		parseLexBound(b)
		if beyondDouble(b) {
			if _, ok := parseFloat(b); ok {
				t.Fatalf("%q is both a double and beyond one", b)
			}
		}
		if args, ok := splitArgs(b); ok {
			for _, a := range args {
				if a == nil {
					t.Fatalf("splitArgs(%q) gave a nil argument", b)
				}
			}
		}
	})
}
