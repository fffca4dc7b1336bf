package blobtest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/thanos-io/objstore"
	"github.com/thanos-io/objstore/providers/s3"
	"gopkg.in/yaml.v2"

	"github.com/stratakv/strata/blob/blobtest"
)

func TestMain(m *testing.M) { blobtest.Main(m) }

// openS3 opens s.Config(prefix) with objstore's s3 provider, parsed strictly
// the way thanos parses it, so a malformed Config fails here.
func openS3(t *testing.T, s *blobtest.MinIOServer, prefix string, edit func(*s3.Config)) objstore.Bucket {
	t.Helper()
	conf := struct {
		Type   string    `yaml:"type"`
		Config s3.Config `yaml:"config"`
		Prefix string    `yaml:"prefix"`
	}{Config: s3.DefaultConfig}
	if err := yaml.UnmarshalStrict(s.Config(prefix), &conf); err != nil {
		t.Fatalf("parsing Config:\n%s\n%v", s.Config(prefix), err)
	}
	if conf.Type != string(objstore.S3) || conf.Prefix != prefix {
		t.Fatalf("Config: type %q prefix %q, want S3 and %q", conf.Type, conf.Prefix, prefix)
	}
	conf.Config.MaxRetries = 1 // fail fast while a server is stopped
	if edit != nil {
		edit(&conf.Config)
	}
	bkt, err := s3.NewBucketWithConfig(log.NewNopLogger(), conf.Config, "blobtest", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bkt.Close() })
	if conf.Prefix == "" {
		return bkt
	}
	return objstore.NewPrefixedBucket(bkt, conf.Prefix)
}

func get(ctx context.Context, bkt objstore.Bucket, name string) ([]byte, error) {
	r, err := bkt.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func TestMinIOObjstoreS3(t *testing.T) {
	s := blobtest.MinIO(t)
	ctx := context.Background()
	bkt := openS3(t, s, "run/1", nil)
	want := []byte("hello, strata")

	if err := bkt.Upload(ctx, "a/obj", bytes.NewReader(want), objstore.WithIfNotExists()); err != nil {
		t.Fatalf("upload: %v", err)
	}
	got, err := get(ctx, bkt, "a/obj")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("get = %q, %v; want %q", got, err, want)
	}
	// Strata's fencing rests on create-if-absent: the pinned MinIO must refuse.
	err = bkt.Upload(ctx, "a/obj", strings.NewReader("other"), objstore.WithIfNotExists())
	if !bkt.IsConditionNotMetErr(err) {
		t.Fatalf("second create-if-absent upload: %v, want condition not met", err)
	}

	// The prefix of Config lands in object names, and Env's credentials work.
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	root := openS3(t, s, "", func(c *s3.Config) { c.AccessKey, c.SecretKey = "", "" })
	if ok, err := root.Exists(ctx, "run/1/a/obj"); err != nil || !ok {
		t.Fatalf("unprefixed Exists(run/1/a/obj) = %v, %v; want true", ok, err)
	}

	u, err := url.Parse(s.URL("/run/1/"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "s3" || u.Host != s.Bucket || u.Path != "/run/1" ||
		q.Get("endpoint") != s.Endpoint || q.Get("insecure") != "true" {
		t.Fatalf("URL = %s", u)
	}
}

func TestMinIOSharedServerSeparateBuckets(t *testing.T) {
	a, b := blobtest.MinIO(t), blobtest.MinIO(t)
	if a.Endpoint != b.Endpoint || a.Bucket == b.Bucket {
		t.Fatalf("endpoints %s, %s buckets %s, %s: want one server, two buckets", a.Endpoint, b.Endpoint, a.Bucket, b.Bucket)
	}
	ctx := context.Background()
	if err := openS3(t, a, "", nil).Upload(ctx, "x", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if ok, err := openS3(t, b, "", nil).Exists(ctx, "x"); err != nil || ok {
		t.Fatalf("other bucket Exists(x) = %v, %v; want false", ok, err)
	}
}

func TestNewMinIOStopStart(t *testing.T) {
	s := blobtest.NewMinIO(t)
	if shared := blobtest.MinIO(t); shared.Endpoint == s.Endpoint {
		t.Fatalf("NewMinIO returned the shared server %s", s.Endpoint)
	}
	bkt := openS3(t, s, "p", nil)
	ctx := context.Background()
	if err := bkt.Upload(ctx, "k", strings.NewReader("v")); err != nil {
		t.Fatal(err)
	}

	s.Stop(t)
	stopped, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := get(stopped, bkt, "k"); err == nil || bkt.IsObjNotFoundErr(err) {
		t.Fatalf("get while stopped: %v, want a connection error", err)
	}

	s.Start(t)
	if got, err := get(ctx, bkt, "k"); err != nil || string(got) != "v" {
		t.Fatalf("get after restart = %q, %v; want v", got, err)
	}
}

// TestNoMinIOOutlivesTestProcess kills a test process that runs MinIO, as a
// -timeout or a crash would, and checks that MinIO dies with it.
func TestNoMinIOOutlivesTestProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on Pdeathsig and /proc")
	}
	if _, err := blobtest.MinIOBinary(); err != nil {
		blobtest.Missing(t, "%v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperOrphanMinIO$")
	// The helper's temp dirs land in ours, which is removed even though the
	// helper dies without cleaning up.
	cmd.Env = append(os.Environ(), "BLOBTEST_ORPHAN_HELPER=1", "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, lines := 0, []string{}
	for sc := bufio.NewScanner(out); pid == 0 && sc.Scan(); {
		lines = append(lines, sc.Text())
		if s, ok := strings.CutPrefix(sc.Text(), "minio-pid "); ok {
			pid, _ = strconv.Atoi(s)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if pid == 0 {
		t.Fatalf("helper printed no minio pid:\n%s", strings.Join(lines, "\n"))
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("minio (pid %d) still runs after its test process was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive says whether pid runs; a zombie (dead, not yet reaped by init) does not.
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// Format: pid (comm) state ...; comm may hold spaces and parentheses.
	rest := b[bytes.LastIndexByte(b, ')')+1:]
	return !bytes.HasPrefix(bytes.TrimSpace(rest), []byte("Z"))
}

func TestHelperOrphanMinIO(t *testing.T) {
	if os.Getenv("BLOBTEST_ORPHAN_HELPER") == "" {
		t.Skip("helper process of TestNoMinIOOutlivesTestProcess")
	}
	s := blobtest.NewMinIO(t)
	fmt.Printf("minio-pid %d\n", s.PID())
	select {} // until the parent kills this process
}

func TestRequireCommand(t *testing.T) {
	if p := blobtest.RequireCommand(t, "sh"); filepath.Base(p) != "sh" {
		t.Fatalf("RequireCommand(sh) = %q", p)
	}
	t.Setenv("CI", "")
	if r := record(t, func(tb testing.TB) { blobtest.RequireCommand(tb, "strata-no-such-command") }); !strings.Contains(r.skip, "not found") || r.fatal != "" {
		t.Fatalf("missing command off CI: skip %q fatal %q, want a skip", r.skip, r.fatal)
	}
	t.Setenv("CI", "true")
	if r := record(t, func(tb testing.TB) { blobtest.RequireCommand(tb, "strata-no-such-command") }); !strings.Contains(r.fatal, "CI=true") || r.skip != "" {
		t.Fatalf("missing command under CI: skip %q fatal %q, want a failure", r.skip, r.fatal)
	}
}

func TestSharedMinIORefusesStop(t *testing.T) {
	s := blobtest.MinIO(t)
	if r := record(t, s.Stop); !strings.Contains(r.fatal, "NewMinIO") {
		t.Fatalf("Stop on the shared server: fatal %q, want a failure naming NewMinIO", r.fatal)
	}
	if r := record(t, s.Start); !strings.Contains(r.fatal, "NewMinIO") {
		t.Fatalf("Start on the shared server: fatal %q, want a failure naming NewMinIO", r.fatal)
	}
}

// recorder is a testing.TB whose Skip and Fatal end only its goroutine, so a
// test can observe them.
type recorder struct {
	testing.TB
	skip, fatal string
}

func (r *recorder) Helper()                     {}
func (r *recorder) Skipf(f string, args ...any) { r.skip = fmt.Sprintf(f, args...); runtime.Goexit() }
func (r *recorder) Fatalf(f string, args ...any) {
	r.fatal = fmt.Sprintf(f, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.fatal = fmt.Sprint(args...); runtime.Goexit() }

func record(t *testing.T, fn func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); fn(r) }()
	<-done
	return r
}

func TestMinIOBinaryLookup(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "minio")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	cases := []struct {
		name, envBin, cache, path string
		want                      string
		wantErr                   error // nil: want a path; errNoMinIO; or any other error (explicit bin missing)
	}{
		{"explicit", bin, empty, empty, bin, nil},
		{"explicit missing", filepath.Join(empty, "minio"), dir, dir, "", os.ErrNotExist},
		{"cache", "", dir, empty, bin, nil},
		{"path", "", empty, dir, bin, nil},
		{"none", "", empty, empty, "", blobtest.ErrNoMinIO},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("STRATA_MINIO_BIN", c.envBin)
			t.Setenv("STRATA_CACHE", c.cache)
			t.Setenv("PATH", c.path)
			got, err := blobtest.MinIOBinary()
			if got != c.want || !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Fatalf("got %q, %v; want %q, %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

func TestBucketName(t *testing.T) {
	for _, name := range []string{"TestX", "TestA/sub_case#01", strings.Repeat("TestLong/", 20), "T/-/"} {
		b := blobtest.BucketName(12, name)
		if len(b) < 3 || len(b) > 63 || strings.Trim(b, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" ||
			strings.HasSuffix(b, "-") || strings.Contains(b, "--") || !strings.HasPrefix(b, "t12-") {
			t.Errorf("BucketName(12, %q) = %q: not a valid S3 bucket name", name, b)
		}
	}
}
