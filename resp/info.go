package resp

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratakv/strata/lsm"
)

// defaultSections are INFO's sections without an argument, in Redis's
// order; "all" adds commandstats, "everything" too.
var defaultSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "keyspace", "strata"}

func cmdInfo(c *call) {
	want := map[string]bool{}
	for _, a := range c.args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := want["all"] || want["everything"]
	def := len(want) == 0 || want["default"]
	var b strings.Builder
	for _, sec := range append(slices.Clone(defaultSections), "commandstats") {
		if !(all || want[sec] || def && sec != "commandstats") {
			continue
		}
		fields := c.s.infoSection(c, sec)
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		fmt.Fprintf(&b, "# %s\r\n", strings.ToUpper(sec[:1])+sec[1:])
		for _, f := range fields {
			fmt.Fprintf(&b, "%s:%s\r\n", f[0], f[1])
		}
	}
	if cfg := c.s.config(); cfg.Extra != nil && (all || def || want["strata"]) {
		// Sections the binary adds (the compactor's, when in process).
		for _, sec := range cfg.Extra() {
			if b.Len() > 0 {
				b.WriteString("\r\n")
			}
			fmt.Fprintf(&b, "# %s\r\n", sec.Name)
			for _, f := range sec.Fields {
				fmt.Fprintf(&b, "%s:%s\r\n", f[0], f[1])
			}
		}
	}
	c.bulkString(b.String())
}

func (s *Server) infoSection(c *call, sec string) [][2]string {
	kv := func(pairs ...any) [][2]string {
		out := make([][2]string, 0, len(pairs)/2)
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, [2]string{fmt.Sprint(pairs[i]), fmt.Sprint(pairs[i+1])})
		}
		return out
	}
	cfg := s.config()
	switch sec {
	case "server":
		up := time.Since(s.started)
		return kv("redis_version", redisVersion, "strata_version", Version, "redis_mode", "standalone",
			"os", runtime.GOOS+" "+runtime.GOARCH, "arch_bits", 64, "go_version", runtime.Version(),
			"process_id", os.Getpid(), "tcp_port", cfg.Port,
			"server_time_usec", time.Now().UnixMicro(), "uptime_in_seconds", int64(up.Seconds()),
			"uptime_in_days", int64(up.Hours()/24), "executable", executable(), "config_file", "")
	case "clients":
		s.mu.Lock()
		n := len(s.clients)
		s.mu.Unlock()
		return kv("connected_clients", n, "maxclients", cfg.MaxClients, "blocked_clients", s.blocked.n.Load(),
			"pubsub_clients", s.pubsubClients(), "watching_clients", s.watchingClients())
	case "memory":
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return kv("used_memory", m.HeapAlloc, "used_memory_human", humanBytes(m.HeapAlloc),
			"used_memory_rss", m.Sys, "used_memory_rss_human", humanBytes(m.Sys),
			"used_memory_peak", m.HeapSys, "maxmemory", 0, "maxmemory_policy", "noeviction",
			"mem_allocator", "go")
	case "persistence":
		mt := s.db.Metrics()
		return kv("loading", 0, "rdb_changes_since_last_save", 0, "rdb_bgsave_in_progress", 0,
			"rdb_last_save_time", s.lastSave.Load(), "rdb_last_bgsave_status", "ok",
			"aof_enabled", 1, "aof_rewrite_in_progress", 0, "aof_last_write_status", "ok",
			"appendfsync", cfg.AppendFsync, "memtable_flushes", mt.Flushes)
	case "stats":
		return kv("total_connections_received", s.stats.connections.Load(),
			"total_commands_processed", s.stats.commands.Load(),
			"total_net_input_bytes", s.stats.netIn.Load(), "total_net_output_bytes", s.stats.netOut.Load(),
			"rejected_connections", s.stats.rejected.Load(), "expired_keys", s.store.Expired(),
			"evicted_keys", 0, "keyspace_hits", s.stats.keyspaceHit.Load(),
			"keyspace_misses", s.stats.keyspaceMis.Load(), "pubsub_channels", s.pubsubChannels(),
			"pubsub_patterns", s.pubsubPatterns())
	case "replication":
		return kv("role", "master", "connected_slaves", 0)
	case "cpu":
		return kv("used_cpu_sys", "0.000000", "used_cpu_user", "0.000000")
	case "keyspace":
		counts, err := s.keyCounts(c.ctx)
		if err != nil {
			return nil
		}
		var out [][2]string
		for db, n := range counts {
			if n.keys > 0 {
				out = append(out, [2]string{fmt.Sprintf("db%d", db), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", n.keys, n.expires)})
			}
		}
		return out
	case "strata":
		return append(append(kv("bucket", cfg.Bucket), FigureFields(s.db.Metrics().Figures())...),
			FigureFields(s.KeyCountFigures())...)
	case "commandstats":
		var out [][2]string
		for _, cmd := range commandList {
			st := &s.cmdStats[cmd.id]
			calls := st.calls.Load()
			if calls == 0 && st.rejected.Load() == 0 {
				continue
			}
			usec := st.usec.Load()
			per := 0.0
			if calls > 0 {
				per = float64(usec) / float64(calls)
			}
			out = append(out, [2]string{"cmdstat_" + cmd.name,
				fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
					calls, usec, per, st.rejected.Load(), st.failed.Load())})
		}
		return out
	}
	return nil
}

// FigureFields renders figures as INFO fields, under the names /metrics
// exports with a strata_ prefix: counters and gauges as numbers, histograms
// as <name>_count and <name>_sum (as Prometheus names them) and <name>_avg.
func FigureFields(figs []lsm.Figure) [][2]string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	out := make([][2]string, 0, len(figs)+4)
	for _, f := range figs {
		if f.Kind != lsm.Histogram {
			out = append(out, [2]string{f.Name, num(f.Value)})
			continue
		}
		out = append(out, [2]string{f.Name + "_count", strconv.FormatUint(f.Hist.Count, 10)},
			[2]string{f.Name + "_sum", num(f.Hist.Sum)},
			[2]string{f.Name + "_avg", avg(f.Hist.Sum, f.Hist.Count)})
	}
	return out
}

// Version is Strata's version, set by the binary from its build info.
var Version = "(devel)"

func executable() string {
	p, _ := os.Executable()
	return p
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

func (s *Server) pubsubChannels() int {
	s.pubsub.mu.RLock()
	defer s.pubsub.mu.RUnlock()
	return len(s.pubsub.channels)
}

func (s *Server) pubsubPatterns() int {
	s.pubsub.mu.RLock()
	defer s.pubsub.mu.RUnlock()
	return len(s.pubsub.patterns)
}

func (s *Server) pubsubClients() int {
	s.pubsub.mu.RLock()
	defer s.pubsub.mu.RUnlock()
	seen := map[*client]bool{}
	for _, m := range s.pubsub.channels {
		for c := range m {
			seen[c] = true
		}
	}
	for _, m := range s.pubsub.patterns {
		for c := range m {
			seen[c] = true
		}
	}
	return len(seen)
}

func (s *Server) watchingClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.clients {
		if c.watching.Load() {
			n++
		}
	}
	return n
}

// avg formats sum/n with two decimals, 0 when there is nothing to average.
func avg(sum float64, n uint64) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%.6f", sum/float64(n))
}
