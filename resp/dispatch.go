package resp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stratakv/strata/keyspace"
)

// execute runs one command from the client's pipeline: the checks every
// command shares, in Redis's order, then queueing (MULTI) or running it.
func (c *client) execute(args [][]byte) {
	if len(args) == 0 {
		return
	}
	s := c.s
	s.stats.commands.Add(1)
	cmd := lookup(args[0])
	if s.monitors.active() && (cmd == nil || cmd.flags&flagAdmin == 0) {
		s.monitors.feed(c, args)
	}
	c.reply(func() {
		switch {
		case cmd == nil:
			c.flagMulti()
			c.errorReply(errUnknownCommand(string(args[0]), args[1:min(len(args), 4)]))
		case !cmd.arityOK(len(args)):
			c.flagMulti()
			c.errorReply(errArity(cmd.name))
			s.cmdStats[cmd.id].rejected.Add(1)
		case !c.authed && cmd.flags&flagNoAuth == 0:
			c.flagMulti()
			c.errorReply(msgNoAuth)
		case c.subscribed() && cmd.flags&flagPubSub == 0:
			c.errorReply(fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", cmd.name))
		case c.multi != nil && cmd.flags&flagNoMulti == 0:
			c.multi.queue(cmd, args)
			c.out = append(c.out, "+QUEUED\r\n"...)
		default:
			c.run(cmd, args, s.store, false)
		}
	})
}

// reply runs fn, which writes exactly one reply, keeping count of the
// replies that follow the pipeline's first write (see flushLocked).
func (c *client) reply(fn func()) {
	fn()
	if c.wrote {
		c.afterMark++
	}
}

func (c *client) errorReply(msg string) {
	c.out = append(c.out, '-')
	c.out = append(c.out, msg...)
	c.out = append(c.out, '\r', '\n')
}

// run executes cmd on store st (a transaction's view inside EXEC).
func (c *client) run(cmd *command, args [][]byte, st *keyspace.Store, inTx bool) {
	s := c.s
	if cmd.flags&flagWrite != 0 && !c.wrote && !inTx {
		c.wrote = true
		c.writeMark = len(c.out)
	}
	c.setInfo(cmd.name)
	cl := call{ctx: context.Background(), s: s, cl: c, st: st, cmd: cmd, args: args, db: c.db, inTx: inTx, out: &c.out}
	before := len(c.out)
	start := time.Now()
	cmd.handler(&cl)
	elapsed := time.Since(start)
	st2 := &s.cmdStats[cmd.id]
	st2.calls.Add(1)
	st2.usec.Add(uint64(elapsed.Microseconds()))
	if before < len(c.out) && c.out[before] == '-' {
		st2.failed.Add(1)
	}
	s.slowlog.record(c, args, elapsed)
	if cmd.flags&flagWrite != 0 && !inTx {
		keys := cmd.keysOf(args)
		s.watch.touch(cl.db, keys)
		s.blocked.signal(cl.db, keys)
	}
}

// flagMulti marks the open transaction as failed: EXEC will refuse it.
func (c *client) flagMulti() {
	if c.multi != nil {
		c.multi.failed = true
	}
}

func (c *client) subscribed() bool { return len(c.subs)+len(c.psubs) > 0 }

// monitorLine formats a command as MONITOR shows it.
func monitorLine(c *client, args [][]byte) []byte {
	now := time.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "+%d.%06d [%d %s]", now.Unix(), now.Nanosecond()/1000, c.db, c.addr)
	for _, a := range args {
		b.WriteString(` "`)
		for _, ch := range a {
			switch {
			case ch == '\\' || ch == '"':
				b.WriteByte('\\')
				b.WriteByte(ch)
			case ch == '\n':
				b.WriteString(`\n`)
			case ch == '\r':
				b.WriteString(`\r`)
			case ch == '\t':
				b.WriteString(`\t`)
			case ch < 32 || ch > 126:
				fmt.Fprintf(&b, `\x%02x`, ch)
			default:
				b.WriteByte(ch)
			}
		}
		b.WriteByte('"')
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}
