package resp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stratakv/strata/keyspace"
)

// execute runs one command from the client's pipeline: the checks every
// command shares, in Redis 7.0's order (processCommand), then queueing
// (MULTI) or running it. A command refused here flags an open transaction,
// so its EXEC aborts; EXEC itself, refused, aborts it at once.
func (c *client) execute(args [][]byte) {
	if len(args) == 0 {
		return
	}
	s := c.s
	s.stats.commands.Add(1)
	cmd := lookup(args[0])
	c.reply(func() {
		if msg := c.refusal(cmd, args); msg != "" {
			if cmd != nil {
				s.cmdStats[cmd.id].rejected.Add(1)
			}
			if cmd != nil && cmd.name == "exec" {
				c.multi = nil
				c.unwatchAll()
				c.errorReply("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
				return
			}
			c.flagMulti()
			c.errorReply(msg)
			return
		}
		if c.multi != nil && cmd.flags&flagNoMulti == 0 {
			c.multi.queue(cmd, args)
			c.out = append(c.out, "+QUEUED\r\n"...)
			return
		}
		if cmd.first == 1 && len(args) > 1 {
			c.warmKeys(cmd, args)
		}
		c.run(cmd, args, s.store, false)
	})
}

// warmKeys, run before cmd when its first argument is a key, asks the
// store to warm that key's metadata and that of the keys of the commands
// buffered right behind it, when there are some (a pipeline), so that
// their cache misses overlap (keyspace.Store.WarmMeta) instead of each
// command waiting for its own. When the pipeline opens with commands on
// one member of a hash, set or sorted set each (HSET, SADD, ZSCORE...),
// their member rows are warmed too (keyspace.Store.WarmMembers): the
// lookup of a random field of a big hash waited on three cache misses in
// a row, a fifth of a pipelined HSET's CPU. The commands it covered do
// not ask again.
func (c *client) warmKeys(cmd *command, args [][]byte) {
	if c.unwarmed > 0 {
		c.unwarmed--
		return
	}
	var keys, members [keyspace.WarmKeys][]byte
	keys[0] = args[1]
	if cmd.member > 0 && cmd.member < len(args) {
		members[0] = args[cmd.member]
	}
	n := 1 + c.rd.peekKeys(keys[1:], members[1:], warmArgs)
	if n == 1 {
		return
	}
	c.s.store.WarmMeta(c.db, keys[:n])
	c.unwarmed = n - 1
	// The run of member commands the pipeline opens with: most pipelines
	// repeat one command.
	k := 0
	for k < n && members[k] != nil {
		k++
	}
	if k > 1 {
		c.s.store.WarmMembers(c.db, keys[:k], members[:k])
	}
}

// warmArgs reports whether the command called name takes a key as its
// first argument, and the position of its member argument if it is a
// command on one member of a collection (else 0).
func warmArgs(name []byte) (keyed bool, member int) {
	cmd := lookup(name)
	if cmd == nil || cmd.first != 1 {
		return false, 0
	}
	return true, cmd.member
}

// refusal is the error the dispatcher answers cmd with instead of running
// or queueing it, or "".
func (c *client) refusal(cmd *command, args [][]byte) string {
	if cmd == nil {
		return errUnknownCommand(string(args[0]), args[1:])
	}
	if !cmd.arityOK(len(args)) {
		return errArity(cmd.name)
	}
	name := cmd.name
	if subs := cmd.subs; subs != nil && len(args) >= 2 {
		sub := strings.ToLower(string(args[1]))
		arity, ok := subs[sub]
		if !ok {
			return errUnknownSubcommand(cmd.name, string(args[1]))
		}
		name = cmd.name + "|" + sub
		if arity >= 0 && len(args) != arity || arity < 0 && len(args) < -arity {
			return errArity(name)
		}
	}
	if cmd.flags&flagNoAuth == 0 && c.authRequired() {
		return msgNoAuth
	}
	if c.multi != nil && deniedInMulti[cmd.name] {
		return "ERR Command not allowed inside a transaction"
	}
	if c.subscribed() && cmd.flags&flagPubSub == 0 {
		return fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", name)
	}
	return ""
}

// authRequired reports whether the client must AUTH before running
// commands. As in Redis, a client is authenticated for good once it is
// (CONFIG SET requirepass does not log it out), and while no password is
// set nobody needs to be, whether or not they were when they connected.
func (c *client) authRequired() bool {
	return !c.authed && c.s.config().RequirePass != ""
}

// deniedInMulti are the commands Redis flags no_multi: refused inside
// MULTI, which then aborts.
var deniedInMulti = map[string]bool{"save": true, "shutdown": true}

// subcommandArity is the subcommands of the container commands and their
// arity (Redis's rule, counting the container and the subcommand), as
// Redis 7.0's command table has them: the dispatcher refuses an unknown
// subcommand or a wrong count before queueing, as Redis does.
var subcommandArity = map[string]map[string]int{
	"client": {"caching": 3, "getname": 2, "getredir": 2, "help": 2, "id": 2, "info": 2, "kill": -3,
		"list": -2, "no-evict": 3, "pause": -3, "reply": 3, "setname": 3,
		"tracking": -3, "trackinginfo": 2, "unblock": -3, "unpause": 2},
	"config":  {"get": -3, "set": -4, "resetstat": 2, "rewrite": 2, "help": 2},
	"command": {"count": 2, "docs": -2, "getkeys": -4, "getkeysandflags": -4, "help": 2, "info": -2, "list": -2},
	"memory":  {"doctor": 2, "help": 2, "malloc-stats": 2, "purge": 2, "stats": 2, "usage": -3},
	"object":  {"encoding": 3, "freq": 3, "help": 2, "idletime": 3, "refcount": 3},
	"slowlog": {"get": -2, "help": 2, "len": 2, "reset": 2},
	"pubsub": {"channels": -2, "help": 2, "numpat": 2, "numsub": -2, "shardchannels": -2,
		"shardnumsub": -2},
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
	c.setInfo(cmd)
	write := cmd.flags&flagWrite != 0 && !inTx
	// The call lives in the client (EXEC nests one level), not on the heap.
	cl := &c.calls[c.depth]
	c.depth++
	*cl = call{ctx: context.Background(), s: s, cl: c, st: st, cmd: cmd, args: args, db: c.db, inTx: inTx, out: &c.out}
	before := len(c.out)
	start := c.mark
	cmd.handler(cl)
	c.depth--
	c.mark = time.Since(monoBase)
	elapsed := c.mark - start
	st2 := &s.cmdStats[cmd.id]
	st2.calls.Add(1)
	st2.usec.Add(uint64(elapsed.Microseconds()))
	if before < len(c.out) && c.out[before] == '-' {
		st2.failed.Add(1)
	}
	shown := args
	if cmd.flags&flagRedacts != 0 {
		shown = redact(args)
	}
	s.slowlog.record(c, shown, elapsed)
	if cmd.flags&flagAdmin == 0 && s.monitors.active() {
		s.monitors.feed(c, shown) // after running, as Redis's call() does
	}
	// Keys are worked out only when someone waits: a blocking pop that
	// starts after this load sees this write anyway. (WATCH needs nothing
	// here: the keyspace stamps every write, see keyspace.Stamp.)
	if write && s.blocked.n.Load() > 0 {
		s.blocked.signal(cl.db, cmd.keysOf(args))
	}
	*cl = call{}
}

// redactedArg replaces a password in what SLOWLOG and MONITOR show.
var redactedArg = []byte("(redacted)")

// redact returns a copy of args with the passwords replaced, as Redis
// shows them: every argument of AUTH, the user and password after HELLO's
// AUTH, and the value of CONFIG SET requirepass.
func redact(args [][]byte) [][]byte {
	out := slices.Clone(args)
	name := strings.ToLower(string(args[0]))
	for i := 1; i < len(out); i++ {
		switch {
		case name == "auth":
			out[i] = redactedArg
		case name == "hello" && i >= 2 && strings.EqualFold(string(out[i]), "auth") && i+2 < len(out):
			out[i+1], out[i+2] = redactedArg, redactedArg
			i += 2
		case name == "hello" && i >= 2 && strings.EqualFold(string(out[i]), "setname"):
			i++ // a client named "auth" is not an AUTH option
		case name == "config" && strings.EqualFold(string(out[1]), "set") && i%2 == 0 && i+1 < len(out) &&
			strings.EqualFold(string(out[i]), "requirepass"):
			out[i+1] = redactedArg
		}
	}
	return out
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
