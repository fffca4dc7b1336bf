package resp

import (
	"slices"
	"strings"

	"github.com/tidwall/redcon"

	"github.com/stratakv/strata/keyspace"
)

var pubsubCommands = []*command{
	{name: "subscribe", arity: -2, flags: flagPubSub, handler: cmdSubscribe, group: "pubsub",
		summary: "Listens for messages published to channels."},
	{name: "unsubscribe", arity: -1, flags: flagPubSub, handler: cmdUnsubscribe, group: "pubsub",
		summary: "Stops listening to messages posted to channels."},
	{name: "psubscribe", arity: -2, flags: flagPubSub, handler: cmdPSubscribe, group: "pubsub",
		summary: "Listens for messages published to channels that match one or more patterns."},
	{name: "punsubscribe", arity: -1, flags: flagPubSub, handler: cmdPUnsubscribe, group: "pubsub",
		summary: "Stops listening to messages published to channels that match one or more patterns."},
	{name: "publish", arity: 3, flags: flagFast, handler: cmdPublish, group: "pubsub",
		summary: "Posts a message to a channel."},
	{name: "pubsub", arity: -2, handler: cmdPubsub, group: "pubsub",
		summary: "A container for Pub/Sub commands."},
	{name: "monitor", arity: 1, flags: flagAdmin, handler: cmdMonitor, group: "server",
		summary: "Listens for all requests received by the server in real-time."},
}

// Subscription replies go out as several frames; only the first counts as
// the command's reply for durability bookkeeping, which is fine because
// subscribing writes nothing.

func cmdSubscribe(c *call)  { c.subscribe(false) }
func cmdPSubscribe(c *call) { c.subscribe(true) }

func (c *call) subscribe(pattern bool) {
	if c.inTx {
		c.errorf("ERR Command not allowed inside a transaction")
		return
	}
	cl := c.cl
	set := &cl.subs
	kind := "subscribe"
	if pattern {
		set, kind = &cl.psubs, "psubscribe"
	}
	if *set == nil {
		*set = map[string]bool{}
	}
	for _, name := range c.args[1:] {
		if !(*set)[string(name)] {
			(*set)[string(name)] = true
			c.s.pubsub.subscribe(cl, string(name), pattern)
		}
		c.array(3)
		c.bulkString(kind)
		c.bulk(name)
		c.int(int64(len(cl.subs) + len(cl.psubs)))
	}
	cl.setFlag("P", cl.subscribed())
}

func cmdUnsubscribe(c *call)  { c.unsubscribe(false) }
func cmdPUnsubscribe(c *call) { c.unsubscribe(true) }

func (c *call) unsubscribe(pattern bool) {
	cl := c.cl
	set := &cl.subs
	kind := "unsubscribe"
	if pattern {
		set, kind = &cl.psubs, "punsubscribe"
	}
	names := c.args[1:]
	if len(names) == 0 {
		for n := range *set {
			names = append(names, []byte(n))
		}
		slices.SortFunc(names, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
		if len(names) == 0 {
			c.array(3)
			c.bulkString(kind)
			c.null()
			c.int(int64(len(cl.subs) + len(cl.psubs)))
			return
		}
	}
	for _, name := range names {
		if (*set)[string(name)] {
			delete(*set, string(name))
			c.s.pubsub.unsubscribe(cl, string(name), pattern)
		}
		c.array(3)
		c.bulkString(kind)
		c.bulk(name)
		c.int(int64(len(cl.subs) + len(cl.psubs)))
	}
	cl.setFlag("P", cl.subscribed())
}

func cmdPublish(c *call) { c.int(int64(c.s.publish(c.argStr(1), c.arg(2)))) }

// publish delivers a message to the channel's subscribers and the
// matching patterns' subscribers and returns how many received it.
func (s *Server) publish(channel string, msg []byte) int {
	s.pubsub.mu.RLock()
	var direct, byPattern []*client
	var pats []string
	for cl := range s.pubsub.channels[channel] {
		direct = append(direct, cl)
	}
	for pat, m := range s.pubsub.patterns {
		if keyspace.MatchPattern(pat, []byte(channel)) {
			for cl := range m {
				byPattern = append(byPattern, cl)
				pats = append(pats, pat)
			}
		}
	}
	s.pubsub.mu.RUnlock()
	if len(direct) > 0 {
		frame := redcon.AppendArray(nil, 3)
		frame = redcon.AppendBulkString(frame, "message")
		frame = redcon.AppendBulkString(frame, channel)
		frame = redcon.AppendBulk(frame, msg)
		for _, cl := range direct {
			cl.push(frame)
		}
	}
	for i, cl := range byPattern {
		frame := redcon.AppendArray(nil, 4)
		frame = redcon.AppendBulkString(frame, "pmessage")
		frame = redcon.AppendBulkString(frame, pats[i])
		frame = redcon.AppendBulkString(frame, channel)
		frame = redcon.AppendBulk(frame, msg)
		cl.push(frame)
	}
	return len(direct) + len(byPattern)
}

func cmdPubsub(c *call) {
	s := c.s
	switch sub := strings.ToLower(c.argStr(1)); {
	case sub == "channels" && c.nargs() <= 3:
		s.pubsub.mu.RLock()
		var out [][]byte
		for ch := range s.pubsub.channels {
			if c.nargs() == 2 || keyspace.MatchPattern(c.argStr(2), []byte(ch)) {
				out = append(out, []byte(ch))
			}
		}
		s.pubsub.mu.RUnlock()
		c.bulks(out)
	case sub == "numsub":
		s.pubsub.mu.RLock()
		c.array(2 * (c.nargs() - 2))
		for _, ch := range c.args[2:] {
			c.bulk(ch)
			c.int(int64(len(s.pubsub.channels[string(ch)])))
		}
		s.pubsub.mu.RUnlock()
	case sub == "numpat" && c.nargs() == 2:
		s.pubsub.mu.RLock()
		n := len(s.pubsub.patterns)
		s.pubsub.mu.RUnlock()
		c.int(int64(n))
	case sub == "shardchannels" && c.nargs() <= 3:
		c.array(0) // no shard channels: SSUBSCRIBE is not supported
	case sub == "shardnumsub":
		c.array(2 * (c.nargs() - 2))
		for _, ch := range c.args[2:] {
			c.bulk(ch)
			c.int(0)
		}
	case sub == "help" && c.nargs() == 2:
		c.helpReply("PUBSUB", "CHANNELS [<pattern>]", "NUMPAT", "NUMSUB [<channel> ...]")
	default:
		c.errorf(errSubcommandSyntax("pubsub", c.argStr(1)))
	}
}

func cmdMonitor(c *call) {
	if c.inTx {
		c.errorf("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	c.cl.monitor = true
	c.cl.setFlag("O", true)
	c.s.monitors.add(c.cl)
	c.ok()
}

// setFlag sets or clears a CLIENT LIST flag letter.
func (cl *client) setFlag(letter string, on bool) {
	cl.info.Lock()
	defer cl.info.Unlock()
	f := strings.ReplaceAll(cl.info.flags, letter, "")
	if on {
		f += letter
	}
	cl.info.flags = f
}
