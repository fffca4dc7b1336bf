package resp

import (
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
)

func errUnknownCommand(name string, args [][]byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ERR unknown command '%s', with args beginning with: ", clip(name))
	for _, a := range args {
		fmt.Fprintf(&b, "'%s' ", clip(string(a)))
	}
	return b.String()
}

func errUnknownSubcommand(cmd, sub string) string {
	return fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", clip(sub), strings.ToUpper(cmd))
}

func errArity(name string) string {
	return fmt.Sprintf("ERR wrong number of arguments for '%s' command", name)
}

// clip shortens user text quoted in an error, as Redis does (128 bytes).
func clip(s string) string {
	if len(s) > 128 {
		s = s[:128]
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
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

func isCode(s string) bool {
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
