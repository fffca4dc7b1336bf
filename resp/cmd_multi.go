package resp

import (
	"context"
	"slices"

	"github.com/stratakv/strata/keyspace"
)

// multiState is an open MULTI: the commands queued for EXEC.
type multiState struct {
	cmds   []queued
	failed bool // a command was refused while queueing: EXEC aborts
}

type queued struct {
	cmd  *command
	args [][]byte
}

func (m *multiState) queue(cmd *command, args [][]byte) {
	// The arguments are slices of the client's read buffer, reused by the
	// next command.
	m.cmds = append(m.cmds, queued{cmd, cloneArgs(args)})
}

var transactionCommands = []*command{
	{name: "multi", arity: 1, flags: flagNoMulti | flagFast, handler: cmdMulti, group: "transactions",
		summary: "Starts a transaction."},
	{name: "exec", arity: 1, flags: flagNoMulti, handler: cmdExec, group: "transactions",
		summary: "Executes all commands in a transaction."},
	{name: "discard", arity: 1, flags: flagNoMulti | flagFast, handler: cmdDiscard, group: "transactions",
		summary: "Discards a transaction."},
	{name: "watch", arity: -2, flags: flagNoMulti | flagFast, first: 1, last: -1, step: 1, handler: cmdWatch,
		group: "transactions", summary: "Monitors changes to keys to determine the execution of a transaction."},
	{name: "unwatch", arity: 1, flags: flagFast, handler: cmdUnwatch, group: "transactions",
		summary: "Forgets about watched keys of a transaction."},
}

func cmdMulti(c *call) {
	if c.cl.multi != nil {
		c.errorf(msgNestedMulti)
		return
	}
	c.cl.multi = &multiState{}
	c.ok()
}

func cmdDiscard(c *call) {
	if c.cl.multi == nil {
		c.errorf(msgDiscardNoMulti)
		return
	}
	c.cl.multi = nil
	c.cl.unwatchAll()
	c.ok()
}

func cmdWatch(c *call) {
	if c.cl.multi != nil {
		c.errorf(msgWatchInMulti)
		return
	}
	for _, k := range c.args[1:] {
		dk := dbKey{c.db, string(k)}
		if slices.ContainsFunc(c.cl.watched, func(w watchedKey) bool { return w.dbKey == dk }) {
			continue
		}
		// The stamp first: a write that lands after it changes it, one
		// before it is in what the client reads next.
		stamp := c.st.Stamp(c.db, k)
		ttl, err := c.st.PTTL(c.ctx, c.db, k)
		if c.fail(err) {
			return
		}
		c.cl.watched = append(c.cl.watched, watchedKey{dbKey: dk, stamp: stamp, hadTTL: ttl >= 0})
		c.cl.watching.Store(true)
	}
	c.ok()
}

func cmdUnwatch(c *call) {
	c.cl.unwatchAll()
	c.ok()
}

// cmdExec runs the queued commands as one transaction: under the lock
// stripes of all their keys, reading each other's changes, committed as
// one batch. A watched key that changed (or expired) since WATCH makes it
// reply null and run nothing.
func cmdExec(c *call) {
	cl := c.cl
	m := cl.multi
	if m == nil {
		c.errorf(msgExecNoMulti)
		return
	}
	cl.multi = nil
	defer cl.unwatchAll()
	if m.failed {
		c.errorf(msgExecAbort)
		return
	}
	// The keys of every command, in the database each will run in (a
	// queued SELECT moves the ones after it), and the watched keys: the
	// watches are checked holding their lock stripes, so a write to a
	// watched key either changed its stamp already or waits for this
	// transaction to commit.
	var keys []keyspace.DBKey
	var touched []dbKeys
	db := cl.db
	hasWrite := false
	for _, q := range m.cmds {
		ks := q.cmd.keysOf(q.args)
		for _, k := range ks {
			keys = append(keys, keyspace.DBKey{DB: db, Key: k})
		}
		if q.cmd.flags&flagWrite != 0 {
			hasWrite = true
			touched = append(touched, dbKeys{db, ks})
		}
		if q.cmd.name == "select" {
			if n, ok := parseInt(q.args[1]); ok && n >= 0 && n < keyspace.NumDBs {
				db = int(n)
			}
		}
	}
	for _, w := range cl.watched {
		keys = append(keys, keyspace.DBKey{DB: w.db, Key: []byte(w.key)})
	}
	tx := c.st.Begin(keys)
	if c.watchChanged() {
		tx.Abort()
		c.nullArray()
		return
	}
	if hasWrite && !cl.wrote {
		cl.wrote = true
		cl.writeMark = len(cl.out)
	}
	mark := len(cl.out)
	c.array(len(m.cmds))
	cl.txErr = ""
	for _, q := range m.cmds {
		cl.run(q.cmd, q.args, tx.Store(), true)
	}
	if cl.txErr != "" {
		// A command failed because the store did (a read error, say):
		// Redis would have run it, so committing the others would apply
		// part of the transaction. Nothing is applied; EXEC answers the
		// error, and the client may retry the whole block.
		tx.Abort()
		cl.out = cl.out[:mark]
		c.errorf(cl.txErr)
		cl.txErr = ""
		return
	}
	if err := tx.Commit(context.Background()); err != nil {
		cl.out = cl.out[:mark]
		c.fail(err)
		return
	}
	for _, t := range touched {
		c.s.blocked.signal(t.db, t.keys)
	}
}

type dbKeys struct {
	db   int
	keys [][]byte
}

// watchChanged reports whether a watched key was written (its stamp
// moved) or expired (it had an expiry at WATCH and is gone: Redis counts
// expiry as a change) since WATCH.
// REQUIRES: the watched keys' stripes held.
func (c *call) watchChanged() bool {
	for _, w := range c.cl.watched {
		if !c.s.store.Unchanged(w.db, []byte(w.key), w.stamp) {
			return true
		}
		if !w.hadTTL {
			continue
		}
		n, err := c.s.store.Exists(c.ctx, w.db, []byte(w.key))
		if err == nil && n == 0 {
			return true
		}
	}
	return false
}
