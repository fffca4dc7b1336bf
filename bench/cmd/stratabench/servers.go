package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is a strata server or redis-server process on a loopback port.
type Server struct {
	Name string
	Addr string
	Dir  string // its data directory
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

var builds struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// strataBinary builds cmd/strata of the main module (without -race) once.
func strataBinary() (string, error) {
	builds.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			builds.err = err
			return
		}
		if builds.dir, builds.err = os.MkdirTemp("", "stratabench-"); builds.err != nil {
			return
		}
		builds.bin = filepath.Join(builds.dir, "strata")
		cmd := exec.Command("go", "build", "-o", builds.bin, "./cmd/strata")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			builds.err = fmt.Errorf("go build ./cmd/strata: %v\n%s", err, out)
		}
	})
	return builds.bin, builds.err
}

// cleanupAtExit removes what a run leaves for its end: the strata build and
// the data directories of servers stopped with StopKeepingData.
func cleanupAtExit() {
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
	}
	// A later run in the same process (the package's tests) builds again.
	builds.once, builds.dir, builds.bin, builds.err = sync.Once{}, "", "", nil
	removeKept()
}

// removeKept removes the data directories kept so far.
func removeKept() {
	kept.Lock()
	defer kept.Unlock()
	for _, d := range kept.dirs {
		_ = os.RemoveAll(d)
	}
	kept.dirs = nil
}

// kept are data directories of stopped servers left for cleanupAtExit: on
// ext4 without a journal (this machine's /), creating a file skips, one
// inode-table lookup each, every inode freed in the last minutes, so
// deleting a server's thousands of files just before the next server starts
// would tax that server's file creations (a durable strata creates a file
// per WAL object): 23-30k durable SETs/s against 31-42k.
var kept struct {
	sync.Mutex
	dirs []string
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartStrata runs `strata server --port P --dir DIR args...` (DIR a new
// temp directory unless args name a bucket) with env added, and waits
// until it answers PING. Its log goes to DIR/../strata.log.
func StartStrata(ctx context.Context, env []string, args ...string) (*Server, error) {
	return StartStrataOn(ctx, "", env, args...)
}

// StartStrataOn is StartStrata with the server confined to cpus (a
// taskset(1) list; empty: anywhere). Go sizes GOMAXPROCS to the CPUs a
// process may use, so "0" gives strata one processor.
func StartStrataOn(ctx context.Context, cpus string, env []string, args ...string) (*Server, error) {
	bin, err := strataBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "stratabench-data-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	full := append([]string{"server", "--port", strconv.Itoa(port), "--dir", filepath.Join(dir, "data")}, args...)
	bin, full = onCPUs(cpus, bin, full)
	return start(ctx, "strata", dir, port, env, bin, full...)
}

// StartRedis runs redis-server with AOF on and the given appendfsync
// (always or everysec), or off if appendfsync is empty; RDB snapshots off.
func StartRedis(ctx context.Context, appendfsync string) (*Server, error) {
	return StartRedisOn(ctx, "", appendfsync)
}

// StartRedisOn is StartRedis confined to cpus (empty: anywhere).
func StartRedisOn(ctx context.Context, cpus, appendfsync string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (apt-get install redis-server): %w", err)
	}
	dir, err := os.MkdirTemp("", "stratabench-redis-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	aof, name := []string{"--appendonly", "yes", "--appendfsync", appendfsync}, "redis-"+appendfsync
	if appendfsync == "" {
		aof, name = []string{"--appendonly", "no"}, "redis-noaof"
	}
	bin, args := onCPUs(cpus, bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--protected-mode", "no"}, aof...))
	return start(ctx, name, dir, port, nil, bin, args...)
}

// onCPUs runs bin args under taskset -c cpus, unless cpus is empty.
func onCPUs(cpus, bin string, args []string) (string, []string) {
	if cpus == "" {
		return bin, args
	}
	return "taskset", append([]string{"-c", cpus, bin}, args...)
}

func start(ctx context.Context, name, dir string, port int, env []string, bin string, args ...string) (*Server, error) {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	s := &Server{Name: name, Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, cmd: cmd, log: logf, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited at startup; log %s", name, logf.Name())
		default:
		}
		if c, err := Dial(s.Addr); err == nil {
			_, err := c.Do("PING")
			c.Close()
			if err == nil {
				return s, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("%s on %s did not answer PING", name, s.Addr)
}

// Stop ends the process (SIGTERM, then SIGKILL after a minute) and removes
// its data directory.
func (s *Server) Stop() {
	s.halt()
	_ = os.RemoveAll(s.Dir)
}

// StopKeepingData ends the process like Stop and leaves its data directory
// until stratabench exits (see kept).
func (s *Server) StopKeepingData() {
	s.halt()
	kept.Lock()
	kept.dirs = append(kept.dirs, s.Dir)
	kept.Unlock()
}

func (s *Server) halt() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.log.Close()
}

// procStatus returns a field of /proc/PID/status in bytes (VmRSS, VmHWM).
func (s *Server) procStatus(field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpuTime is the processor time the server has used so far, user and
// system, every thread's (io_uring's workers too): for figures per request
// that hold up on a machine whose speed drifts, where requests per second
// do not. ok is false if /proc cannot say.
func (s *Server) cpuTime() (time.Duration, bool) { return procCPU(s.cmd.Process.Pid) }

// procCPU is utime + stime of process pid from /proc/PID/stat. The kernel
// counts them in ticks of USER_HZ, 100 a second on every Linux
// architecture, so a figure is good to 10 ms.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces; the fields after
	// it start with the state (field 3), so utime and stime (14 and 15)
	// are its 12th and 13th.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+k) * (time.Second / 100), true
}

// RSS is the resident set size now; PeakRSS the highest it has been.
func (s *Server) RSS() int64     { return s.procStatus("VmRSS") }
func (s *Server) PeakRSS() int64 { return s.procStatus("VmHWM") }

// DirBytes is the size of the files under the server's data directory.
func (s *Server) DirBytes() int64 {
	var n int64
	_ = filepath.Walk(s.Dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// Info returns the fields of INFO strata (the engine, compactor, object-store
// and disk-cache sections). Not INFO everything: its keyspace section counts
// keys by scanning the whole store, which would skew what is measured.
func (s *Server) Info() (map[string]string, error) {
	c, err := Dial(s.Addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.Do("INFO", "strata")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(v.([]byte)), "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok {
			out[k] = val
		}
	}
	return out, nil
}
