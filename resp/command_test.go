package resp

import (
	"strings"
	"testing"
)

// TestLookupAnyCase: a command is found by its name in any case, and a
// name that is no command's is not, in any case.
func TestLookupAnyCase(t *testing.T) {
	for _, c := range commandList {
		mixed := []byte(c.name)
		for i := 0; i < len(mixed); i += 2 {
			mixed[i] = strings.ToUpper(string(mixed[i]))[0]
		}
		for _, name := range []string{c.name, strings.ToUpper(c.name), string(mixed)} {
			if got := lookup([]byte(name)); got != c {
				t.Fatalf("lookup(%q) = %v, want the command %q", name, got, c.name)
			}
		}
	}
	for _, name := range []string{"", "gett", "GETT", "Gett", strings.Repeat("X", 40)} {
		if got := lookup([]byte(name)); got != nil {
			t.Fatalf("lookup(%q) = command %q, want none", name, got.name)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	for _, name := range []string{"incr", "INCR", "Incr"} {
		b.Run(name, func(b *testing.B) {
			n := []byte(name)
			for b.Loop() {
				if lookup(n) == nil {
					b.Fatal("not found")
				}
			}
		})
	}
}
