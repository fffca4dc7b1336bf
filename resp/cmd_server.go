package resp

import (
	"fmt"
	"strings"
	"time"

	"github.com/stratakv/strata/keyspace"
)

var serverCommands = []*command{
	{name: "info", arity: -1, handler: cmdInfo, group: "server",
		summary: "Returns information and statistics about the server."},
	{name: "config", arity: -2, flags: flagAdmin | flagRedacts, handler: cmdConfig, group: "server",
		summary: "A container for server configuration commands."},
	{name: "dbsize", arity: 1, flags: flagReadonly, handler: cmdDBSize, group: "server",
		summary: "Returns the number of keys in the database."},
	{name: "flushdb", arity: -1, flags: flagWrite, handler: cmdFlushDB, group: "server",
		summary: "Removes all keys from the current database."},
	{name: "flushall", arity: -1, flags: flagWrite, handler: cmdFlushAll, group: "server",
		summary: "Removes all keys from all databases."},
	{name: "time", arity: 1, flags: flagFast, handler: cmdTime, group: "server",
		summary: "Returns the server time."},
	{name: "lastsave", arity: 1, flags: flagFast, handler: cmdLastSave, group: "server",
		summary: "Returns the Unix timestamp of the last successful save (memtable flush) to the bucket."},
	{name: "save", arity: 1, flags: flagAdmin, handler: cmdSave, group: "server",
		summary: "Flushes the memtable to an SST in the bucket and waits for it."},
	{name: "bgsave", arity: -1, flags: flagAdmin, handler: cmdBgSave, group: "server",
		summary: "Flushes the memtable to an SST in the bucket in the background."},
	{name: "shutdown", arity: -1, flags: flagAdmin | flagNoMulti, handler: cmdShutdown, group: "server",
		summary: "Stops the server gracefully: the WAL is flushed and the engine closed."},
	{name: "command", arity: -1, handler: cmdCommand, group: "server",
		summary: "Returns detailed information about all commands."},
	{name: "memory", arity: -2, flags: flagReadonly, handler: cmdMemory, group: "server",
		summary: "A container for memory diagnostics commands."},
	{name: "object", arity: -2, flags: flagReadonly, handler: cmdObject, group: "generic",
		summary: "A container for object introspection commands."},
	{name: "slowlog", arity: -2, flags: flagAdmin, handler: cmdSlowlog, group: "server",
		summary: "A container for slow log commands."},
}

func cmdDBSize(c *call) {
	c.replyInt(c.st.DBSize(c.ctx, c.db))
}

// flushMode checks the optional ASYNC|SYNC argument; both flush at once
// (a flush is O(1): it moves the database to a new generation).
func (c *call) flushMode() bool {
	if c.nargs() > 2 || (c.nargs() == 2 && !c.is(1, "ASYNC") && !c.is(1, "SYNC")) {
		c.syntaxError()
		return false
	}
	return true
}

func cmdFlushDB(c *call) {
	if !c.flushMode() {
		return
	}
	if c.fail(c.st.FlushDB(c.ctx, c.db)) {
		return
	}
	c.s.keysFlushed()
	c.ok()
}

func cmdFlushAll(c *call) {
	if !c.flushMode() {
		return
	}
	if c.fail(c.st.FlushAll(c.ctx)) {
		return
	}
	c.s.keysFlushed()
	c.ok()
}

func cmdTime(c *call) {
	now := time.Now()
	c.array(2)
	c.bulkInt(now.Unix())
	c.bulkInt(int64(now.Nanosecond() / 1000))
}

func cmdLastSave(c *call) { c.int(c.s.lastSave.Load()) }

func cmdSave(c *call) {
	if c.fail(c.s.db.Flush(c.ctx)) {
		return
	}
	c.s.lastSave.Store(time.Now().Unix())
	c.ok()
}

func cmdBgSave(c *call) {
	if c.nargs() > 2 || (c.nargs() == 2 && !c.is(1, "SCHEDULE")) {
		c.syntaxError()
		return
	}
	s := c.s // the call is reused once the handler returns
	go func() {
		if err := s.db.Flush(s.ctx); err != nil {
			s.log.Warn("BGSAVE: memtable flush failed", "err", err)
			return
		}
		s.lastSave.Store(time.Now().Unix())
	}()
	c.status("Background saving started")
}

// cmdShutdown asks the process to stop gracefully. On success the client
// gets no reply: the connection closes, as with Redis.
func cmdShutdown(c *call) {
	for i := 1; i < c.nargs(); i++ {
		if !c.is(i, "NOSAVE") && !c.is(i, "SAVE") && !c.is(i, "NOW") && !c.is(i, "FORCE") && !c.is(i, "ABORT") {
			c.syntaxError()
			return
		}
		if c.is(i, "ABORT") {
			c.errorf("ERR No shutdown in progress.")
			return
		}
	}
	fn := c.s.config().Shutdown
	if fn == nil {
		c.errorf("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	c.s.log.Info("SHUTDOWN requested", "client", c.cl.addr)
	c.cl.quit = true
	go fn()
}

func cmdSlowlog(c *call) {
	l := &c.s.slowlog
	switch sub := strings.ToLower(c.argStr(1)); {
	case sub == "get" && c.nargs() <= 3:
		n := int64(10)
		if c.nargs() == 3 {
			v, ok := parseInt(c.arg(2))
			if !ok || v < -1 {
				c.errorf("ERR count should be greater than or equal to -1")
				return
			}
			n = v
		}
		l.mu.Lock()
		entries := l.entries
		if n >= 0 && int(n) < len(entries) {
			entries = entries[:n]
		}
		entries = append([]slowEntry(nil), entries...)
		l.mu.Unlock()
		c.array(len(entries))
		for _, e := range entries {
			c.array(6)
			c.int(e.id)
			c.int(e.at.Unix())
			c.int(e.duration.Microseconds())
			c.bulks(e.args)
			c.bulkString(e.addr)
			c.bulkString(e.name)
		}
	case sub == "len" && c.nargs() == 2:
		l.mu.Lock()
		n := len(l.entries)
		l.mu.Unlock()
		c.int(int64(n))
	case sub == "reset" && c.nargs() == 2:
		l.mu.Lock()
		l.entries = nil
		l.mu.Unlock()
		c.ok()
	case sub == "help" && c.nargs() == 2:
		c.helpReply("SLOWLOG", "GET [<count>]", "LEN", "RESET")
	default:
		c.errorf(errSubcommandSyntax("slowlog", c.argStr(1)))
	}
}

func cmdMemory(c *call) {
	switch sub := strings.ToLower(c.argStr(1)); {
	case sub == "usage":
		for i := 3; i < c.nargs(); i++ {
			if !c.is(i, "SAMPLES") || i+1 >= c.nargs() {
				c.syntaxError()
				return
			}
			if _, ok := c.intArg(i + 1); !ok {
				return
			}
			i++
		}
		n, ok, err := c.st.Usage(c.ctx, c.db, c.arg(2))
		if c.fail(err) {
			return
		}
		if !ok {
			c.null()
			return
		}
		c.int(n)
	case sub == "help" && c.nargs() == 2:
		c.helpReply("MEMORY", "USAGE <key> [SAMPLES <count>]")
	default:
		c.errorf(errSubcommandSyntax("memory", c.argStr(1)))
	}
}

// cmdObject answers OBJECT with what is meaningful here: ENCODING names
// the encoding Redis 7.0 would use for the value's type and size (clients
// and tests branch on it); REFCOUNT is 1 and IDLETIME 0, since values are
// not shared objects and access times are not tracked; FREQ is refused as
// Redis refuses it without an LFU policy.
func cmdObject(c *call) {
	sub := strings.ToLower(c.argStr(1))
	if sub == "help" && c.nargs() == 2 {
		c.helpReply("OBJECT", "ENCODING <key>", "FREQ <key>", "IDLETIME <key>", "REFCOUNT <key>")
		return
	}
	if c.nargs() != 3 || (sub != "encoding" && sub != "refcount" && sub != "idletime" && sub != "freq") {
		c.errorf(errSubcommandSyntax("object", c.argStr(1)))
		return
	}
	enc, ok, err := c.st.Encoding(c.ctx, c.db, c.arg(2))
	if c.fail(err) {
		return
	}
	if !ok {
		c.null()
		return
	}
	switch sub {
	case "encoding":
		c.bulkString(enc)
	case "refcount":
		c.int(1)
	case "idletime":
		c.int(0)
	case "freq":
		c.errorf("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	}
}

// cmdCommand: COMMAND, COUNT, INFO, DOCS, LIST, GETKEYS.
func cmdCommand(c *call) {
	if c.nargs() == 1 {
		c.array(len(commandList))
		for _, cmd := range commandList {
			c.commandInfo(cmd)
		}
		return
	}
	switch sub := strings.ToLower(c.argStr(1)); {
	case sub == "count" && c.nargs() == 2:
		c.int(int64(len(commandList)))
	case sub == "list":
		c.commandList()
	case sub == "info":
		cmds := commandList
		if c.nargs() > 2 {
			cmds = nil
			for _, n := range c.args[2:] {
				cmds = append(cmds, lookup(n))
			}
		}
		c.array(len(cmds))
		for _, cmd := range cmds {
			if cmd == nil {
				c.null()
			} else {
				c.commandInfo(cmd)
			}
		}
	case sub == "docs":
		cmds := commandList
		if c.nargs() > 2 {
			cmds = nil
			for _, n := range c.args[2:] {
				if cmd := lookup(n); cmd != nil {
					cmds = append(cmds, cmd)
				}
			}
		}
		c.array(2 * len(cmds))
		for _, cmd := range cmds {
			c.bulkString(cmd.name)
			c.array(6)
			c.bulkString("summary")
			c.bulkString(cmd.summary)
			c.bulkString("since")
			c.bulkString("1.0.0")
			c.bulkString("group")
			c.bulkString(cmd.group)
		}
	case sub == "getkeys" && c.nargs() >= 3:
		cmd := lookup(c.arg(2))
		if cmd == nil {
			c.errorf("ERR Invalid command specified")
			return
		}
		if !cmd.arityOK(c.nargs() - 2) {
			c.errorf("ERR Invalid number of arguments specified for command")
			return
		}
		keys := cmd.keysOf(c.args[2:])
		if len(keys) == 0 {
			c.errorf("ERR The command has no key arguments")
			return
		}
		c.bulks(keys)
	case sub == "help" && c.nargs() == 2:
		c.helpReply("COMMAND", "(no subcommand)", "COUNT", "DOCS [<command-name> ...]", "GETKEYS <full-command>",
			"INFO [<command-name> ...]", "LIST")
	default:
		c.errorf(errUnknownSubcommand("command", c.argStr(1)))
	}
}

// commandInfo writes one command's COMMAND INFO entry (Redis 7 shape).
func (c *call) commandInfo(cmd *command) {
	c.array(10)
	c.bulkString(cmd.name)
	c.int(int64(cmd.arity))
	var flags []string
	for _, f := range flagNames {
		if cmd.flags&f.f != 0 {
			flags = append(flags, f.name)
		}
	}
	c.array(len(flags))
	for _, f := range flags {
		c.status(f)
	}
	last := cmd.last
	c.int(int64(cmd.first))
	c.int(int64(last))
	c.int(int64(cmd.step))
	c.array(0) // ACL categories
	c.array(0) // tips
	c.array(0) // key specs
	c.array(0) // subcommands
}

var _ = fmt.Sprintf
var _ = keyspace.NumDBs

// commandList is COMMAND LIST [FILTERBY MODULE m | ACLCAT c | PATTERN p];
// anything else after LIST is a syntax error, as in Redis. There are no
// modules, and no ACL categories yet, so those filters match nothing.
func (c *call) commandList() {
	if c.nargs() != 2 && (c.nargs() != 5 || !c.is(2, "filterby")) {
		c.errorf(msgSyntax)
		return
	}
	var names []string
	switch {
	case c.nargs() == 2:
		for _, cmd := range commandList {
			names = append(names, cmd.name)
		}
	case c.is(3, "pattern"):
		for _, cmd := range commandList {
			if keyspace.MatchPattern(strings.ToLower(c.argStr(4)), []byte(cmd.name)) {
				names = append(names, cmd.name)
			}
		}
	case !c.is(3, "module") && !c.is(3, "aclcat"):
		c.errorf(msgSyntax)
		return
	}
	c.array(len(names))
	for _, n := range names {
		c.bulkString(n)
	}
}
