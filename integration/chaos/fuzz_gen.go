package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/stratakv/strata/resp/resptest"
)

// fuzzCmd is a row of the server's command table, as COMMAND lists it.
type fuzzCmd struct {
	name  string
	arity int // Redis's rule: n exactly, -n at least n (name included)
}

// fuzzGen makes commands and frames, bad and good, from one seeded source:
// the same seed and table give the same sequence, which is what lets the
// differential check send identical input to two servers.
type fuzzGen struct {
	r    *rand.Rand
	cmds []fuzzCmd
}

func newFuzzGen(seed, stream uint64, cmds []fuzzCmd) *fuzzGen {
	return &fuzzGen{r: rand.New(rand.NewPCG(seed, stream)), cmds: cmds}
}

// Argument pools. The keys are typed by fuzzSetup (the differential check
// resets to it); the numbers are the edges of Redis's integer and double
// parsers; the words are every command's options, so random commands get
// past the arity check into the option parsers.
var (
	fuzzKeys = []string{"str", "num", "hash", "list", "set", "zset", "missing", "dst"}
	fuzzInts = []string{"0", "1", "-1", "2", "3", "10", "100", "-100", "1000000", "2147483647",
		"2147483648", "-2147483649", "4294967296", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "99999999999999999999", "007", "+5",
		" 1", "1 ", "0x10", "1e3", "-0", "--1"}
	fuzzFloats = []string{"0.5", "-0.5", "1.5e3", "1e400", "-1e400", "1e-400", "nan", "NaN", "-nan",
		"inf", "-inf", "+inf", "infinity", "-Infinity", "0x1p3", "0x10", ".5", "5.", "1.2.3", "1e",
		"3.14abc", "1_000", " 1.5", "1.5 "}
	fuzzWords = []string{"EX", "PX", "EXAT", "PXAT", "NX", "XX", "GT", "LT", "CH", "INCR", "KEEPTTL",
		"GET", "PERSIST", "WITHSCORES", "WITHSCORE", "LIMIT", "BYSCORE", "BYLEX", "REV", "COUNT",
		"MATCH", "TYPE", "LEFT", "RIGHT", "BEFORE", "AFTER", "RANK", "MAXLEN", "WEIGHTS",
		"AGGREGATE", "SUM", "MIN", "MAX", "REPLACE", "DB", "ASYNC", "SYNC", "FREQ", "IDLETIME",
		"(1", "[a", "(a", "-", "+", "*", "h?llo", "[a-", "\\", "ex", "nx", "Bogus"}
)

// arg returns one random argument: a typed key, an integer or float edge,
// an option word, empty, text, binary bytes or a long value.
func (g *fuzzGen) arg() string {
	switch n := g.r.IntN(100); {
	case n < 25:
		return g.pick(fuzzKeys)
	case n < 40:
		return g.pick(fuzzInts)
	case n < 50:
		return g.pick(fuzzFloats)
	case n < 64:
		return g.pick(fuzzWords)
	case n < 70:
		return ""
	case n < 80:
		return g.text(g.r.IntN(16))
	case n < 88:
		return g.binary(g.r.IntN(32))
	case n < 93:
		return strconv.FormatInt(g.r.Int64N(1<<40)-1<<39, 10)
	case n < 98:
		return g.text(64 + g.r.IntN(1024))
	}
	return g.binary(4096)
}

func (g *fuzzGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *fuzzGen) text(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 -_:{}*?[]"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *fuzzGen) binary(n int) string {
	b := make([]byte, n)
	for i := range b {
		if g.r.IntN(4) == 0 {
			b[i] = "\r\n\x00\xff\"'\\ "[g.r.IntN(8)]
		} else {
			b[i] = byte(g.r.IntN(256))
		}
	}
	return string(b)
}

// name returns cmd's name in a random case: names are case-insensitive.
func (g *fuzzGen) name(cmd string) string {
	switch g.r.IntN(3) {
	case 0:
		return strings.ToUpper(cmd)
	case 1:
		b := []byte(cmd)
		for i := range b {
			if g.r.IntN(2) == 0 {
				b[i] = strings.ToUpper(string(b[i]))[0]
			}
		}
		return string(b)
	}
	return cmd
}

// command returns a command of the table with random arguments, in its
// arity unless wrongArity, the first argument usually a key.
func (g *fuzzGen) command(wrongArity bool) []string {
	c := g.cmds[g.r.IntN(len(g.cmds))]
	n := c.arity
	if n < 0 {
		n = -n + g.r.IntN(4)
	}
	if wrongArity {
		n = g.badArity(c.arity)
	}
	args := []string{g.name(c.name)}
	for i := 1; i < n; i++ {
		if i == 1 && g.r.IntN(5) > 0 {
			args = append(args, g.pick(fuzzKeys))
		} else {
			args = append(args, g.arg())
		}
	}
	return args
}

// badArity returns an argument count (name included) that arity refuses,
// or 1 past a variadic command's minimum when there is none below it.
func (g *fuzzGen) badArity(arity int) int {
	switch {
	case arity < -1:
		return -arity - 1
	case arity < 0:
		return 1 // cannot be wrong: any count goes
	case arity == 1 || g.r.IntN(2) == 0:
		return arity + 1
	}
	return arity - 1
}

// frame returns one frame for the load: bytes, the commands in it (as
// meant; mutation may change them), and whether the stream may be out of
// step after it (a cut frame, a declared length never sent), so the
// fuzzer must not wait long for the server to answer what follows.
func (g *fuzzGen) frame() (b []byte, cmds int, poison bool) {
	switch n := g.r.IntN(100); {
	case n < 40:
		return resptest.AppendCommand(nil, g.command(g.r.IntN(10) == 0)...), 1, false
	case n < 50:
		var b []byte
		k := 2 + g.r.IntN(8)
		for range k {
			b = resptest.AppendCommand(b, g.command(false)...)
		}
		return b, k, false
	case n < 65:
		return g.mutate(resptest.AppendCommand(nil, g.command(false)...)), 1, true
	case n < 70:
		b := resptest.AppendCommand(nil, g.command(false)...)
		return b[:g.r.IntN(len(b))], 1, true
	case n < 78:
		return g.badLengths(), 1, true
	case n < 81:
		return g.hugeLength(), 1, true
	case n < 84:
		return []byte(strings.Repeat("*1\r\n", 1+g.r.IntN(20000))), 1, true
	case n < 96:
		b, balanced := g.inline()
		return b, 1, !balanced
	}
	return []byte(g.binary(1 + g.r.IntN(256))), 1, true
}

// mutate changes one to three bytes of b: replaced, deleted, inserted or
// a run duplicated.
func (g *fuzzGen) mutate(b []byte) []byte {
	for range 1 + g.r.IntN(3) {
		if len(b) == 0 {
			return b
		}
		i := g.r.IntN(len(b))
		switch g.r.IntN(4) {
		case 0:
			b[i] = byte(g.r.IntN(256))
		case 1:
			b = append(b[:i], b[i+1:]...)
		case 2:
			const bytes = "*$\r\n-0123456789"
			b = append(b[:i], append([]byte{bytes[g.r.IntN(len(bytes))]}, b[i:]...)...)
		default:
			j := min(len(b), i+1+g.r.IntN(8))
			b = append(b[:j], append(append([]byte(nil), b[i:j]...), b[j:]...)...)
		}
	}
	return b
}

// badNumbers are header lengths Redis's string2ll refuses or that are out
// of the protocol's range.
var badNumbers = []string{"abc", "-5", "", "+1", "01", "1.5", " 1", "1 ", "-0", "0x10", "1e3",
	"9223372036854775808", "99999999999999999999", "-9223372036854775809", "--1", "1-"}

// badLengths returns a multibulk with a bad array or bulk length, or a
// bulk length that disagrees with its payload.
func (g *fuzzGen) badLengths() []byte {
	switch g.r.IntN(4) {
	case 0:
		return []byte("*" + g.pick(badNumbers) + "\r\n$4\r\nPING\r\n")
	case 1:
		return []byte("*1\r\n$" + g.pick(badNumbers) + "\r\nPING\r\n")
	case 2:
		return []byte("*1\r\n$" + strconv.Itoa(g.r.IntN(8)) + "\r\nPING\r\n")
	}
	return []byte("*" + strconv.Itoa(2+g.r.IntN(5)) + "\r\n$4\r\nPING\r\n")
}

// hugeLength declares a length the fuzzer never sends: past the limits
// (refused at once), at them (the server must wait without allocating it)
// or negative.
func (g *fuzzGen) hugeLength() []byte {
	lens := []string{"2147483647", "536870912", "536870913", "1073741824", "-2147483648", "4294967296"}
	if g.r.IntN(2) == 0 {
		return []byte("*1\r\n$" + g.pick(lens) + "\r\n" + g.text(g.r.IntN(64)))
	}
	counts := []string{"1048576", "1048577", "2147483647", "-1", "-2147483649", "0"}
	return []byte("*" + g.pick(counts) + "\r\n$4\r\nPING\r\n")
}

// inline returns an inline command line with quoting, and whether its
// quotes balance (an unbalanced one is a protocol error).
func (g *fuzzGen) inline() ([]byte, bool) {
	args := g.command(false)
	var b strings.Builder
	balanced := true
	for i, a := range args {
		if i > 0 {
			b.WriteString(" \t"[g.r.IntN(2):][:1])
		}
		switch g.r.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "%q", a) // Go's escapes: \xHH, \n, \" are sdssplitargs's too
		case 1:
			b.WriteString("'" + strings.ReplaceAll(a, "'", `\'`) + "'")
		case 2:
			b.WriteString(`"` + a) // unbalanced
			balanced = false
		default:
			b.WriteString(strings.Map(func(r rune) rune {
				if r == '\r' || r == '\n' || r == 0 {
					return 'x'
				}
				return r
			}, a))
		}
	}
	b.WriteString("\r\n")
	return []byte(b.String()), balanced
}
