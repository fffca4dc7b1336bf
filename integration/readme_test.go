package integration

// TestREADMECommands runs the commands README.md shows, so the README cannot
// drift from what the binary and the scripts do. Every line of a ```sh block
// is a command; each must have a runner in readmeRunners, keyed by its exact
// text, and every runner's key must still be in the README. The runners
// execute the command text through bash after the substitutions of
// readmeHarness.expand, which only move it onto free ports, a test bucket
// and the test's own binary; what each one checks is in its comment.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
)

// readmeRunner runs one README command in the harness.
type readmeRunner func(t *testing.T, h *readmeHarness, cmd string)

// readmeRunners are keyed by the command's exact README text, comment
// stripped, and run in README order.
var readmeRunners = map[string]readmeRunner{
	// Started as written (with the built binary), in a directory of its own
	// so ./data is the test's: it must serve, keep a workload through SAVE,
	// and exit 0 on SIGTERM. Its ./data is what `strata inspect` reads below.
	"go run ./cmd/strata server": func(t *testing.T, h *readmeHarness, cmd string) {
		srv := h.serve(t, "server", cmd)
		rdb := newClient(t, h.port)
		ctx := context.Background()
		for i := range 50 {
			must(t, rdb.Set(ctx, "readme:"+strconv.Itoa(i), "value-"+strconv.Itoa(i), 0).Err())
		}
		must(t, rdb.HSet(ctx, "readme:hash", "name", "strata").Err())
		must(t, rdb.Save(ctx).Err())
		h.stopOK(t, srv)
		if _, err := os.Stat(filepath.Join(h.work, "data")); err != nil {
			t.Errorf("no ./data after serving: %v", err)
		}
	},
	// The test command is what runs this test (.ci/run execs it); running it
	// here would recurse, so the check is that CI runs exactly this command.
	"scripts/test.sh": func(t *testing.T, h *readmeHarness, cmd string) {
		b, err := os.ReadFile(filepath.Join(h.root, ".ci", "run"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "exec "+cmd) {
			t.Errorf(".ci/run does not exec %s:\n%s", cmd, b)
		}
	},
	// Prints the endpoint of a live MinIO with the bucket; SIGTERM stops it.
	"scripts/minio.sh start": func(t *testing.T, h *readmeHarness, cmd string) {
		h.minio(t) // waits for the MinIO build scripts/test.sh runs beside the tests
		c := h.start(t, "minio.sh", cmd)
		if err := c.waitFor("running (pid", 90*time.Second); err != nil {
			t.Fatalf("%v\n%s", err, c.tail(20))
		}
		m := regexp.MustCompile(`endpoint:\s+(\S+)`).FindStringSubmatch(c.out.String())
		if m == nil {
			t.Fatalf("no endpoint printed:\n%s", c.out)
		}
		resp, err := http.Get("http://" + m[1] + "/minio/health/live")
		if err != nil {
			t.Fatalf("MinIO at the printed endpoint: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("MinIO health: %s", resp.Status)
		}
		_, _ = c.stop(15 * time.Second)
	},
	"printf 'port 7001\\nappendfsync everysec\\n' > strata.conf": func(t *testing.T, h *readmeHarness, cmd string) {
		h.run(t, cmd)
	},
	// The config file's appendfsync applies, its port is overridden by the flag.
	"strata server strata.conf --port 7000": func(t *testing.T, h *readmeHarness, cmd string) {
		srv := h.serve(t, "server strata.conf", cmd)
		rdb := newClient(t, h.altPort)
		got, err := rdb.ConfigGet(context.Background(), "appendfsync").Result()
		must(t, err)
		if got["appendfsync"] != "everysec" {
			t.Errorf("appendfsync from strata.conf: got %q, want everysec", got["appendfsync"])
		}
		h.stopOK(t, srv)
	},
	// No Docker engine here: TestCompose checks the file against the binary's
	// flags, and `docker compose config` where the plugin exists. What the
	// stack publishes is stood in for by a server with the same ports, for the
	// two commands that follow.
	"docker compose up -d --build": func(t *testing.T, h *readmeHarness, cmd string) {
		if exec.Command("docker", "compose", "version").Run() == nil {
			h.run(t, "docker compose -f "+filepath.Join(h.root, "docker-compose.yml")+" config -q")
		}
		h.standIn = h.serve(t, "compose stand-in", "strata server --dir compose-data --metrics-addr 127.0.0.1:9121")
	},
	"redis-cli -p 6379 ping": func(t *testing.T, h *readmeHarness, cmd string) {
		if out := h.run(t, cmd); strings.TrimSpace(out) != "PONG" {
			t.Errorf("got %q, want PONG", out)
		}
	},
	"curl -s localhost:9121/metrics": func(t *testing.T, h *readmeHarness, cmd string) {
		out := h.run(t, cmd)
		for _, want := range []string{"strata_connected_clients", "strata_command_calls_total{", "strata_lsm_memtable_bytes", "objstore_bucket_operations_total{"} {
			if !strings.Contains(out, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	},
	"docker compose down": func(t *testing.T, h *readmeHarness, cmd string) {
		if h.standIn != nil {
			h.stopOK(t, h.standIn)
		}
	},
	// TestLocalClusterScript runs start, status and stop (twice, with a
	// restart in between) and reads the data back.
	"scripts/local-cluster.sh start":  coveredBy("integration/*_test.go", "TestLocalClusterScript", `run("start")`),
	"scripts/local-cluster.sh status": coveredBy("integration/*_test.go", "TestLocalClusterScript", `run("status")`),
	"scripts/local-cluster.sh stop":   coveredBy("integration/*_test.go", "TestLocalClusterScript", `run("stop")`),
	// Against MinIO: the server takes writes with compaction off, and the
	// compactor starts on the same bucket, then both stop cleanly.
	"strata server   --bucket 's3://strata/data?endpoint=127.0.0.1:9000&insecure=true' --compaction off": func(t *testing.T, h *readmeHarness, cmd string) {
		h.minio(t)
		h.s3Server = h.serve(t, "s3 server", cmd)
		rdb := newClient(t, h.port)
		for i := range 20 {
			must(t, rdb.Set(context.Background(), "s3:"+strconv.Itoa(i), i, 0).Err())
		}
	},
	"strata compactor --bucket 's3://strata/data?endpoint=127.0.0.1:9000&insecure=true'": func(t *testing.T, h *readmeHarness, cmd string) {
		c := h.start(t, "compactor", cmd)
		if err := c.waitFor("compactor running", 30*time.Second); err != nil {
			t.Fatalf("%v\n%s", err, c.tail(20))
		}
		h.stopOK(t, c)
		if len(logLines(c.out.String(), "compactor stopped")) != 1 {
			t.Errorf("no 'compactor stopped' line:\n%s", c.tail(10))
		}
		if h.s3Server != nil {
			h.stopOK(t, h.s3Server)
		}
	},
	// The inspect commands read the ./data the first server left.
	"strata inspect manifest --dir ./data": func(t *testing.T, h *readmeHarness, cmd string) {
		out := h.run(t, cmd)
		m := regexp.MustCompile(`sst/([0-9A-Z]{26})\.sst`).FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "shape: L0") {
			t.Fatalf("no LSM shape with an SST:\n%s", out)
		}
		h.sstID = m[1]
	},
	"strata inspect history --dir ./data": func(t *testing.T, h *readmeHarness, cmd string) {
		if out := h.run(t, cmd); !strings.Contains(out, "epochs w1") {
			t.Errorf("no manifest history:\n%s", out)
		}
	},
	"strata inspect sst 01HX... --dir ./data": func(t *testing.T, h *readmeHarness, cmd string) {
		if h.sstID == "" {
			t.Skip("no SST id: inspect manifest failed")
		}
		out := h.run(t, strings.Replace(cmd, "01HX...", h.sstID, 1))
		if !strings.Contains(out, `hash gen=0 key "readme:hash" `) || !strings.Contains(out, `field "name" = "strata"`) {
			t.Errorf("rows not decoded per keyspace:\n%s", out)
		}
	},
	"strata inspect wal --dir ./data": func(t *testing.T, h *readmeHarness, cmd string) {
		if out := h.run(t, cmd); !strings.Contains(out, "batch epoch=1") {
			t.Errorf("no WAL batch objects listed:\n%s", out)
		}
	},
	"strata inspect verify --dir ./data": func(t *testing.T, h *readmeHarness, cmd string) {
		if out := h.run(t, cmd); !strings.Contains(out, "verified manifest") {
			t.Errorf("verify did not report:\n%s", out)
		}
	},
	"go run ./integration/chaos list": func(t *testing.T, h *readmeHarness, cmd string) {
		out := h.run(t, cmd)
		for _, c := range []string{"crash", "faults", "fence", "fuzz"} {
			if !regexp.MustCompile(`(?m)^\s+` + c + `\s`).MatchString(out) {
				t.Errorf("campaign %s not listed:\n%s", c, out)
			}
		}
	},
	// The full campaigns take minutes each; their -short versions run in
	// integration/chaos's tests, through the same run functions.
	"go run ./integration/chaos crash":  coveredBy("integration/chaos/crash_test.go", "TestCrashShort", "runCrash("),
	"go run ./integration/chaos faults": coveredBy("integration/chaos/faults_test.go", "TestFaultsShort", "runFaults("),
	"go run ./integration/chaos fence":  coveredBy("integration/chaos/fence_test.go", "TestFenceShort", "runFence("),
	"go run ./integration/chaos fuzz":   coveredBy("integration/chaos/fuzz_test.go", "TestFuzzShort", "runFuzz("),
	// scripts/test.sh runs it after the tests, a few seconds per target.
	"scripts/fuzz.sh 30": func(t *testing.T, h *readmeHarness, cmd string) {
		b, err := os.ReadFile(filepath.Join(h.root, "scripts", "test.sh"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `scripts/fuzz.sh "$STRATA_FUZZ_SECONDS"`) {
			t.Errorf("scripts/test.sh does not run scripts/fuzz.sh")
		}
	},
	// Both benchmark scripts run end to end, made small through the
	// environment variables they document; each must print its table.
	"cd bench && go run ./cmd/stratabench list": func(t *testing.T, h *readmeHarness, cmd string) {
		for _, e := range stratabenchExperiments(t, h, cmd) {
			if _, err := os.Stat(filepath.Join(h.root, "bench", "results", e+".md")); err != nil {
				t.Errorf("experiment %s has no committed results: %v", e, err)
			}
		}
	},
	// Every experiment end to end, small, into a directory of the test's
	// (not over the committed results).
	"cd bench && go run ./cmd/stratabench all -short": func(t *testing.T, h *readmeHarness, cmd string) {
		out := filepath.Join(h.work, "stratabench")
		h.run(t, cmd+" -out "+out)
		for _, e := range stratabenchExperiments(t, h, "cd bench && go run ./cmd/stratabench list") {
			// A markdown table, or (engine) scripts/bench.sh's own table.
			b, err := os.ReadFile(filepath.Join(out, e+".md"))
			if err != nil || !strings.Contains(string(b), "\n|---|") && !strings.Contains(string(b), "strata/pebble") {
				t.Errorf("%s: no table in %s.md (%v):\n%s", e, e, err, b)
			}
		}
	},
	// The full run takes about an hour; what it produced is committed in
	// bench/results, and the README's results must come from there.
	"cd bench && go run ./cmd/stratabench all": func(t *testing.T, h *readmeHarness, cmd string) {
		readme, err := os.ReadFile(filepath.Join(h.root, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range stratabenchExperiments(t, h, "cd bench && go run ./cmd/stratabench list") {
			if !strings.Contains(string(readme), "bench/results/"+e+".md") {
				t.Errorf("the README's results do not link bench/results/%s.md", e)
			}
		}
	},
	// Run for real on a short scan (one version per key, 500 scans): the
	// first line is the count per key, then the functions that make it,
	// among them the engine's iterator. Fewer scans leave the count to
	// the runtime's own variance (its page allocator's searches differ by
	// a few hundred thousand instructions from run to run): over 20 scans
	// a CI run once counted -207 instructions a key.
	"scripts/instructions.sh ./lsm 'IterScan/versions=4$' 2000 100": func(t *testing.T, h *readmeHarness, cmd string) {
		if _, err := exec.LookPath("valgrind"); err != nil && os.Getuid() != 0 {
			t.Skip("valgrind is not installed, and the script can install it only as root")
		}
		out := h.run(t, "scripts/instructions.sh ./lsm 'IterScan/versions=1$' 500 100 10")
		var n, units int
		if _, err := fmt.Sscanf(out, "%d instructions per unit (%d units)", &n, &units); err != nil || units != 50000 {
			t.Fatalf("no count per unit (%v):\n%s", err, out)
		}
		if n < 50 || n > 100000 || !strings.Contains(out, "lsm.(*Iterator)") {
			t.Errorf("%d instructions per scanned key, or no iterator among the functions:\n%s", n, out)
		}
	},
	"scripts/pgo.sh": coveredBy("integration/*_test.go", "TestPGOScript", `"PGO_SECONDS=3"`),
	"scripts/bench.sh quick": func(t *testing.T, h *readmeHarness, cmd string) {
		out := h.run(t, "BENCHTIME=10ms GET_KEYS=2000 RECOVERY_BYTES=1048576 COMPACTION_KEYS=20000 "+cmd)
		if !strings.Contains(out, "strata/pebble") {
			t.Errorf("no engine table:\n%s", out)
		}
	},
}

// coveredBy is the runner of a command another test runs: it checks that
// test, in the files matching glob (from the repository root), still
// exists and still calls call.
func coveredBy(glob, test, call string) readmeRunner {
	return func(t *testing.T, h *readmeHarness, cmd string) {
		files, _ := filepath.Glob(filepath.Join(h.root, glob))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			if i := strings.Index(s, "func "+test+"("); i >= 0 {
				body := s[i:]
				if j := strings.Index(body[1:], "\nfunc "); j >= 0 {
					body = body[:j+1]
				}
				if !strings.Contains(body, call) {
					t.Errorf("%s no longer calls %s for %q", test, call, cmd)
				}
				return
			}
		}
		t.Errorf("%q is left to %s, which no longer exists", cmd, test)
	}
}

func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers, MinIO and the benchmark scripts")
	}
	blobtest.RequireCommand(t, "redis-cli")
	blobtest.RequireCommand(t, "curl")
	h := newReadmeHarness(t)
	readme, err := os.ReadFile(filepath.Join(h.root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(readme))
	if checkReadme(t, string(readme), cmds); t.Failed() {
		return
	}
	for _, cmd := range cmds {
		t.Run(cmd, func(t *testing.T) { readmeRunners[cmd](t, h, cmd) })
	}
}

// TestREADMEConsistent checks, without running anything, that every
// command the README shows has a runner and every command its prose names
// is shown: the part of TestREADMECommands a -short run still does.
func TestREADMEConsistent(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkReadme(t, string(readme), readmeCommands(string(readme)))
}

func checkReadme(t *testing.T, readme string, cmds []string) {
	t.Helper()
	for _, bad := range checkReadmeCommands(readme, cmds) {
		t.Error(bad)
	}
}

// checkReadmeCommands returns what keeps the README and readmeRunners out
// of step: commands without a runner, runners without a command, and inline
// `strata ...`/`scripts/...` spans that name no command a block shows.
func checkReadmeCommands(readme string, cmds []string) []string {
	var bad []string
	for _, c := range cmds {
		if readmeRunners[c] == nil {
			bad = append(bad, "README command has no runner in readmeRunners: "+c)
		}
	}
	for c := range readmeRunners {
		if !slices.Contains(cmds, c) {
			bad = append(bad, "readmeRunners has a command the README no longer shows: "+c)
		}
	}
	for _, span := range inlineCommands(readme) {
		if !slices.ContainsFunc(cmds, func(c string) bool { return strings.HasPrefix(c, span) }) {
			bad = append(bad, "README names a command no ```sh block shows: `"+span+"`")
		}
	}
	return bad
}

var (
	inlineSpan  = regexp.MustCompile("`([^`\n]+)`")
	placeholder = regexp.MustCompile(`^[A-Z][A-Z_]*$`) // PATH, URL, FILE
)

// inlineCommands returns the inline code spans of the prose that start
// with a command the README documents, cut before the first flag,
// placeholder or alternative: `strata server [config-file] [flags]` names
// `strata server`.
func inlineCommands(readme string) []string {
	var spans []string
	for _, m := range inlineSpan.FindAllStringSubmatch(stripBlocks(readme), -1) {
		span := m[1]
		if !strings.HasPrefix(span, "strata ") && !strings.HasPrefix(span, "scripts/") && !strings.HasPrefix(span, "go run ") {
			continue
		}
		var words []string
		for _, w := range strings.Fields(span) {
			if strings.ContainsAny(w, "[|") || strings.HasPrefix(w, "-") || placeholder.MatchString(w) {
				break
			}
			words = append(words, w)
		}
		spans = append(spans, strings.Join(words, " "))
	}
	return spans
}

// stripBlocks removes fenced code blocks, leaving the prose.
func stripBlocks(readme string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

var trailingComment = regexp.MustCompile(`\s+#\s.*$`)

// readmeCommands returns the lines of the README's ```sh blocks, without
// trailing comments, in order.
func readmeCommands(readme string) []string {
	var cmds []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```sh":
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in:
			if c := strings.TrimSpace(trailingComment.ReplaceAllString(line, "")); c != "" && !slices.Contains(cmds, c) {
				cmds = append(cmds, c)
			}
		}
	}
	return cmds
}

// readmeHarness is the world the README's commands run in: a working
// directory of their own, PATH leading to the built strata, free ports in
// place of the README's, and MinIO when a command needs it.
type readmeHarness struct {
	t               *testing.T // the whole test, not a command's subtest
	root, work, bin string
	port            int // for 6379
	altPort         int // for 7000
	metricsPort     int // for 9121
	s3              *blobtest.MinIOServer

	standIn, s3Server *child
	sstID             string
}

func newReadmeHarness(t *testing.T) *readmeHarness {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	h := &readmeHarness{t: t, root: root, work: t.TempDir(), bin: t.TempDir(),
		port: freePort(t), altPort: freePort(t), metricsPort: freePort(t)}
	if err := os.Symlink(strataBinaryNoRace(t), filepath.Join(h.bin, "strata")); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *readmeHarness) minio(t *testing.T) *blobtest.MinIOServer {
	if h.s3 == nil {
		h.s3 = blobtest.MinIO(t)
	}
	return h.s3
}

// expand moves a README command into the harness: `go run ./cmd/strata` is
// the binary built from that package; the README's ports become free ones
// (a server command without --port gets one); scripts run from the
// repository; the MinIO endpoint and bucket are the test's.
func (h *readmeHarness) expand(cmd string) string {
	r := []string{
		"go run ./cmd/strata", "strata",
		"cd bench && go run ./", "cd " + h.root + "/bench && go run ./",
		"go run ./", "go -C " + h.root + " run ./",
		"scripts/", h.root + "/scripts/",
		"6379", strconv.Itoa(h.port),
		"7000", strconv.Itoa(h.altPort),
		"9121", strconv.Itoa(h.metricsPort),
	}
	if h.s3 != nil {
		r = append(r, "127.0.0.1:9000", h.s3.Endpoint, "s3://strata/", "s3://"+h.s3.Bucket+"/")
	}
	cmd = strings.NewReplacer(r...).Replace(cmd)
	if strings.HasPrefix(cmd, "strata server") && !strings.Contains(cmd, "--port") {
		cmd += " --port " + strconv.Itoa(h.port)
	}
	return cmd
}

func (h *readmeHarness) env() []string {
	env := []string{"PATH=" + h.bin + ":" + os.Getenv("PATH")}
	if h.s3 != nil {
		env = append(env, h.s3.Env()...)
	}
	return env
}

// run runs cmd to completion and returns its output; a non-zero exit fails
// the test.
func (h *readmeHarness) run(t *testing.T, cmd string) string {
	t.Helper()
	c := exec.Command("bash", "-c", h.expand(cmd))
	c.Dir, c.Env = h.work, append(os.Environ(), h.env()...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", h.expand(cmd), err, out)
	}
	return string(out)
}

// start starts cmd in the background, in the harness's directory; the
// test's cleanup kills it.
func (h *readmeHarness) start(t *testing.T, name, cmd string) *child {
	t.Helper()
	c := exec.Command("bash", "-c", "exec "+h.expand(cmd))
	c.Dir, c.Env = h.work, append(os.Environ(), h.env()...)
	ch := &child{name: name, cmd: c, out: &syncBuffer{}, exited: make(chan struct{})}
	c.Stdout, c.Stderr = ch.out, ch.out
	c.SysProcAttr = sysProcAttr()
	if err := c.Start(); err != nil {
		t.Fatalf("%s: %v", h.expand(cmd), err)
	}
	go func() { _ = c.Wait(); close(ch.exited) }()
	h.t.Cleanup(ch.kill) // the whole test's: a server outlives its command's subtest
	return ch
}

// serve starts a server command and waits until it accepts connections.
func (h *readmeHarness) serve(t *testing.T, name, cmd string) *child {
	t.Helper()
	ch := h.start(t, name, cmd)
	if err := ch.waitFor("ready to accept connections", 30*time.Second); err != nil {
		t.Fatalf("%s: %v\n%s", h.expand(cmd), err, ch.tail(20))
	}
	return ch
}

// stopOK stops c with SIGTERM and fails the test unless it exits 0.
func (h *readmeHarness) stopOK(t *testing.T, c *child) {
	t.Helper()
	code, err := c.stop(30 * time.Second)
	if err != nil || code != 0 {
		t.Errorf("%s: exit %d, %v\n%s", c.name, code, err, c.tail(10))
	}
}

// stratabenchExperiments returns the experiment names `stratabench list`
// prints.
func stratabenchExperiments(t *testing.T, h *readmeHarness, listCmd string) []string {
	t.Helper()
	var names []string
	for _, line := range strings.Split(h.run(t, listCmd), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(line, "  ") {
			names = append(names, f[0])
		}
	}
	if len(names) < 5 {
		t.Fatalf("stratabench lists %v", names)
	}
	return names
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckReadmeCommands: a README command without a runner, and an
// inline command no block shows, are each reported.
func TestCheckReadmeCommands(t *testing.T) {
	readme := "Run `strata frobnicate --now` or `scripts/test.sh`.\n\n```sh\nscripts/test.sh   # tests\nstrata serve-me\n```\n"
	cmds := readmeCommands(readme)
	if want := []string{"scripts/test.sh", "strata serve-me"}; !slices.Equal(cmds, want) {
		t.Fatalf("commands: got %q, want %q", cmds, want)
	}
	bad := strings.Join(checkReadmeCommands(readme, cmds), "\n")
	for _, want := range []string{
		"no runner in readmeRunners: strata serve-me",
		"no ```sh block shows: `strata frobnicate`",
		"the README no longer shows: go run ./cmd/strata server",
	} {
		if !strings.Contains(bad, want) {
			t.Errorf("not reported: %s\ngot:\n%s", want, bad)
		}
	}
	if strings.Contains(bad, "`scripts/test.sh`") {
		t.Errorf("a command a block shows was reported:\n%s", bad)
	}
}
