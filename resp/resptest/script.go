package resptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Step is one line of a script that does something: a command, or a sleep.
type Step struct {
	// Line is the step's 1-based line number in its script.
	Line int
	// Text is the line as written, for messages.
	Text string
	// Args is the command and its arguments; nil for a sleep.
	Args []string
	// Mode is how the two replies are compared.
	Mode Mode
	// Sleep is how long a sleep directive waits.
	Sleep time.Duration
}

// prefixes maps each comparison prefix of a script line to its mode.
var prefixes = map[string]Mode{
	"unordered": Unordered, "unordered-pairs": UnorderedPairs, "len": Len,
	"typeonly": TypeOnly, "scan": Scan, "noreply-compare": NoCompare,
}

// scanCommands are the commands the "scan" prefix may precede; before
// anything else "scan" is the SCAN command itself.
var scanCommands = map[string]bool{"SCAN": true, "SSCAN": true, "HSCAN": true, "ZSCAN": true}

// LineError is an error in a script's line.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseScript parses a script (doc.go describes the format). Its errors
// are *LineError.
func ParseScript(src string) ([]Step, error) {
	var steps []Step
	for i, text := range strings.Split(src, "\n") {
		text = strings.TrimSuffix(text, "\r")
		trimmed := strings.TrimSpace(text)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		st, err := parseLine(trimmed)
		if err != nil {
			return nil, &LineError{Line: i + 1, Err: err}
		}
		st.Line, st.Text = i+1, trimmed
		steps = append(steps, st)
	}
	return steps, nil
}

func parseLine(line string) (Step, error) {
	// Prefixes are matched on the raw text, so a quoted "len" is a command.
	first, rest, _ := strings.Cut(line, " ")
	if first == "sleep" {
		ms, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || ms < 0 {
			return Step{}, fmt.Errorf("sleep wants milliseconds, not %q", rest)
		}
		return Step{Sleep: time.Duration(ms) * time.Millisecond}, nil
	}
	mode, isPrefix := prefixes[first]
	args, err := SplitArgs(line)
	if err != nil {
		return Step{}, err
	}
	if isPrefix && (mode != Scan || len(args) > 1 && scanCommands[strings.ToUpper(args[1])]) {
		args = args[1:]
	} else {
		mode = Exact
	}
	if len(args) == 0 {
		return Step{}, fmt.Errorf("no command after %q", first)
	}
	return Step{Args: args, Mode: mode}, nil
}

// SplitArgs splits a line into arguments as redis-cli does (sdssplitargs):
// arguments are separated by spaces; in double quotes \n \r \t \b \a \"
// \\ and \xHH are escapes (any other \c is c); in single quotes only \' is;
// a closing quote must end the argument.
func SplitArgs(line string) ([]string, error) {
	var args []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, nil
		}
		arg, next, err := splitArg(line, i)
		if err != nil {
			return nil, err
		}
		args = append(args, arg)
		i = next
	}
}

// splitArg reads the argument starting at line[i] and returns it with the
// index just past it.
func splitArg(line string, i int) (string, int, error) {
	var b []byte
	var quote byte // the open quote, or 0
	for ; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == 0 && isSpace(c):
			return string(b), i, nil
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case c == quote:
			if i+1 < len(line) && !isSpace(line[i+1]) {
				return "", 0, fmt.Errorf("closing quote must be followed by a space: %q", line)
			}
			quote = 0
		case quote == '"' && c == '\\' && i+3 < len(line) && line[i+1] == 'x' &&
			isHex(line[i+2]) && isHex(line[i+3]):
			n, _ := strconv.ParseUint(line[i+2:i+4], 16, 8)
			b = append(b, byte(n))
			i += 3
		case quote == '"' && c == '\\' && i+1 < len(line):
			i++
			b = append(b, unescape(line[i]))
		case quote == '\'' && c == '\\' && i+1 < len(line) && line[i+1] == '\'':
			i++
			b = append(b, '\'')
		default:
			b = append(b, c)
		}
	}
	if quote != 0 {
		return "", 0, fmt.Errorf("unbalanced quotes: %q", line)
	}
	return string(b), i, nil
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// maxMismatches is how many mismatches a script reports before it stops:
// once replies differ, the servers' states usually do too, and every later
// line would only repeat the first failure.
const maxMismatches = 5

// RunScript runs the script in the file at path on both servers and
// reports, as test errors, every command whose replies differ (up to
// maxMismatches), with file:line, the command and both replies.
func RunScript(t testing.TB, path, strataAddr, redisAddr string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("resptest: %v", err)
	}
	name := filepath.Base(path)
	runScript(t, func(line int) string { return fmt.Sprintf("%s:%d", name, line) },
		string(src), strataAddr, redisAddr)
}

// RunScriptString is RunScript for a script held in a string; messages
// name the line within the script (the test's own message names the
// caller's line, RunScriptString being a helper).
func RunScriptString(t testing.TB, script, strataAddr, redisAddr string) {
	t.Helper()
	runScript(t, func(line int) string { return fmt.Sprintf("inline script line %d", line) },
		script, strataAddr, redisAddr)
}

// runScript runs src on one new connection per server, after FLUSHALL on
// both. where names a script line in messages.
func runScript(t testing.TB, where func(line int) string, src, strataAddr, redisAddr string) {
	t.Helper()
	steps, err := ParseScript(src)
	if le := (*LineError)(nil); errors.As(err, &le) {
		t.Fatalf("%s: %v", where(le.Line), le.Err)
	}
	conns := [2]*Conn{Dial(t, strataAddr), Dial(t, redisAddr)}
	defer conns[0].Close()
	defer conns[1].Close()
	labels := [2]string{"strata", "redis"}
	for i, c := range conns {
		if reply, err := c.TryDo("FLUSHALL"); err != nil || string(reply) != "+OK\r\n" {
			t.Fatalf("%s: FLUSHALL before the script on %s (%s): %q, %v", where(0), labels[i], c.Addr(), reply, err)
		}
	}
	trace := os.Getenv("STRATA_RESPTEST_TRACE") != ""
	mismatches := 0
	for _, st := range steps {
		if st.Args == nil {
			time.Sleep(st.Sleep)
			continue
		}
		var replies [2][]byte
		for i, c := range conns {
			if replies[i], err = c.TryDo(st.Args...); err != nil {
				t.Fatalf("%s: %s\n    %s (%s): %v", where(st.Line), st.Text, labels[i], c.Addr(), err)
			}
		}
		if trace {
			t.Logf("%s: %s\n%s", where(st.Line), st.Text, describe(labels, replies))
		}
		if err := CompareReplies(replies[0], replies[1], st.Mode); err != nil {
			t.Errorf("%s: %s\n    mismatch (%v): %v\n%s", where(st.Line), st.Text, st.Mode, err,
				describe(labels, replies))
			if mismatches++; mismatches == maxMismatches {
				t.Errorf("%s: stopped after %d mismatches", where(st.Line), mismatches)
				return
			}
		}
	}
}

// describe formats both replies, pretty and raw, for a message.
func describe(labels [2]string, replies [2][]byte) string {
	var b strings.Builder
	for i, r := range replies {
		head := fmt.Sprintf("    %-7s ", labels[i]+":")
		pad := strings.Repeat(" ", len(head))
		b.WriteString(head + strings.ReplaceAll(Format(r), "\n", "\n"+pad) + "\n")
	}
	for i, r := range replies {
		fmt.Fprintf(&b, "    %-7s %q\n", labels[i]+":", r)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
