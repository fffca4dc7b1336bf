package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// strataBin returns the strata binary the campaigns run: $STRATA_BIN when
// set, else one built from this module (without -race: the campaigns load
// it) into a temporary directory, once per process.
func strataBin() (string, error) {
	built.once.Do(func() {
		if bin := os.Getenv("STRATA_BIN"); bin != "" {
			built.bin = bin
			return
		}
		dir, err := os.MkdirTemp("", "strata-chaos-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		bin := filepath.Join(dir, "strata")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/stratakv/strata/cmd/strata").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build ./cmd/strata: %v\n%s", err, out)
			return
		}
		built.bin = bin
	})
	return built.bin, built.err
}

var built struct {
	once sync.Once
	dir  string // the temporary directory strataBin built into, if any
	bin  string
	err  error
}

// removeBuild removes the binary strataBin built, once no campaign needs it.
func removeBuild() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// server is a `strata server` process.
type server struct {
	Port   int
	Addr   string // 127.0.0.1:port
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
}

// startServer starts `strata server --port P args...` with env added to this
// process's environment and waits until it answers PING.
func startServer(ctx context.Context, port int, env []string, args ...string) (*server, error) {
	bin, err := strataBin()
	if err != nil {
		return nil, err
	}
	args = append([]string{"server", "--port", strconv.Itoa(port)}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	s := &server{Port: port, Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		s.Kill()
		return nil, fmt.Errorf("%w\nserver output:\n%s", err, s.Output())
	}
	return s, nil
}

// waitReady waits until the server answers PING with +PONG.
func (s *server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("strata server exited during startup: %v", s.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			n, _ := c.Read(buf)
			c.Close()
			if string(buf[:n]) == "+PONG\r\n" {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("strata server on %s not ready after %v", s.Addr, timeout)
}

// Kill SIGKILLs the server's process group and waits for it: a crash.
func (s *server) Kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// Stop sends SIGTERM and waits up to timeout for a graceful exit, then kills.
func (s *server) Stop(timeout time.Duration) error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if code := s.cmd.ProcessState.ExitCode(); code != 0 {
			return fmt.Errorf("strata server exited with %d", code)
		}
		return nil
	case <-time.After(timeout):
		s.Kill()
		return fmt.Errorf("strata server did not exit within %v of SIGTERM", timeout)
	}
}

// Exited is closed when the process has exited.
func (s *server) Exited() <-chan struct{} { return s.exited }

// PID is the server's process id.
func (s *server) PID() int { return s.cmd.Process.Pid }

// Output is everything the server wrote to stdout and stderr.
func (s *server) Output() string { return s.out.String() }

// RSS is the server's resident set size in bytes, from /proc.
func (s *server) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", s.PID()))
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, fmt.Errorf("short /proc statm: %q", b)
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	return pages * int64(os.Getpagesize()), err
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
