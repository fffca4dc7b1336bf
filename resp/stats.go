package resp

// CommandStat is one command's counters, as INFO commandstats reports them.
type CommandStat struct {
	Name     string // lower case
	Calls    uint64 // calls that ran, failed ones included
	Usec     uint64 // total time in those calls, microseconds
	Failed   uint64 // calls that ran and replied with an error
	Rejected uint64 // calls refused before running (arity, auth, unknown in MULTI...)
}

// CommandStats returns the counters of every command called or rejected
// since the start (or the last CONFIG RESETSTAT), in the command table's
// order. It only reads: the exporter at the edge (package metrics) calls it
// at scrape time.
func (s *Server) CommandStats() []CommandStat {
	var out []CommandStat
	for _, cmd := range commandList {
		st := &s.cmdStats[cmd.id]
		calls, rejected := st.calls.Load(), st.rejected.Load()
		if calls == 0 && rejected == 0 {
			continue
		}
		out = append(out, CommandStat{Name: cmd.name, Calls: calls, Usec: st.usec.Load(),
			Failed: st.failed.Load(), Rejected: rejected})
	}
	return out
}

// Clients returns the number of connected clients.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}
