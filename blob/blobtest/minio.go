package blobtest

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"gopkg.in/yaml.v2"
)

// MinIOServer is a bucket of its own on a running MinIO.
type MinIOServer struct {
	Endpoint  string // host:port, plain HTTP
	AccessKey string
	SecretKey string
	Bucket    string // created for this server's caller alone

	proc      *process
	dedicated bool // from NewMinIO: the caller may Stop and Start it
}

// shared is the one MinIO process of a test binary, started on first use.
var shared struct {
	once sync.Once
	mu   sync.Mutex // guards proc and dir against Cleanup
	proc *process
	dir  string
	err  error
}

var bucketSeq atomic.Int64

// MinIO returns a new bucket on the MinIO server shared by the tests of this
// package, starting the server on first use. The package's TestMain must
// call Main (or Cleanup) to stop it.
func MinIO(t testing.TB) *MinIOServer {
	t.Helper()
	bin := findMinIO(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "strata-minio-")
		if shared.err == nil {
			shared.proc, shared.err = startProcess(bin, shared.dir)
		}
	})
	shared.mu.Lock()
	proc, err := shared.proc, shared.err
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("blobtest: shared minio: %v", err)
	}
	if proc == nil {
		t.Fatal("blobtest: MinIO called after Cleanup")
	}
	return newServer(t, proc, false)
}

// NewMinIO starts a MinIO server for the calling test alone, with a bucket,
// and stops it when the test ends. Unlike MinIO's, it may be stopped and
// started again (Stop, Start), to test behaviour while the store is down.
func NewMinIO(t testing.TB) *MinIOServer {
	t.Helper()
	bin := findMinIO(t)
	proc, err := startProcess(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.stop) // registered after TempDir's, so it runs first
	return newServer(t, proc, true)
}

func findMinIO(t testing.TB) string {
	t.Helper()
	bin, err := minioBinary()
	if errors.Is(err, errNoMinIO) {
		missing(t, "%v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	return bin
}

func newServer(t testing.TB, proc *process, dedicated bool) *MinIOServer {
	t.Helper()
	bucket := bucketName(bucketSeq.Add(1), t.Name())
	if err := proc.makeBucket(bucket); err != nil {
		t.Fatal(err)
	}
	return &MinIOServer{
		Endpoint:  proc.addr,
		AccessKey: accessKey,
		SecretKey: secretKey,
		Bucket:    bucket,
		proc:      proc,
		dedicated: dedicated,
	}
}

var notBucketChars = regexp.MustCompile(`[^a-z0-9]+`)

// bucketName makes a valid S3 bucket name (3-63 characters of [a-z0-9-],
// starting and ending alphanumeric) that names the test, for reading logs.
func bucketName(seq int64, testName string) string {
	name := fmt.Sprintf("t%d-%s", seq, notBucketChars.ReplaceAllString(strings.ToLower(testName), "-"))
	return strings.TrimRight(name[:min(len(name), 63)], "-")
}

// URL is the bucket spec of blob.Open for prefix in this bucket. The
// credentials are not in it: pass Env to the process that opens it.
func (s *MinIOServer) URL(prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&insecure=true", s.Bucket, strings.Trim(prefix, "/"), s.Endpoint)
}

// Config is the thanos objstore client configuration (YAML) for prefix in
// this bucket, credentials included.
func (s *MinIOServer) Config(prefix string) []byte {
	type s3Config struct {
		Bucket    string `yaml:"bucket"`
		Endpoint  string `yaml:"endpoint"`
		AccessKey string `yaml:"access_key"`
		SecretKey string `yaml:"secret_key"`
		Insecure  bool   `yaml:"insecure"`
	}
	conf := struct {
		Type   string   `yaml:"type"`
		Config s3Config `yaml:"config"`
		Prefix string   `yaml:"prefix"`
	}{"S3", s3Config{s.Bucket, s.Endpoint, s.AccessKey, s.SecretKey, true}, strings.Trim(prefix, "/")}
	b, err := yaml.Marshal(conf)
	if err != nil {
		panic(fmt.Sprintf("blobtest: marshalling a fixed struct: %v", err))
	}
	return b
}

// Env is the environment that gives a child process (a strata server under
// test) the credentials of this server, for opening URL.
func (s *MinIOServer) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
}

// Stop kills the server (SIGTERM, then SIGKILL), keeping its data; requests
// fail until Start. Only for servers from NewMinIO.
func (s *MinIOServer) Stop(t testing.TB) {
	t.Helper()
	if !s.dedicated {
		t.Fatal("blobtest: Stop on the shared MinIO; use NewMinIO for a server of your own")
	}
	s.proc.stop()
}

// Start restarts a stopped server on the same address with the same data.
func (s *MinIOServer) Start(t testing.TB) {
	t.Helper()
	if !s.dedicated {
		t.Fatal("blobtest: Start on the shared MinIO; use NewMinIO for a server of your own")
	}
	if s.proc.cmd != nil {
		t.Fatal("blobtest: Start on a running MinIO")
	}
	if err := s.proc.start(); err != nil {
		t.Fatal(err)
	}
}

// Cleanup stops the shared MinIO, if it was started, and removes its data.
// Call it when the package's tests are done (Main does).
func Cleanup() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.proc != nil {
		shared.proc.stop()
		shared.proc = nil
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
		shared.dir = ""
	}
}

// Main runs the tests and then Cleanup: func TestMain(m *testing.M) { blobtest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}
