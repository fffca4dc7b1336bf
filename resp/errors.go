package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/stratakv/strata/lsm"
)

// Every error text the front end writes, in one place, as Redis 7 words
// them. Errors from the keyspace already carry Redis's text.
const (
	msgSyntax          = "ERR syntax error"
	msgNotInteger      = "ERR value is not an integer or out of range"
	msgNotFloat        = "ERR value is not a valid float"
	msgMinMaxNotFloat  = "ERR min or max is not a float"
	msgNoAuth          = "NOAUTH Authentication required."
	msgWrongPass       = "WRONGPASS invalid username-password pair or user is disabled."
	msgNoPassword      = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	msgNestedMulti     = "ERR MULTI calls can not be nested"
	msgExecNoMulti     = "ERR EXEC without MULTI"
	msgDiscardNoMulti  = "ERR DISCARD without MULTI"
	msgWatchInMulti    = "ERR WATCH inside MULTI is not allowed"
	msgExecAbort       = "EXECABORT Transaction discarded because of previous errors."
	msgInvalidDB       = "ERR DB index is out of range"
	msgMaxClients      = "ERR max number of clients reached"
	msgOutOfRange      = "ERR value is out of range, must be positive"
	msgTimeoutNegative = "ERR timeout is negative"
	msgTimeoutNotFloat = "ERR timeout is not a float or out of range"
	msgNoProto         = "NOPROTO unsupported protocol version"
	msgInvalidExpire   = "ERR invalid expire time in '%s' command"
	msgBusyLoading     = "LOADING Redis is loading the dataset in memory"

	// msgDenied is what protected mode tells a client from another host,
	// word for word as redis-server 7.0 sends it (clients and people
	// search for this text): why it was refused and the four ways to
	// allow such clients.
	msgDenied = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. " +
		"In this mode connections are only accepted from the loopback interface. " +
		"If you want to connect from external computers to Redis you may adopt one of the following solutions: " +
		"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. " +
		"2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. " +
		"3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. " +
		"4) Setup a an authentication password for the default user. " +
		"NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
)

// errUnknownCommand words Redis 7.0's refusal of an unknown command: the
// name cut at 128 bytes, then the arguments quoted one by one while the
// excerpt is under 128 bytes, each cut to what is left of them (C's %.*s,
// which counts bytes and stops at a NUL), newlines turned into spaces.
func errUnknownCommand(name string, args [][]byte) string {
	var ex []byte
	for _, a := range args {
		if len(ex) >= 128 {
			break
		}
		a = cString(a)
		room := 128 - len(ex)
		ex = append(ex, '\'')
		ex = append(ex, a[:min(len(a), room)]...)
		ex = append(ex, '\'', ' ')
	}
	return "ERR unknown command '" + clip(name) + "', with args beginning with: " + noNewlines(string(ex))
}

func errUnknownSubcommand(cmd, sub string) string {
	return fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", clip(sub), strings.ToUpper(cmd))
}

// errSubcommandSyntax is Redis's addReplySubcommandSyntaxError: a known
// subcommand with arguments its handler does not take.
func errSubcommandSyntax(cmd, sub string) string {
	return fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP.", clip(sub), strings.ToUpper(cmd))
}

func errArity(name string) string {
	return fmt.Sprintf("ERR wrong number of arguments for '%s' command", name)
}

// clip shortens user text quoted in an error, as Redis does (128 bytes,
// and C's %s ends at a NUL).
func clip(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if len(s) > 128 {
		s = s[:128]
	}
	return noNewlines(s)
}

// cString is b as a C string: up to its first NUL byte.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// noNewlines turns CR and LF into spaces, as Redis does to user text in an
// error, which must stay one line. Bytes, not runes: arguments are binary.
func noNewlines(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	b := []byte(s)
	for i, ch := range b {
		if ch == '\r' || ch == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// errorText is the reply text of err: Redis's own text for the keyspace's
// errors (they start with an upper-case code), ERR and the message for
// anything else (engine and bucket failures).
func errorText(err error) string {
	msg := err.Error()
	if errors.Is(err, lsm.ErrFenced) {
		return "ERR strata: fenced: another server took over this bucket; this one no longer accepts writes"
	}
	if errors.Is(err, lsm.ErrClosed) {
		return "ERR strata: server is shutting down"
	}
	if code, _, ok := strings.Cut(msg, " "); ok && code != "" && strings.ToUpper(code) == code && isCode(code) {
		return msg
	}
	return "ERR " + msg
}

// isRedisError reports whether err is one Redis itself could answer (its
// text starts with a code, like WRONGTYPE or ERR): a command's own failure,
// as opposed to the store's.
func isRedisError(err error) bool {
	if errors.Is(err, lsm.ErrFenced) || errors.Is(err, lsm.ErrClosed) {
		return false
	}
	code, _, ok := strings.Cut(err.Error(), " ")
	return ok && code != "" && strings.ToUpper(code) == code && isCode(code)
}

func isCode(s string) bool {
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
