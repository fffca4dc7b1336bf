package resp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/lsm"
	"github.com/stratakv/strata/lsm/sst"
)

// Config configures a Server. Names follow redis-server's settings.
type Config struct {
	// RequirePass, when set, makes clients AUTH before any other command.
	RequirePass string
	// ProtectedMode, while RequirePass is empty, refuses clients that
	// connect from anywhere but the loopback interface (Redis's
	// protected-mode). cmd/strata turns it on by default, as redis-server
	// does; the zero Config leaves it off.
	ProtectedMode bool
	// TLS describes the TLS port, for CONFIG GET; the caller listens on it.
	TLS TLSOptions
	// MaxClients bounds connected clients. Default 10000.
	MaxClients int
	// AppendFsync is "always" (default: replies to writes wait until the
	// writes are durable) or "everysec" (replies at once; a crash may lose
	// the last WAL flush interval of acknowledged writes).
	AppendFsync string
	// ProtoMaxBulkLen bounds one argument. Default 512 MiB.
	ProtoMaxBulkLen int64
	// ClientQueryBufferLimit bounds one command's bytes. Default 1 GiB.
	ClientQueryBufferLimit int64
	// Facts for INFO and CONFIG GET, set by the caller.
	Port   int
	Bind   string
	Dir    string
	Bucket string // a description, never with credentials

	// Engine and Stats, when set, let INFO report the LSM shape and the
	// object store's request counts.
	Extra func() []InfoSection
	// Shutdown is called by the SHUTDOWN command; nil: SHUTDOWN refuses.
	Shutdown func()
	// Pacer, if set, is told as requests arrive, so that the engine's
	// background work sharing it steps aside for clients (see sst.Pacer).
	Pacer *sst.Pacer

	Logger *slog.Logger
}

// InfoSection is one extra section of INFO.
type InfoSection struct {
	Name   string
	Fields [][2]string
}

func (c *Config) ensureDefaults() {
	if c.MaxClients <= 0 {
		c.MaxClients = 10000
	}
	if c.AppendFsync == "" {
		c.AppendFsync = "always"
	}
	if c.ProtoMaxBulkLen <= 0 {
		c.ProtoMaxBulkLen = 512 << 20
	}
	if c.ClientQueryBufferLimit <= 0 {
		c.ClientQueryBufferLimit = 1 << 30
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.TLS.ensureDefaults()
}

// Validate reports a setting out of its range.
func (c *Config) Validate() error {
	if c.AppendFsync != "always" && c.AppendFsync != "everysec" && c.AppendFsync != "no" {
		return fmt.Errorf("appendfsync must be always, everysec or no, not %q", c.AppendFsync)
	}
	return c.TLS.Validate()
}

// Server serves the Redis protocol over one keyspace.
type Server struct {
	db    *lsm.DB
	store *keyspace.Store
	log   *slog.Logger
	pacer *sst.Pacer // fixed at New

	cfgMu sync.RWMutex
	cfg   Config

	ctx    context.Context // canceled by Close: wakes blocked clients
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners []net.Listener
	clients   map[uint64]*client
	conns     sync.WaitGroup
	closing   atomic.Bool
	nextID    atomic.Uint64

	blocked  blockRegistry
	pubsub   pubsubRegistry
	monitors monitorSet

	stats     serverStats
	started   time.Time
	lastSave  atomic.Int64
	slowlog   slowlog
	cmdStats  []cmdStat
	durableMu sync.Mutex
	replier   replier
	keyCount  keyCounter
}

// New returns a Server over store, whose engine is db. The store should be
// opened Async: the server decides when replies wait for durability.
func New(db *lsm.DB, store *keyspace.Store, cfg Config) (*Server, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		db: db, store: store, log: cfg.Logger, pacer: cfg.Pacer, cfg: cfg, ctx: ctx, cancel: cancel,
		clients: make(map[uint64]*client), started: time.Now(),
		cmdStats: make([]cmdStat, len(commandList)),
		keyCount: keyCounter{budget: countBudget, spacing: countSpacing, large: countLarge},
	}
	s.lastSave.Store(time.Now().Unix())
	s.blocked.init()
	s.pubsub.init()
	s.slowlog.init()
	return s, nil
}

func (s *Server) config() Config {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg
}

// Serve accepts connections on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.listeners = append(s.listeners, ln)
	s.mu.Unlock()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.accept(nc)
	}
}

// accept registers a new connection, or refuses it over maxclients or by
// protected mode.
func (s *Server) accept(nc net.Conn) {
	tcp := nc
	if tc, ok := nc.(*tls.Conn); ok {
		tcp = tc.NetConn()
	}
	if tc, ok := tcp.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		tc.SetKeepAlive(true)
		tc.SetKeepAlivePeriod(300 * time.Second)
	}
	cfg := s.config()
	if cfg.ProtectedMode && cfg.RequirePass == "" && !isLoopback(nc.RemoteAddr()) {
		s.stats.connections.Add(1) // Redis counts it: it refuses after accepting
		s.stats.rejected.Add(1)
		go refuse(nc, msgDenied)
		return
	}
	s.mu.Lock()
	if s.closing.Load() || len(s.clients) >= cfg.MaxClients {
		s.mu.Unlock()
		s.stats.rejected.Add(1)
		go refuse(nc, msgMaxClients)
		return
	}
	c := newClient(s, nc, cfg)
	s.clients[c.id] = c
	s.conns.Add(1)
	s.mu.Unlock()
	s.stats.connections.Add(1)
	go c.serve()
}

// refuse sends a refused connection its error and closes it. It runs on
// its own goroutine because on a TLS port the write first completes the
// handshake, which a slow or silent peer must not hold the accept loop
// for; the deadline bounds it.
func refuse(nc net.Conn, msg string) {
	nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write([]byte("-" + msg + "\r\n")); err == nil {
		// Closing with unread input (the client's first command) makes
		// the kernel send a reset, which can discard the refusal from the
		// client's receive buffer before it reads it. Half-close and drain
		// first; the deadline bounds both.
		if cw, ok := nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
		}
	}
	nc.Close()
}

// isLoopback reports whether addr is on the loopback interface (127.0.0.0/8
// or ::1), the only clients protected mode serves.
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

func (s *Server) removeClient(c *client) {
	s.mu.Lock()
	delete(s.clients, c.id)
	s.mu.Unlock()
	s.conns.Done()
}

// Close stops accepting, lets every client finish the command it is
// running (blocked clients are woken with a null reply), sends the replies
// already computed, and closes the connections. It waits for them up to
// ctx's deadline, then closes the rest.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	for _, ln := range s.listeners {
		ln.Close()
	}
	clients := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	s.cancel()
	for _, c := range clients {
		c.stopReading()
	}
	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		for _, c := range clients {
			c.nc.Close()
		}
		<-done
		return ctx.Err()
	}
}

// Addr returns the address of the first listener, for tests.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.listeners) == 0 {
		return nil
	}
	return s.listeners[0].Addr()
}

// serverStats are the counters INFO stats reports.
type serverStats struct {
	connections atomic.Uint64
	rejected    atomic.Uint64
	commands    atomic.Uint64
	netIn       atomic.Uint64
	netOut      atomic.Uint64
	keyspaceHit atomic.Uint64
	keyspaceMis atomic.Uint64
}

// cmdStat counts one command's calls and time, for INFO commandstats.
type cmdStat struct {
	calls    atomic.Uint64
	usec     atomic.Uint64
	failed   atomic.Uint64
	rejected atomic.Uint64
}
