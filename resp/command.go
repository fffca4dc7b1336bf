package resp

import (
	"strings"
)

// cmdFlags describe a command to the dispatcher, as Redis's command flags
// do.
type cmdFlags uint32

const (
	flagWrite    cmdFlags = 1 << iota // changes data: durable before its reply, wakes watchers
	flagReadonly                      // reads data only
	flagAdmin                         // server administration
	flagNoAuth                        // allowed before AUTH
	flagPubSub                        // allowed in subscriber mode (RESP2)
	flagNoMulti                       // runs at once even inside MULTI (EXEC, DISCARD, ...)
	flagBlocking                      // may block the client
	flagFast                          // O(1) or O(log n)
	flagNoScript                      // (reported by COMMAND only)
	flagRedacts                       // may carry a password that SLOWLOG and MONITOR hide (not a Redis flag)
)

var flagNames = []struct {
	f    cmdFlags
	name string
}{
	{flagWrite, "write"}, {flagReadonly, "readonly"}, {flagAdmin, "admin"}, {flagNoAuth, "no_auth"},
	{flagPubSub, "pubsub"}, {flagNoMulti, "no_multi"}, {flagBlocking, "blocking"}, {flagFast, "fast"},
	{flagNoScript, "noscript"},
}

// command is one row of the command table.
type command struct {
	name  string // lower case
	arity int    // Redis's rule: n = exactly n arguments (name included), -n = at least n
	flags cmdFlags
	// Key positions, Redis's first/last/step: keys are args[first],
	// args[first+step], ... through args[last] (last < 0 counts from the
	// end). first == 0: no keys, unless keys is set.
	first, last, step int
	// keys, when set, finds the keys of commands whose positions depend on
	// their arguments (ZUNIONSTORE numkeys, ...).
	keys func(args [][]byte) [][]byte
	// member is the position of the member argument of a command on one
	// member of a hash, set or sorted set (HSET key field: 2), else 0: a
	// pipeline of them has those rows warmed (keyspace.Store.WarmMembers).
	member  int
	handler func(c *call)
	summary string // COMMAND DOCS
	group   string // COMMAND DOCS: string, list, ...

	id int // index in the table, for per-command statistics
	// subs is the command's subcommands and their arity, for a container
	// command (subcommandArity), else nil: set with the table, so that
	// the dispatcher does not look the name up for every command.
	subs map[string]int
}

// keysOf returns the keys a command names, per its table row.
func (cmd *command) keysOf(args [][]byte) [][]byte {
	if cmd.keys != nil {
		return cmd.keys(args)
	}
	if cmd.first == 0 || cmd.first >= len(args) {
		return nil
	}
	last := cmd.last
	if last < 0 {
		last += len(args)
	}
	step := max(cmd.step, 1)
	var keys [][]byte
	for i := cmd.first; i <= last && i < len(args); i += step {
		keys = append(keys, args[i])
	}
	return keys
}

func (cmd *command) arityOK(n int) bool {
	if cmd.arity >= 0 {
		return n == cmd.arity
	}
	return n >= -cmd.arity
}

// commandTable is every command, by lower-case name and by upper-case name
// (what clients send: a lookup of it then costs one probe, not a probe, a
// case fold and a second probe). Each group's file contributes one list.
// It is built in init because handlers such as COMMAND read it.
var commandTable map[string]*command

func init() {
	commandTable = buildTable(
		connectionCommands,
		serverCommands,
		transactionCommands,
		pubsubCommands,
		stringCommands,
		keyCommands,
		hashCommands,
		listCommands,
		setCommands,
		zsetCommands,
	)
}

// commandList is the table in a stable order, for COMMAND and statistics.
var commandList []*command

func buildTable(groups ...[]*command) map[string]*command {
	t := make(map[string]*command)
	for _, g := range groups {
		for _, c := range g {
			if _, dup := t[c.name]; dup {
				panic("resp: command " + c.name + " defined twice")
			}
			c.id = len(commandList)
			c.subs = subcommandArity[c.name]
			commandList = append(commandList, c)
			t[c.name] = c
			t[strings.ToUpper(c.name)] = c
		}
	}
	return t
}

// lookup finds a command by its case-insensitive name, without allocating
// for names of command length.
func lookup(name []byte) *command {
	if c, ok := commandTable[string(name)]; ok {
		return c
	}
	var buf [24]byte
	if len(name) > len(buf) {
		return commandTable[strings.ToLower(string(name))]
	}
	lower := buf[:len(name)]
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		lower[i] = ch
	}
	return commandTable[string(lower)]
}
