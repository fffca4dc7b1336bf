package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ltmRun carries one run of the ltm experiment from phase to phase.
type ltmRun struct {
	cfg         *ltmConfig
	env         *Env
	srv         *Server
	metricsAddr string
	rss         *rssSampler
	loaded      atomic.Int64 // keys sent by the load so far

	loadRes     *LoadResult
	loadInfo    map[string]string // INFO at the end of the load
	settleTime  time.Duration
	settled     bool
	settledInfo map[string]string
	phases      []readPhase
	space       spaceFigures
}

// valueSource hands out incompressible values: slices of one random
// buffer at offsets spread far apart, so the SSTs' S2 compression finds
// nothing to shrink and the bucket's size reflects 1 KB values, not runs
// of a repeated byte.
type valueSource struct {
	buf  []byte
	size int
}

func newValueSource(size int) *valueSource {
	const span = 1 << 20
	buf := make([]byte, span+size)
	rng := rand.New(rand.NewPCG(8, 1))
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	return &valueSource{buf: buf, size: size}
}

func (v *valueSource) value(i uint64) []byte {
	off := (i * 0x9E3779B97F4A7C15 >> 20) % uint64(len(v.buf)-v.size)
	return v.buf[off : off+uint64(v.size)]
}

// setKeys is a Drive op whose i-th call sends the pipeline of SETs of keys
// i*pipe up to (i+1)*pipe, below n, with the load's values; Drive's Total
// for all n keys is (n+pipe-1)/pipe.
func setKeys(vals *valueSource, pipe, n uint64, sent func(int)) Op {
	return func(c *Conn, _ int, i uint64, _ *rand.Rand) int {
		k := 0
		for j := i * pipe; j < min((i+1)*pipe, n); j++ {
			c.Send("SET", ltmKey(j), vals.value(j))
			k++
		}
		sent(k)
		return k
	}
}

// load writes every key once with pipelined SETs.
func (r *ltmRun) load(ctx context.Context) error {
	cfg := r.cfg
	pipe := uint64(cfg.pipeline)
	total := (uint64(cfg.keys) + pipe - 1) / pipe
	fmt.Fprintf(r.env.Log, "ltm: loading %d keys × %d B (%.2f GB) on %d conns, pipeline %d\n",
		cfg.keys, cfg.value, float64(cfg.logicalBytes())/1e9, cfg.loadConns, cfg.pipeline)
	r.rss.setPhase("load")
	res, err := Drive(ctx, DriveOptions{Addr: r.srv.Addr, Conns: cfg.loadConns, Total: total, Seed: 1},
		setKeys(newValueSource(cfg.value), pipe, uint64(cfg.keys), func(n int) { r.loaded.Add(int64(n)) }))
	if err != nil {
		return err
	}
	if res.FirstErr != nil || res.Ops != uint64(cfg.keys) {
		return fmt.Errorf("load: %d of %d SETs, %d errors, first %v", res.Ops, cfg.keys, res.Errors, res.FirstErr)
	}
	r.loadRes = res
	if r.loadInfo, err = r.srv.Info(); err != nil {
		return err
	}
	fmt.Fprintf(r.env.Log, "ltm: loaded in %v (%.1f MB/s); L0 %s, runs %s\n", res.Elapsed.Round(time.Second),
		float64(cfg.logicalBytes())/1e6/res.Elapsed.Seconds(), r.loadInfo["lsm_l0_ssts"], r.loadInfo["lsm_sorted_runs"])
	return nil
}

// settle waits until compaction is done with the load: L0 below the
// compaction trigger and the server nearly idle (compaction is the only
// thing it could be busy with) for 10 s in a row, or settleMax.
func (r *ltmRun) settle(ctx context.Context) error {
	r.rss.setPhase("settle")
	start := time.Now()
	idleSince := time.Time{}
	lastCPU, _ := r.srv.cpuTime() // 0 if /proc cannot say: the server then looks busy
	for time.Since(start) < r.cfg.settleMax {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
		info, err := r.srv.Info()
		if err != nil {
			return err
		}
		cpu, _ := r.srv.cpuTime()
		busy := float64(cpu-lastCPU) / float64(2*time.Second)
		lastCPU = cpu
		l0, _ := strconv.Atoi(info["lsm_l0_ssts"])
		if l0 >= 4 || busy > 0.05 {
			idleSince = time.Time{}
			continue
		}
		if idleSince.IsZero() {
			idleSince = time.Now()
		}
		if time.Since(idleSince) >= 10*time.Second {
			r.settled = true
			break
		}
	}
	r.settleTime = time.Since(start)
	var err error
	r.settledInfo, err = r.srv.Info()
	fmt.Fprintf(r.env.Log, "ltm: compaction settled=%v after %v; L0 %s, runs %s\n", r.settled,
		r.settleTime.Round(time.Second), r.settledInfo["lsm_l0_ssts"], r.settledInfo["lsm_sorted_runs"])
	return err
}

// profileHeap saves the server's heap profile as ltm-heap-<when>.pb.gz in
// the -pprof directory, if one was given.
func (r *ltmRun) profileHeap(when string) {
	r.saveProfile("/debug/pprof/heap", "heap-"+when)
}

func (r *ltmRun) saveProfile(path, name string) {
	if r.cfg.pprofDir == "" {
		return
	}
	if err := r.fetchProfile(path, filepath.Join(r.cfg.pprofDir, "ltm-"+name+".pb.gz")); err != nil {
		fmt.Fprintf(r.env.Log, "ltm: profile %s: %v\n", name, err)
	}
}

func (r *ltmRun) fetchProfile(path, file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	resp, err := http.Get("http://" + r.metricsAddr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rssSample is the server's RSS at one moment.
type rssSample struct {
	at       time.Duration // since the run started
	phase    string
	loadedGB float64 // logical data loaded so far
	rss      int64
}

// rssSampler reads the server's VmRSS every second.
type rssSampler struct {
	mu      sync.Mutex
	phase   string
	samples []rssSample
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

func startRSSSampler(srv *Server, loaded *atomic.Int64, kv int64) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	start := time.Now()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
			}
			smp := rssSample{at: time.Since(start), loadedGB: float64(loaded.Load()*kv) / 1e9, rss: srv.RSS()}
			s.mu.Lock()
			smp.phase = s.phase
			s.samples = append(s.samples, smp)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *rssSampler) setPhase(p string) {
	s.mu.Lock()
	s.phase = p
	s.mu.Unlock()
}

func (s *rssSampler) stop() {
	s.once.Do(func() { close(s.done) })
	s.wg.Wait()
}

// peak is the highest sampled RSS in a phase ("" for all).
func (s *rssSampler) peak(phase string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var p int64
	for _, x := range s.samples {
		if phase == "" || x.phase == phase {
			p = max(p, x.rss)
		}
	}
	return p
}
