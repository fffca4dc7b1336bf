package resp

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// redisVersion is the Redis version whose behaviour Strata follows; tools
// read it from INFO and HELLO.
const redisVersion = "7.0.15"

var connectionCommands = []*command{
	{name: "ping", arity: -1, flags: flagFast | flagPubSub, handler: cmdPing, group: "connection",
		summary: "Returns the server's liveliness response."},
	{name: "echo", arity: 2, flags: flagFast, handler: cmdEcho, group: "connection",
		summary: "Returns the given string."},
	{name: "select", arity: 2, flags: flagFast, handler: cmdSelect, group: "connection",
		summary: "Changes the selected database."},
	{name: "quit", arity: -1, flags: flagNoAuth | flagPubSub | flagNoMulti | flagFast, handler: cmdQuit,
		group: "connection", summary: "Closes the connection."},
	{name: "reset", arity: 1, flags: flagNoAuth | flagPubSub | flagNoMulti | flagFast, handler: cmdReset,
		group: "connection", summary: "Resets the connection."},
	{name: "auth", arity: -2, flags: flagNoAuth | flagFast | flagRedacts, handler: cmdAuth, group: "connection",
		summary: "Authenticates the connection."},
	{name: "hello", arity: -1, flags: flagNoAuth | flagFast | flagRedacts, handler: cmdHello, group: "connection",
		summary: "Handshakes with the Redis server."},
	{name: "client", arity: -2, flags: flagAdmin, handler: cmdClient, group: "connection",
		summary: "A container for client connection commands."},
}

func cmdPing(c *call) {
	if c.nargs() > 2 {
		c.errorf(errArity("ping"))
		return
	}
	if c.cl.subscribed() {
		c.array(2)
		c.bulkString("pong")
		if c.nargs() == 2 {
			c.bulk(c.arg(1))
		} else {
			c.bulkString("")
		}
		return
	}
	if c.nargs() == 2 {
		c.bulk(c.arg(1))
		return
	}
	c.status("PONG")
}

func cmdEcho(c *call) { c.bulk(c.arg(1)) }

func cmdSelect(c *call) {
	n, ok := c.dbArg(1) // Redis's int range error above 32 bits, as MOVE's
	if !ok {
		return
	}
	c.cl.db = n
	c.ok()
}

func cmdQuit(c *call) {
	c.cl.quit = true
	c.ok()
}

func cmdReset(c *call) {
	cl := c.cl
	cl.multi = nil
	cl.unwatchAll()
	c.s.pubsub.unsubscribeAll(cl)
	cl.subs, cl.psubs = nil, nil
	if cl.monitor {
		c.s.monitors.remove(cl)
		cl.monitor = false
	}
	cl.db = 0
	cl.authed = c.s.config().RequirePass == ""
	cl.info.Lock()
	cl.info.name = ""
	cl.info.Unlock()
	c.status("RESET")
}

// cmdAuth: AUTH password, or AUTH default password (the only user).
func cmdAuth(c *call) {
	if c.nargs() > 3 {
		c.syntaxError()
		return
	}
	user, pass := "default", c.argStr(c.nargs()-1)
	if c.nargs() == 3 {
		user = c.argStr(1)
	}
	want := c.s.config().RequirePass
	if want == "" && c.nargs() == 2 {
		c.errorf(msgNoPassword)
		return
	}
	if user != "default" || (want != "" && pass != want) {
		c.errorf(msgWrongPass)
		return
	}
	c.cl.authed = true
	c.ok()
}

// cmdHello speaks RESP2 only. HELLO 3 goes through Redis's steps (AUTH,
// then SETNAME) and is refused with NOPROTO where Redis would switch
// protocols; clients (go-redis, redis-cli -3) take that as "use RESP2".
func cmdHello(c *call) {
	i := 1
	var ver int64
	if c.nargs() >= 2 {
		v, ok := parseInt(c.arg(1))
		if !ok {
			c.errorf("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.errorf(msgNoProto)
			return
		}
		ver, i = v, 2
	}
	var name, user, pass []byte
	for ; i < c.nargs(); i++ {
		more := c.nargs() - 1 - i
		switch {
		case c.is(i, "AUTH") && more >= 2:
			user, pass = c.arg(i+1), c.arg(i+2)
			i += 2
		case c.is(i, "SETNAME") && more >= 1:
			name = c.arg(i + 1)
			i++
		default:
			c.errorf(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", noNewlines(string(cString(c.arg(i))))))
			return
		}
	}
	if user != nil {
		want := c.s.config().RequirePass
		if string(user) != "default" || (want != "" && string(pass) != want) {
			c.errorf(msgWrongPass)
			return
		}
		c.cl.authed = true
	}
	// Redis checks the flag itself here, not authRequired: a client that
	// never authenticated is refused even while no password is set.
	if !c.cl.authed {
		c.errorf("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if name != nil {
		if !validClientName(name) {
			c.errorf("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		c.cl.info.Lock()
		c.cl.info.name = string(name)
		c.cl.info.Unlock()
	}
	if ver == 3 {
		c.errorf(msgNoProto)
		return
	}
	c.array(14)
	c.bulkString("server")
	c.bulkString("redis")
	c.bulkString("version")
	c.bulkString(redisVersion)
	c.bulkString("proto")
	c.int(2)
	c.bulkString("id")
	c.int(int64(c.cl.id))
	c.bulkString("mode")
	c.bulkString("standalone")
	c.bulkString("role")
	c.bulkString("master")
	c.bulkString("modules")
	c.array(0)
}

func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func cmdClient(c *call) {
	sub := strings.ToLower(c.argStr(1))
	switch {
	case sub == "id" && c.nargs() == 2:
		c.int(int64(c.cl.id))
	case sub == "getname" && c.nargs() == 2:
		c.cl.info.Lock()
		name := c.cl.info.name
		c.cl.info.Unlock()
		c.bulkOrNull([]byte(name), name != "")
	case sub == "setname" && c.nargs() == 3:
		if !validClientName(c.arg(2)) {
			c.errorf("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		c.cl.info.Lock()
		c.cl.info.name = c.argStr(2)
		c.cl.info.Unlock()
		c.ok()
	case sub == "list":
		c.clientList()
	case sub == "info" && c.nargs() == 2:
		c.bulkString(c.cl.describe())
	case sub == "kill" && c.nargs() >= 3:
		c.clientKill()
	case sub == "no-evict" && c.nargs() == 3:
		if !c.is(2, "on") && !c.is(2, "off") {
			c.syntaxError()
			return
		}
		c.ok()
	case sub == "help" && c.nargs() == 2:
		c.helpReply("CLIENT", "ID", "GETNAME", "SETNAME <name>",
			"LIST [TYPE normal|pubsub] [ID id ...]", "INFO", "KILL <ip:port> | KILL <option> <value> [...]")
	default:
		c.errorf(errSubcommandSyntax("client", c.argStr(1)))
	}
}

func (c *call) clientList() {
	var ids map[uint64]bool
	var typ string
	for i := 2; i < c.nargs(); i++ {
		switch {
		case c.is(i, "TYPE") && i+1 < c.nargs():
			typ = strings.ToLower(c.argStr(i + 1))
			if typ != "normal" && typ != "pubsub" && typ != "master" && typ != "replica" {
				c.errorf(fmt.Sprintf("ERR Unknown client type '%s'", clip(c.argStr(i+1))))
				return
			}
			i++
		case c.is(i, "ID") && i+1 < c.nargs():
			ids = map[uint64]bool{}
			for i++; i < c.nargs(); i++ {
				n, ok := parseInt(c.arg(i)) // 0 and negative ones match nothing
				if !ok {
					c.errorf("ERR Invalid client ID")
					return
				}
				ids[uint64(n)] = true
			}
		default:
			c.syntaxError()
			return
		}
	}
	var b strings.Builder
	for _, cl := range c.s.clientsSorted() {
		if ids != nil && !ids[cl.id] {
			continue
		}
		if typ == "pubsub" && !cl.subscribedInfo() || typ == "normal" && cl.subscribedInfo() || typ == "master" || typ == "replica" {
			continue
		}
		b.WriteString(cl.describe())
	}
	c.bulkString(b.String())
}

// describe is the client's CLIENT LIST line.
func (cl *client) describe() string {
	cl.info.Lock()
	name, flags := cl.info.name, cl.info.flags
	db, cmd := cl.infoDB.Load(), ""
	if last := cl.lastCmd.Load(); last != nil {
		cmd = last.name
	}
	cl.info.Unlock()
	if flags == "" {
		flags = "N"
	}
	now := time.Now()
	idle := now.Sub(time.Unix(0, cl.lastActive.Load()))
	if cmd == "" {
		cmd = "NULL"
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=-1 name=%s age=%d idle=%d flags=%s db=%d sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=default redir=-1 resp=2\n",
		cl.id, cl.addr, cl.laddr, name, int(now.Sub(cl.created).Seconds()), int(idle.Seconds()), flags, db, cmd)
}

func (cl *client) subscribedInfo() bool {
	cl.info.Lock()
	defer cl.info.Unlock()
	return strings.Contains(cl.info.flags, "P")
}

func (s *Server) clientsSorted() []*client {
	s.mu.Lock()
	out := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		// A killed client is gone for CLIENT LIST and KILL, though its
		// goroutine may still be closing it: a second KILL counts 0.
		if !c.killed.Load() {
			out = append(out, c)
		}
	}
	s.mu.Unlock()
	slicesSortByID(out)
	return out
}

// clientKill: CLIENT KILL addr (old form, OK or error), or filters
// ID/ADDR/LADDR/USER/SKIPME/TYPE (the number killed).
func (c *call) clientKill() {
	if c.nargs() == 3 {
		for _, cl := range c.s.clientsSorted() {
			if cl.addr == c.argStr(2) {
				c.killClient(cl)
				c.ok()
				return
			}
		}
		c.errorf("ERR No such client")
		return
	}
	var id uint64
	var addr, laddr, user, typ string
	skipMe := true
	if (c.nargs()-2)%2 != 0 {
		c.syntaxError()
		return
	}
	for i := 2; i < c.nargs(); i += 2 {
		v := c.argStr(i + 1)
		switch {
		case c.is(i, "ID"):
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n == 0 {
				c.errorf("ERR client-id should be greater than 0")
				return
			}
			id = n
		case c.is(i, "ADDR"):
			addr = v
		case c.is(i, "LADDR"):
			laddr = v
		case c.is(i, "USER"):
			if v != "default" {
				c.errorf(fmt.Sprintf("ERR No such user '%s'", noNewlines(v)))
				return
			}
			user = v
		case c.is(i, "TYPE"):
			typ = strings.ToLower(v)
		case c.is(i, "SKIPME"):
			switch strings.ToLower(v) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				c.syntaxError()
				return
			}
		default:
			c.syntaxError()
			return
		}
	}
	n := 0
	for _, cl := range c.s.clientsSorted() {
		switch {
		case id != 0 && cl.id != id, addr != "" && cl.addr != addr, laddr != "" && cl.laddr != laddr,
			user != "" && user != "default", typ == "pubsub" && !cl.subscribedInfo(),
			typ == "normal" && cl.subscribedInfo(), typ == "master" || typ == "replica",
			skipMe && cl == c.cl:
			continue
		}
		c.killClient(cl)
		n++
	}
	c.int(int64(n))
}

func (c *call) killClient(cl *client) {
	if cl == c.cl {
		c.cl.quit = true // after this reply, as Redis does
		return
	}
	cl.kill()
}

// helpReply writes a HELP reply: the command's subcommands, one per line.
func (c *call) helpReply(cmd string, lines ...string) {
	c.array(len(lines) + 1)
	c.status(fmt.Sprintf("%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", cmd))
	for _, l := range lines {
		c.status(l)
	}
}

func slicesSortByID(cs []*client) {
	slices.SortFunc(cs, func(a, b *client) int { return cmp.Compare(a.id, b.id) })
}
