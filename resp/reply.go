package resp

import (
	"context"
	"math"
	"strconv"

	"github.com/tidwall/redcon"

	"github.com/stratakv/strata/keyspace"
)

// call is one command being executed: its arguments, the client, the
// store it runs on (a transaction's view inside EXEC) and its reply.
type call struct {
	ctx  context.Context
	s    *Server
	cl   *client
	st   *keyspace.Store
	cmd  *command
	args [][]byte // args[0] is the command name
	db   int      // the client's selected database
	inTx bool     // inside EXEC: blocking commands do not block
	out  *[]byte  // the reply buffer
}

func (c *call) arg(i int) []byte    { return c.args[i] }
func (c *call) argStr(i int) string { return string(c.args[i]) }
func (c *call) nargs() int          { return len(c.args) }
func (c *call) write(b []byte)      { *c.out = append(*c.out, b...) }
func (c *call) ok()                 { *c.out = append(*c.out, "+OK\r\n"...) }
func (c *call) status(s string)     { *c.out = redcon.AppendString(*c.out, s) }
func (c *call) errorf(msg string)   { *c.out = redcon.AppendError(*c.out, msg) }
func (c *call) int(n int64)         { *c.out = redcon.AppendInt(*c.out, n) }
func (c *call) bulk(b []byte)       { *c.out = redcon.AppendBulk(*c.out, b) }
func (c *call) bulkString(s string) { *c.out = redcon.AppendBulkString(*c.out, s) }
func (c *call) null()               { *c.out = append(*c.out, "$-1\r\n"...) }
func (c *call) nullArray()          { *c.out = append(*c.out, "*-1\r\n"...) }
func (c *call) array(n int)         { *c.out = redcon.AppendArray(*c.out, n) }
func (c *call) bulkInt(n int64)     { c.bulkString(strconv.FormatInt(n, 10)) }
func (c *call) syntaxError()        { c.errorf(msgSyntax) }
func (c *call) notInteger()         { c.errorf(msgNotInteger) }
func (c *call) boolInt(b bool)      { c.int(boolToInt(b)) }
func (c *call) bulkOrNull(b []byte, ok bool) {
	if ok {
		c.bulk(b)
	} else {
		c.null()
	}
}

// fail replies with err's Redis text when err is not nil and reports
// whether it did: handlers read `if c.fail(err) { return }`. Inside EXEC,
// an error that is not one of Redis's own (the store could not be read or
// written, fencing, shutdown) is kept for cmdExec, which then discards the
// whole transaction.
func (c *call) fail(err error) bool {
	if err == nil {
		return false
	}
	msg := errorText(err)
	if c.inTx && c.cl.txErr == "" && !isRedisError(err) {
		c.cl.txErr = msg
	}
	c.errorf(msg)
	return true
}

// bulks replies with an array of bulk strings.
func (c *call) bulks(items [][]byte) {
	c.array(len(items))
	for _, b := range items {
		c.bulk(b)
	}
}

// bulksOrNull replies with an array where nil entries are null bulks.
func (c *call) bulksOrNull(items [][]byte) {
	c.array(len(items))
	for _, b := range items {
		if b == nil {
			c.null()
		} else {
			c.bulk(b)
		}
	}
}

// double replies with a score as Redis 7.0 formats it (%.17g; inf, -inf).
func (c *call) double(f float64) { c.bulkString(formatDouble(f)) }

// formatDouble formats f as Redis 7.0's addReplyDouble does.
func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

func boolToInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// replyInt replies with n, or with err's text: handlers that only relay a
// keyspace call read `c.replyInt(c.st.HLen(c.ctx, c.db, c.arg(1)))`.
func (c *call) replyInt(n int64, err error) {
	if !c.fail(err) {
		c.int(n)
	}
}

// replyBool replies 1 or 0, or with err's text.
func (c *call) replyBool(ok bool, err error) {
	if !c.fail(err) {
		c.boolInt(ok)
	}
}

// replyBulks replies with an array of bulk strings, or with err's text.
func (c *call) replyBulks(items [][]byte, err error) {
	if !c.fail(err) {
		c.bulks(items)
	}
}
