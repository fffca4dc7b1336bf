package resp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stratakv/strata/keyspace"
)

// configParam is one setting CONFIG GET shows and, unless immutable,
// CONFIG SET changes.
type configParam struct {
	name string
	get  func(s *Server) string
	set  func(s *Server, v string) error // nil: immutable
}

var configParams = []configParam{
	{name: "port", get: func(s *Server) string { return strconv.Itoa(s.config().Port) }},
	{name: "bind", get: func(s *Server) string { return s.config().Bind }},
	{name: "dir", get: func(s *Server) string { return s.config().Dir }},
	{name: "databases", get: func(*Server) string { return strconv.Itoa(keyspace.NumDBs) }},
	{name: "appendonly", get: func(*Server) string { return "yes" }},
	{name: "save", get: func(*Server) string { return "" }},
	{name: "maxmemory", get: func(*Server) string { return "0" }},
	{name: "maxmemory-policy", get: func(*Server) string { return "noeviction" }},
	{name: "timeout", get: func(*Server) string { return "0" }},
	{name: "tcp-keepalive", get: func(*Server) string { return "300" }},
	{name: "requirepass",
		get: func(s *Server) string { return s.config().RequirePass },
		set: func(s *Server, v string) error { s.updateConfig(func(c *Config) { c.RequirePass = v }); return nil }},
	{name: "protected-mode",
		get: func(s *Server) string { return yesNo(s.config().ProtectedMode) },
		set: func(s *Server, v string) error {
			on, err := parseYesNo(v)
			if err == nil {
				s.updateConfig(func(c *Config) { c.ProtectedMode = on })
			}
			return err
		}},
	// The TLS settings are fixed at startup: the port's certificates are
	// loaded once (Redis can reload them; Strata needs a restart).
	{name: "tls-port", get: func(s *Server) string { return strconv.Itoa(s.config().TLS.Port) }},
	{name: "tls-cert-file", get: func(s *Server) string { return s.config().TLS.CertFile }},
	{name: "tls-key-file", get: func(s *Server) string { return s.config().TLS.KeyFile }},
	{name: "tls-ca-cert-file", get: func(s *Server) string { return s.config().TLS.CACertFile }},
	{name: "tls-auth-clients", get: func(s *Server) string { return s.config().TLS.AuthClients }},
	{name: "maxclients",
		get: func(s *Server) string { return strconv.Itoa(s.config().MaxClients) },
		set: func(s *Server, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("argument couldn't be parsed into an integer")
			}
			if n < 1 || n > 4294967295 {
				return fmt.Errorf("argument must be between 1 and 4294967295 inclusive")
			}
			s.updateConfig(func(c *Config) { c.MaxClients = int(n) })
			return nil
		}},
	{name: "appendfsync",
		get: func(s *Server) string { return s.config().AppendFsync },
		set: func(s *Server, v string) error {
			v = strings.ToLower(v)
			if v != "always" && v != "everysec" && v != "no" {
				return fmt.Errorf("argument(s) must be one of the following: everysec, always, no")
			}
			s.updateConfig(func(c *Config) { c.AppendFsync = v })
			return nil
		}},
	{name: "proto-max-bulk-len",
		get: func(s *Server) string { return strconv.FormatInt(s.config().ProtoMaxBulkLen, 10) },
		set: func(s *Server, v string) error {
			n, err := parseMemory(v)
			if err != nil || n < 1<<20 {
				return fmt.Errorf("argument must be a memory value of at least 1mb")
			}
			s.updateConfig(func(c *Config) { c.ProtoMaxBulkLen = n })
			return nil
		}},
	{name: "client-query-buffer-limit",
		get: func(s *Server) string { return strconv.FormatInt(s.config().ClientQueryBufferLimit, 10) },
		set: func(s *Server, v string) error {
			n, err := parseMemory(v)
			if err != nil || n < 1<<20 {
				return fmt.Errorf("argument must be a memory value of at least 1mb")
			}
			s.updateConfig(func(c *Config) { c.ClientQueryBufferLimit = n })
			return nil
		}},
	{name: "slowlog-log-slower-than",
		get: func(s *Server) string { return strconv.FormatInt(s.slowlog.threshold.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("argument couldn't be parsed into an integer")
			}
			s.slowlog.threshold.Store(n)
			return nil
		}},
	{name: "slowlog-max-len",
		get: func(s *Server) string { return strconv.FormatInt(s.slowlog.maxLen.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("argument must be between 0 and 9223372036854775807 inclusive")
			}
			s.slowlog.maxLen.Store(n)
			return nil
		}},
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// parseYesNo parses a Redis boolean setting, with CONFIG SET's error text.
func parseYesNo(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("argument must be 'yes' or 'no'")
}

func (s *Server) updateConfig(fn func(*Config)) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	fn(&s.cfg)
}

// parseMemory parses a Redis memory value: 1024, 1k, 1kb, 1m, 1mb, 1g, 1gb.
func parseMemory(v string) (int64, error) {
	v = strings.ToLower(v)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad memory value")
	}
	return n * mult, nil
}

func cmdConfig(c *call) {
	switch sub := strings.ToLower(c.argStr(1)); {
	case sub == "get" && c.nargs() >= 3:
		c.configGet()
	case sub == "set" && c.nargs() >= 4:
		if c.nargs()%2 != 0 {
			c.syntaxError()
			return
		}
		c.configSet()
	case sub == "resetstat" && c.nargs() == 2:
		c.s.resetStats()
		c.ok()
	case sub == "rewrite" && c.nargs() == 2:
		c.errorf("ERR The server is running without a config file")
	case sub == "help" && c.nargs() == 2:
		c.helpReply("CONFIG", "GET <pattern>", "SET <directive> <value>", "RESETSTAT", "REWRITE")
	default:
		if sub == "get" || sub == "set" || sub == "resetstat" || sub == "rewrite" {
			c.errorf(errArity("config|" + sub))
			return
		}
		c.errorf(errUnknownSubcommand("config", c.argStr(1)))
	}
}

// configGet answers CONFIG GET as Redis 7.0 does: a name without glob
// characters is looked up case-insensitively and echoed as given; a
// pattern matches names case-insensitively. Each name appears once.
func (c *call) configGet() {
	var out [][]byte
	seen := map[string]bool{}
	add := func(name string, p configParam) {
		if !seen[name] {
			seen[name] = true
			out = append(out, []byte(name), []byte(p.get(c.s)))
		}
	}
	for _, arg := range c.args[2:] {
		pat := strings.ToLower(string(arg))
		if !strings.ContainsAny(pat, "*?[") {
			if i := slices.IndexFunc(configParams, func(p configParam) bool { return p.name == pat }); i >= 0 {
				add(string(arg), configParams[i])
			}
			continue
		}
		for _, p := range configParams {
			if keyspace.MatchPattern(pat, []byte(p.name)) {
				add(p.name, p)
			}
		}
	}
	c.bulks(out)
}

// configSet applies every pair or none: all are checked first.
func (c *call) configSet() {
	type change struct {
		p configParam
		v string
	}
	var changes []change
	for i := 2; i+1 < c.nargs(); i += 2 {
		name := strings.ToLower(c.argStr(i))
		idx := slices.IndexFunc(configParams, func(p configParam) bool { return p.name == name })
		if idx < 0 {
			c.errorf(fmt.Sprintf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", clip(c.argStr(i))))
			return
		}
		p := configParams[idx]
		if slices.ContainsFunc(changes, func(ch change) bool { return ch.p.name == p.name }) {
			c.errorf(fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter", name))
			return
		}
		if p.set == nil {
			c.errorf(fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", name))
			return
		}
		changes = append(changes, change{p, c.argStr(i + 1)})
	}
	for _, ch := range changes {
		if err := ch.p.set(c.s, ch.v); err != nil {
			c.errorf(fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - %v", ch.p.name, err))
			return
		}
	}
	c.ok()
}

func (s *Server) resetStats() {
	s.stats.commands.Store(0)
	s.stats.connections.Store(0)
	s.stats.rejected.Store(0)
	s.stats.netIn.Store(0)
	s.stats.netOut.Store(0)
	s.stats.keyspaceHit.Store(0)
	s.stats.keyspaceMis.Store(0)
	for i := range s.cmdStats {
		s.cmdStats[i].calls.Store(0)
		s.cmdStats[i].usec.Store(0)
		s.cmdStats[i].failed.Store(0)
		s.cmdStats[i].rejected.Store(0)
	}
}
