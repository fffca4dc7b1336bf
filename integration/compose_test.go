package integration

// docker-compose.yml and the Dockerfile at the repository root, checked
// without a Docker engine: the compose file is parsed and every strata
// command in it is parsed by the strata binary built from this checkout,
// so a renamed or mistyped flag, a port that does not match its mapping,
// or credentials that do not match MinIO's fail here and not in a user's
// `docker compose up`. `docker compose config` runs too when the client
// has the compose plugin.

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v2"

	"github.com/stratakv/strata/blob"
)

// pendingFlags are flags the compose file uses that a parallel change is
// adding to the binary. A pending flag the binary does not know yet is
// left out of the parse (and logged); once the binary has it, it is
// checked like any other, and its entry here can go.
var pendingFlags = map[string]string{
	"metrics-addr": "issue 6: the metrics and health listener",
}

// composeFile is the part of the compose specification Strata's file uses.
// Services are decoded strictly: a key this test does not know (a typo
// such as depend_on, or something new) fails until the test learns it.
type composeFile struct {
	Name       string                    `yaml:"name"`
	Services   map[string]composeService `yaml:"services"`
	Volumes    map[string]any            `yaml:"volumes"`
	Extensions map[string]any            `yaml:",inline"` // x-* fields, for anchors
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       string            `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test        []string `yaml:"test"`
		Interval    string   `yaml:"interval"`
		Timeout     string   `yaml:"timeout"`
		Retries     int      `yaml:"retries"`
		StartPeriod string   `yaml:"start_period"`
	} `yaml:"healthcheck"`
	StopGracePeriod string `yaml:"stop_grace_period"`
	Restart         string `yaml:"restart"`
}

// interpolation is the one form of compose variable the file may use,
// ${NAME:-default}; the test reads the defaults.
var interpolation = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*):-([^}$]*)\}`)

// loadCompose reads a compose file, replacing ${NAME:-default} by the
// default; any other $ is an error, since compose would interpolate it.
func loadCompose(path string) (*composeFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := interpolation.ReplaceAllString(string(raw), "$2")
	if i := strings.IndexByte(text, '$'); i >= 0 {
		line := strings.Count(text[:i], "\n") + 1
		return nil, fmt.Errorf("%s:%d: a $ other than ${NAME:-default}", path, line)
	}
	var c composeFile
	if err := yaml.UnmarshalStrict([]byte(text), &c); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for k := range c.Extensions {
		if !strings.HasPrefix(k, "x-") {
			return nil, fmt.Errorf("%s: unknown top-level key %q", path, k)
		}
	}
	return &c, nil
}

// flagSpec is what `strata <sub> -help` says about one flag.
type flagSpec struct {
	takesValue bool
}

// helpFlag matches a flag line of Go's flag.PrintDefaults: "  -name type"
// ("  -name" alone for a boolean).
var helpFlag = regexp.MustCompile(`^  -([^\s=]+)(?:[ \t](.*))?$`)

// helpCommand is a run of the binary that only parses flags. The race
// detector's one-second pause at a successful exit is turned off.
func helpCommand(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	return cmd
}

// binaryFlags returns the flags of `strata sub`, from its -help output.
func binaryFlags(t *testing.T, bin, sub string) map[string]flagSpec {
	t.Helper()
	out, _ := helpCommand(bin, sub, "-help").CombinedOutput() // exit status differs per subcommand
	if !strings.HasPrefix(string(out), "Usage of strata "+sub+":") {
		t.Fatalf("strata %s -help: unexpected output:\n%s", sub, out)
	}
	flags := map[string]flagSpec{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := helpFlag.FindStringSubmatch(line); m != nil {
			flags[m[1]] = flagSpec{takesValue: m[2] != ""}
		}
	}
	if len(flags) == 0 {
		t.Fatalf("strata %s -help lists no flags:\n%s", sub, out)
	}
	return flags
}

// composeChecker checks a parsed compose file against the strata binary.
type composeChecker struct {
	bin       string
	flags     map[string]map[string]flagSpec // by subcommand
	goVersion string                         // go.mod's go line
	docker    dockerfile
	skipped   []string // pending flags left out of the binary's parse
}

// parsedCommand is a strata service's command: the subcommand and its
// flags by name (the last value wins, as with package flag).
type parsedCommand struct {
	sub   string
	flags map[string]string
}

// parseCommand splits a strata command into subcommand and flags, using the
// binary's own list of flags to tell which take a value. It returns the
// arguments to hand the binary (pending flags it lacks left out) and one
// problem per argument it cannot place.
func (ck *composeChecker) parseCommand(svc string, cmd []string) (parsedCommand, []string, []string) {
	var problems []string
	if len(cmd) == 0 {
		return parsedCommand{}, nil, []string{svc + ": no command"}
	}
	pc := parsedCommand{sub: cmd[0], flags: map[string]string{}}
	known, ok := ck.flags[pc.sub]
	if !ok {
		return pc, nil, []string{fmt.Sprintf("%s: strata has no subcommand %q here", svc, pc.sub)}
	}
	var pass []string
	for i := 1; i < len(cmd); i++ {
		arg := cmd[i]
		if !strings.HasPrefix(arg, "-") {
			problems = append(problems, fmt.Sprintf("%s: argument %q is not a flag", svc, arg))
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		spec, isKnown := known[name]
		_, pending := pendingFlags[name]
		takesValue := spec.takesValue || (!isKnown && pending)
		start := i
		if takesValue && !hasValue && i+1 < len(cmd) {
			i++
			value = cmd[i]
		}
		pc.flags[name] = value
		if !isKnown && pending {
			ck.skipped = append(ck.skipped, fmt.Sprintf("%s: strata %s has no -%s yet (%s): not parsed by the binary",
				svc, pc.sub, name, pendingFlags[name]))
			continue
		}
		pass = append(pass, cmd[start:i+1]...)
	}
	return pc, pass, problems
}

// parseWithBinary has the binary parse args (with -help last, so it stops
// after parsing them) and returns its complaint, or "" if it accepted them.
func (ck *composeChecker) parseWithBinary(sub string, args []string) string {
	out, _ := helpCommand(ck.bin, append(append([]string{sub}, args...), "-help")...).CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n")
	if first == "Usage of strata "+sub+":" {
		return ""
	}
	return first
}

// check returns one line per problem in c.
func (ck *composeChecker) check(c *composeFile) []string {
	var problems []string
	for _, name := range []string{"minio", "createbucket", "strata", "compactor"} {
		if _, ok := c.Services[name]; !ok {
			problems = append(problems, "no service "+name)
		}
	}
	if len(problems) > 0 {
		return problems
	}
	problems = append(problems, checkMinIO(c)...)
	server, p := ck.checkStrataService(c, "strata", "server")
	problems = append(problems, p...)
	comp, p := ck.checkStrataService(c, "compactor", "compactor")
	problems = append(problems, p...)
	if server.flags["bucket"] != comp.flags["bucket"] {
		problems = append(problems, fmt.Sprintf("strata and compactor name different buckets: %q, %q",
			server.flags["bucket"], comp.flags["bucket"]))
	}
	problems = append(problems, checkCreateBucket(c, server.flags["bucket"])...)
	problems = append(problems, ck.checkServer(c, server)...)
	return problems
}

// checkMinIO checks the MinIO service: data on a named volume, the API and
// console ports published, a health check, root credentials MinIO accepts.
func checkMinIO(c *composeFile) []string {
	var problems []string
	m := c.Services["minio"]
	if !strings.HasPrefix(m.Image, "minio/minio") && !strings.Contains(m.Image, "/minio/minio") {
		problems = append(problems, fmt.Sprintf("minio: image %q is not MinIO's", m.Image))
	}
	if len(m.Command) < 2 || m.Command[0] != "server" {
		problems = append(problems, fmt.Sprintf("minio: command %q is not `server DIR ...`", m.Command))
	} else {
		problems = append(problems, checkNamedVolume(c, "minio", m.Volumes, m.Command[1])...)
	}
	if i := slices.Index(m.Command, "--console-address"); i < 0 || i+1 >= len(m.Command) ||
		!slices.Contains(m.Ports, "9001:"+strings.TrimPrefix(m.Command[i+1], ":")) {
		problems = append(problems, "minio: the console (--console-address) is not published as 9001")
	}
	if !slices.Contains(m.Ports, "9000:9000") {
		problems = append(problems, "minio: the S3 API is not published as 9000:9000")
	}
	if m.Healthcheck == nil || len(m.Healthcheck.Test) == 0 {
		problems = append(problems, "minio: no health check (strata waits for service_healthy)")
	}
	user, pass := m.Environment["MINIO_ROOT_USER"], m.Environment["MINIO_ROOT_PASSWORD"]
	if len(user) < 3 || len(pass) < 8 { // MinIO refuses to start otherwise
		problems = append(problems, "minio: MINIO_ROOT_USER needs 3+ characters and MINIO_ROOT_PASSWORD 8+")
	}
	return problems
}

// checkNamedVolume checks that dir is mounted from a top-level named volume.
func checkNamedVolume(c *composeFile, svc string, mounts []string, dir string) []string {
	for _, v := range mounts {
		src, dst, _ := strings.Cut(v, ":")
		if dst == dir {
			if _, ok := c.Volumes[src]; !ok {
				return []string{fmt.Sprintf("%s: %s is mounted from %q, not a named volume", svc, dir, src)}
			}
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: no volume mounted on %s", svc, dir)}
}

// checkCreateBucket checks the one-shot service creates the bucket the
// strata services use, on the MinIO service, with its root credentials.
func checkCreateBucket(c *composeFile, bucketURL string) []string {
	var problems []string
	cb, m := c.Services["createbucket"], c.Services["minio"]
	if got := cb.DependsOn["minio"].Condition; got != "service_healthy" {
		problems = append(problems, fmt.Sprintf("createbucket: depends on minio with %q, want service_healthy", got))
	}
	if cb.Restart != "no" {
		problems = append(problems, fmt.Sprintf("createbucket: restart %q, want \"no\" (it is one shot)", cb.Restart))
	}
	u, err := url.Parse(bucketURL)
	if err != nil {
		return append(problems, fmt.Sprintf("bucket URL %q: %v", bucketURL, err))
	}
	if !slices.Contains(cb.Command, "local/"+u.Host) || !slices.Contains(cb.Command, "mb") {
		problems = append(problems, fmt.Sprintf("createbucket: command %q does not `mb` local/%s", cb.Command, u.Host))
	}
	want := fmt.Sprintf("http://%s:%s@%s", m.Environment["MINIO_ROOT_USER"], m.Environment["MINIO_ROOT_PASSWORD"],
		u.Query().Get("endpoint"))
	if got := cb.Environment["MC_HOST_local"]; got != want {
		problems = append(problems, fmt.Sprintf("createbucket: MC_HOST_local %q, want %q", got, want))
	}
	return problems
}

// checkStrataService checks a service that runs the strata binary: built
// from this repository, its command parsed by the binary, the bucket
// opened by blob.Open with the service's environment, credentials equal to
// MinIO's root user, and started after MinIO is healthy and the bucket is
// created.
func (ck *composeChecker) checkStrataService(c *composeFile, svc, sub string) (parsedCommand, []string) {
	s := c.Services[svc]
	var problems []string
	if s.Build != "." {
		problems = append(problems, fmt.Sprintf("%s: build %q, want . (the Dockerfile at the root)", svc, s.Build))
	}
	pc, pass, p := ck.parseCommand(svc, s.Command)
	problems = append(problems, p...)
	if pc.sub != sub {
		return pc, append(problems, fmt.Sprintf("%s: runs strata %q, want %q", svc, pc.sub, sub))
	}
	if complaint := ck.parseWithBinary(sub, pass); complaint != "" {
		problems = append(problems, fmt.Sprintf("%s: strata %s rejects %q: %s", svc, sub, pass, complaint))
	}
	problems = append(problems, checkBucket(c, svc, s, pc.flags["bucket"])...)
	for dep, want := range map[string]string{"minio": "service_healthy", "createbucket": "service_completed_successfully"} {
		if got := s.DependsOn[dep].Condition; got != want {
			problems = append(problems, fmt.Sprintf("%s: depends on %s with %q, want %s", svc, dep, got, want))
		}
	}
	return pc, problems
}

// checkBucket checks a strata service's --bucket: an s3 URL that blob.Open
// accepts, pointing at the MinIO service's API port, with the service's
// credentials equal to MinIO's root user.
func checkBucket(c *composeFile, svc string, s composeService, bucketURL string) []string {
	m := c.Services["minio"]
	var problems []string
	for k, want := range map[string]string{
		"AWS_ACCESS_KEY_ID":     m.Environment["MINIO_ROOT_USER"],
		"AWS_SECRET_ACCESS_KEY": m.Environment["MINIO_ROOT_PASSWORD"],
	} {
		if got := s.Environment[k]; got != want {
			problems = append(problems, fmt.Sprintf("%s: %s=%q, want MinIO's root credential %q", svc, k, got, want))
		}
	}
	if s.Environment["AWS_REGION"] == "" {
		problems = append(problems, svc+": no AWS_REGION")
	}
	u, err := url.Parse(bucketURL)
	if err != nil || u.Scheme != "s3" {
		return append(problems, fmt.Sprintf("%s: --bucket %q is not an s3:// URL", svc, bucketURL))
	}
	if ep := u.Query().Get("endpoint"); ep != "minio:9000" {
		problems = append(problems, fmt.Sprintf("%s: --bucket endpoint %q, want minio:9000 (the minio service)", svc, ep))
	}
	// blob.Open reads the credentials from the environment, as the
	// container will; it does no I/O for s3, so this checks the URL only.
	for k, v := range s.Environment {
		os.Setenv(k, v) // REQUIRES: not parallel (the caller uses t.Setenv to restore)
	}
	bkt, err := blob.Open(context.Background(), bucketURL, nil)
	if err != nil {
		return append(problems, fmt.Sprintf("%s: --bucket %q: %v", svc, bucketURL, err))
	}
	bkt.Close()
	return problems
}

// checkServer checks the server's settings against its service: compaction
// left to the compactor service, listening beyond loopback, and the RESP
// and metrics ports published and matching the health check.
func (ck *composeChecker) checkServer(c *composeFile, pc parsedCommand) []string {
	s := c.Services["strata"]
	var problems []string
	if pc.flags["compaction"] != "off" {
		problems = append(problems, fmt.Sprintf("strata: --compaction %q, want off (the compactor service compacts)", pc.flags["compaction"]))
	}
	if !slices.Contains(strings.Fields(pc.flags["bind"]), "0.0.0.0") {
		problems = append(problems, fmt.Sprintf("strata: --bind %q: unreachable from outside the container", pc.flags["bind"]))
	}
	port := pc.flags["port"]
	if port == "" {
		port = "6379" // the flag's default
	}
	if !slices.Contains(s.Ports, "6379:"+port) {
		problems = append(problems, fmt.Sprintf("strata: RESP port %s is not published as 6379 (ports %q)", port, s.Ports))
	}
	host, mport, err := net.SplitHostPort(pc.flags["metrics-addr"])
	if err != nil || host != "0.0.0.0" {
		return append(problems, fmt.Sprintf("strata: --metrics-addr %q, want 0.0.0.0:PORT", pc.flags["metrics-addr"]))
	}
	if !slices.Contains(s.Ports, mport+":"+mport) {
		problems = append(problems, fmt.Sprintf("strata: metrics port %s is not published (ports %q)", mport, s.Ports))
	}
	wantHealth := []string{"CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:" + mport + "/healthz"}
	if s.Healthcheck == nil || !slices.Equal(s.Healthcheck.Test, wantHealth) {
		problems = append(problems, fmt.Sprintf("strata: health check is not %q", wantHealth))
	}
	for _, p := range []string{port, mport} {
		if !slices.Contains(ck.docker.expose, p) {
			problems = append(problems, fmt.Sprintf("Dockerfile: port %s is not EXPOSEd", p))
		}
	}
	return problems
}

// dockerfile is what the test reads from the Dockerfile: instructions with
// continuation lines joined, comments dropped.
type dockerfile struct {
	lines  []string
	expose []string
}

func loadDockerfile(path string) (dockerfile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return dockerfile{}, err
	}
	var d dockerfile
	var cur strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(cont)
			continue
		}
		cur.WriteString(line)
		d.lines = append(d.lines, cur.String())
		cur.Reset()
	}
	for _, l := range d.lines {
		if ports, ok := strings.CutPrefix(l, "EXPOSE "); ok {
			d.expose = append(d.expose, strings.Fields(ports)...)
		}
	}
	return d, nil
}

// check returns the Dockerfile's problems: the Go version, a static
// stripped build, a non-root user and the binary as entry point.
func (d dockerfile) check(goVersion string) []string {
	want := []string{
		"ARG GO_VERSION=" + goVersion,
		"FROM golang:${GO_VERSION} AS build",
		"USER 65532:65532",
		`ENTRYPOINT ["/strata"]`,
	}
	var problems []string
	for _, w := range want {
		if !slices.Contains(d.lines, w) {
			problems = append(problems, fmt.Sprintf("Dockerfile: no line %q", w))
		}
	}
	build := ""
	for _, l := range d.lines {
		if strings.Contains(l, "go build") {
			build = l
		}
	}
	for _, w := range []string{"CGO_ENABLED=0", "-trimpath", "-ldflags='-s -w'", "./cmd/strata"} {
		if !strings.Contains(build, w) {
			problems = append(problems, fmt.Sprintf("Dockerfile: the go build line lacks %s: %q", w, build))
		}
	}
	last := ""
	for _, l := range d.lines {
		if strings.HasPrefix(l, "FROM ") {
			last = l
		}
	}
	if !strings.HasPrefix(last, "FROM alpine:") { // the health check's wget is busybox's
		problems = append(problems, fmt.Sprintf("Dockerfile: final stage %q, want alpine (wget for the health check)", last))
	}
	return problems
}

// goModVersion returns the go line of go.mod at root.
func goModVersion(t *testing.T, root string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	return string(m[1])
}

// newComposeChecker builds the binary and reads its flags, go.mod and the
// Dockerfile. It sets the AWS variables checkBucket changes, so they are
// restored when the test ends.
func newComposeChecker(t *testing.T) *composeChecker {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_SESSION_TOKEN"} {
		t.Setenv(k, "")
	}
	bin := strataBinary(t)
	ck := &composeChecker{bin: bin, flags: map[string]map[string]flagSpec{}, goVersion: goModVersion(t, "..")}
	for _, sub := range []string{"server", "compactor"} {
		ck.flags[sub] = binaryFlags(t, bin, sub)
	}
	var err error
	if ck.docker, err = loadDockerfile(filepath.Join("..", "Dockerfile")); err != nil {
		t.Fatal(err)
	}
	return ck
}

// TestCompose checks docker-compose.yml and the Dockerfile against the
// binary built from this checkout, and runs `docker compose config` when
// the Docker client has the compose plugin.
func TestCompose(t *testing.T) {
	ck := newComposeChecker(t)
	c, err := loadCompose(filepath.Join("..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(ck.check(c), ck.docker.check(ck.goVersion)...) {
		t.Error(p)
	}
	for _, s := range ck.skipped {
		t.Log(s)
	}
	if _, err := os.Stat(filepath.Join("..", ".dockerignore")); err != nil {
		t.Errorf("no .dockerignore: %v", err)
	}
	dockerComposeConfig(t)
}

// dockerComposeConfig validates the file with `docker compose config -q`,
// the compose implementation's own parser, if it is installed.
func dockerComposeConfig(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Log("docker not on PATH: docker compose config not run")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if exec.CommandContext(ctx, docker, "compose", "version").Run() != nil {
		t.Log("docker has no compose plugin: docker compose config not run")
		return
	}
	cmd := exec.CommandContext(ctx, docker, "compose", "-f", filepath.Join("..", "docker-compose.yml"), "config", "-q")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("docker compose config -q: %v\n%s", err, out)
	}
}

// TestComposeChecksFail breaks the compose file in the ways a change could,
// one at a time, and checks each is reported: the checks of TestCompose
// can fail.
func TestComposeChecksFail(t *testing.T) {
	ck := newComposeChecker(t)
	edit := func(svc string, f func(*composeService)) func(*composeFile) {
		return func(c *composeFile) { s := c.Services[svc]; f(&s); c.Services[svc] = s }
	}
	cases := []struct {
		name   string
		mutate func(*composeFile)
		want   string
	}{
		{"no compactor", func(c *composeFile) { delete(c.Services, "compactor") }, "no service compactor"},
		{"unknown flag", edit("strata", func(s *composeService) {
			s.Command = append(slices.Clone(s.Command), "--no-such-flag", "1")
		}), "flag provided but not defined: -no-such-flag"},
		{"bad flag value", edit("compactor", func(s *composeService) {
			s.Command = append(slices.Clone(s.Command), "--poll-interval", "often")
		}), `invalid value "often" for flag -poll-interval`},
		{"bad bucket URL", edit("compactor", func(s *composeService) {
			s.Command = []string{"compactor", "--bucket", "s3://strata/data?endpoint=minio:9000&insecure=true&tls=no"}
		}), `unknown parameter "tls"`},
		{"compaction on", edit("strata", func(s *composeService) {
			s.Command = append(slices.Clone(s.Command), "--compaction", "in-process")
		}), "want off"},
		{"port mismatch", edit("strata", func(s *composeService) {
			s.Command = append(slices.Clone(s.Command), "--port", "7000")
		}), "RESP port 7000 is not published"},
		{"wrong secret", edit("compactor", func(s *composeService) {
			s.Environment = map[string]string{"AWS_ACCESS_KEY_ID": "strata", "AWS_SECRET_ACCESS_KEY": "x", "AWS_REGION": "us-east-1"}
		}), "AWS_SECRET_ACCESS_KEY"},
		{"started, not healthy", edit("strata", func(s *composeService) {
			s.DependsOn = nil
		}), "depends on minio"},
		{"other bucket", edit("createbucket", func(s *composeService) {
			s.Command = []string{"mb", "local/other"}
		}), "does not `mb` local/strata"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadCompose(filepath.Join("..", "docker-compose.yml"))
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(c)
			problems := ck.check(c)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("no problem mentioning %q; got %q", tc.want, problems)
			}
		})
	}
	if p := (dockerfile{lines: []string{"ARG GO_VERSION=1.26.0"}}).check("1.26.8"); !slices.Contains(p, `Dockerfile: no line "ARG GO_VERSION=1.26.8"`) {
		t.Errorf("a Go version behind go.mod is not reported: %q", p)
	}
}
