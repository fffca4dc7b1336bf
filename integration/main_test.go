package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
)

const module = "github.com/stratakv/strata"

// TestMain stops the shared MinIO and removes the built binary after the
// tests (blobtest.Main, plus the binary).
func TestMain(m *testing.M) {
	code := m.Run()
	blobtest.Cleanup()
	for i := range builds {
		if builds[i].dir != "" {
			_ = os.RemoveAll(builds[i].dir)
		}
	}
	os.Exit(code)
}

// builds are the strata binaries of this test binary, built on first use:
// [0] with -race when the tests run with it, [1] never with -race (for
// load tests, where the race detector's cost would swamp what they show).
var builds [2]struct {
	once sync.Once
	dir  string // removed by TestMain
	bin  string
	err  error
}

// strataBinary returns the path of the strata binary built from this module
// (invariant 1), with -race when the tests run with it, building it on the
// first call.
func strataBinary(t testing.TB) string { return buildStrata(t, 0, raceEnabled()) }

// strataBinaryNoRace returns a strata binary built without -race.
func strataBinaryNoRace(t testing.TB) string { return buildStrata(t, 1, false) }

func buildStrata(t testing.TB, slot int, race bool) string {
	t.Helper()
	goBin := blobtest.RequireCommand(t, "go")
	b := &builds[slot]
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "strata-integration-")
		if b.err != nil {
			return
		}
		bin := filepath.Join(b.dir, "strata")
		args := []string{"build", "-o", bin}
		if race {
			args = append(args, "-race")
		}
		start := time.Now()
		out, err := exec.Command(goBin, append(args, module+"/cmd/strata")...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			return
		}
		b.bin = bin
		fmt.Fprintf(os.Stderr, "integration: built %s (race=%v) in %v\n", bin, race, time.Since(start).Round(time.Millisecond))
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// raceEnabled reports whether this test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// child is a process started by a test, with its stdout and stderr
// captured.
type child struct {
	name   string
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{} // closed once cmd has been waited for
}

// startChild starts bin with args and env added to the test's environment.
// The child is killed, with its process group, when the test ends
// (invariant 2).
func startChild(t *testing.T, name string, env []string, bin string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...) // later entries win
	c := &child{name: name, cmd: cmd, out: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(c.exited) }()
	t.Cleanup(c.kill)
	return c
}

// kill SIGKILLs the child's process group and waits for the child.
func (c *child) kill() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) // Setpgid: the group is named after the leader
	<-c.exited
}

// running reports whether the child has not exited yet.
func (c *child) running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and returns the exit code, or an error if the child
// does not exit within timeout (it is then killed).
func (c *child) stop(timeout time.Duration) (int, error) {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return c.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		c.kill()
		return -1, fmt.Errorf("%s did not exit within %v of SIGTERM", c.name, timeout)
	}
}

// waitFor waits until the child's output has a line containing s.
func (c *child) waitFor(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(c.out.String(), s) {
			return nil
		}
		if !c.running() {
			return fmt.Errorf("%s exited (%v) before logging %q", c.name, c.cmd.ProcessState, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not log %q within %v", c.name, s, timeout)
}

// tail returns the last n lines of the child's output, for failure messages.
func (c *child) tail(n int) string {
	lines := strings.Split(strings.TrimRight(c.out.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// syncBuffer is an io.Writer safe for concurrent use, for child output.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// logLines returns the lines of slog text output whose message is msg.
func logLines(out, msg string) []string {
	want := "msg=" + msg
	if strings.ContainsAny(msg, " =\"") {
		want = fmt.Sprintf("msg=%q", msg)
	}
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " "+want+" ") || strings.HasSuffix(line, " "+want) {
			lines = append(lines, line)
		}
	}
	return lines
}

// logField returns the value of key in one line of slog text output, or "".
func logField(line, key string) string {
	re := regexp.MustCompile(`(?:^| )` + regexp.QuoteMeta(key) + `=("(?:[^"\\]|\\.)*"|\S*)`)
	m := re.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `"`)
}
