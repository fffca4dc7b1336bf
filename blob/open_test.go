package blob

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/go-kit/log/level"
	"github.com/thanos-io/objstore"
)

func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		spec string
		want bucketSpec
	}{
		{"./data", bucketSpec{kind: specFile, dir: "data"}},
		{"data/", bucketSpec{kind: specFile, dir: "data"}},
		{"/var/lib/strata", bucketSpec{kind: specFile, dir: "/var/lib/strata"}},
		{"file:///var/lib/strata/", bucketSpec{kind: specFile, dir: "/var/lib/strata"}},
		{"file://localhost/x", bucketSpec{kind: specFile, dir: "/x"}},
		{"mem://", bucketSpec{kind: specMem}},
		{"s3://bkt", bucketSpec{kind: specS3, bucket: "bkt", endpoint: "s3.amazonaws.com"}},
		{"s3://bkt?region=eu-west-1", bucketSpec{kind: specS3, bucket: "bkt", region: "eu-west-1", endpoint: "s3.eu-west-1.amazonaws.com"}},
		{"s3://bkt/a/b/?endpoint=minio:9000&insecure=true&region=r", bucketSpec{
			kind: specS3, bucket: "bkt", prefix: "a/b", endpoint: "minio:9000", insecure: true, region: "r"}},
	} {
		got, err := parseSpec(c.spec)
		if err != nil || got != c.want {
			t.Errorf("parseSpec(%q) = %+v, %v; want %+v", c.spec, got, err, c.want)
		}
	}
	for _, spec := range []string{
		"", "file://rel/x", "file://host/x", "file:///x?y=1", "s3://", "s3:///prefix?endpoint=x",
		"s3://b?bogus=1", "s3://b?insecure=maybe", "gs://bucket", "mem://x",
	} {
		if _, err := parseSpec(spec); err == nil {
			t.Errorf("parseSpec(%q) accepted", spec)
		}
	}
}

func TestOpenLocalAndMem(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, spec := range []string{"file://" + filepath.Join(dir, "abs"), "rel/data", "./rel2"} {
		b, err := Open(ctx, spec, nil)
		if err != nil {
			t.Fatalf("open %q: %v", spec, err)
		}
		// Closed before TempDir's cleanup: an open LocalBucket's helpers
		// still create spare temp and journal files.
		t.Cleanup(func() { b.Close() })
		mustUpload(t, b, "sst/x", "x", objstore.WithIfNotExists())
		if b.Provider() != objstore.FILESYSTEM {
			t.Fatalf("open %q: provider %s", spec, b.Provider())
		}
	}
	for _, p := range []string{"abs/sst/x", "rel/data/sst/x", "rel2/sst/x"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("object not on disk: %v", err)
		}
	}
	b, err := Open(ctx, "mem://", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckConditionalWrites(ctx, b); err != nil {
		t.Fatal(err)
	}
}

func TestOpenConfigFilesystemUsesLocalBucket(t *testing.T) {
	dir := t.TempDir()
	conf := "type: FILESYSTEM\nconfig:\n  directory: " + dir + "\nprefix: tenant\n"
	b, err := OpenConfig(context.Background(), []byte(conf), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mustUpload(t, b, "manifest/x", "m")
	if _, err := os.Stat(filepath.Join(dir, "tenant", "manifest", "x")); err != nil {
		t.Fatalf("object not under the prefix: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, tmpDirName)); err != nil {
		t.Fatalf("not a LocalBucket (no %s): %v", tmpDirName, err)
	}
	for _, bad := range []string{"type: FILESYSTEM\nconfig: {}\n", "type: FILESYSTEM\nconfig:\n  dir: x\n", "type: NOPE\n", "typo: S3\n"} {
		if _, err := OpenConfig(context.Background(), []byte(bad), nil); err == nil {
			t.Errorf("OpenConfig accepted %q", bad)
		}
	}
}

// fakeS3 answers every request with 404 and records the access key id each
// request was signed with.
type fakeS3 struct {
	mu     sync.Mutex
	keys   []string
	paths  []string
	status int // 0 = 404
}

var credentialRE = regexp.MustCompile(`Credential=([^/]+)/`)

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if m := credentialRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		f.keys = append(f.keys, m[1])
	}
	f.paths = append(f.paths, r.URL.Path)
	status := cmp.Or(f.status, http.StatusNotFound)
	f.mu.Unlock()
	w.WriteHeader(status)
}

func newFakeS3(t *testing.T) (*fakeS3, string) {
	f := &fakeS3{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, strings.TrimPrefix(srv.URL, "http://")
}

// clearAWSEnv removes AWS settings of the machine running the tests.
func clearAWSEnv(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func s3Exists(t *testing.T, b objstore.Bucket) {
	t.Helper()
	ok, err := b.Exists(context.Background(), "sst/x")
	if err != nil || ok {
		t.Fatalf("exists against the fake = %v, %v; want false, nil", ok, err)
	}
}

func TestOpenS3URLCredentialsFromEnv(t *testing.T) {
	clearAWSEnv(t)
	const secret = "env-secret-Zq81"
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	fake, endpoint := newFakeS3(t)
	var logs bytes.Buffer
	b, err := Open(context.Background(), "s3://bkt/pre/fix?endpoint="+endpoint+"&insecure=true&region=us-east-1",
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	s3Exists(t, b)
	if b.Provider() != objstore.S3 || b.Name() != "bkt" {
		t.Fatalf("provider %s name %s", b.Provider(), b.Name())
	}
	if len(fake.keys) == 0 || fake.keys[0] != "AKIDENV" || fake.paths[0] != "/bkt/pre/fix/sst/x" {
		t.Fatalf("requests signed by %q for %q; want AKIDENV for /bkt/pre/fix/sst/x", fake.keys, fake.paths)
	}
	if !strings.Contains(logs.String(), "static-keys") || strings.Contains(logs.String(), secret) {
		t.Fatalf("log does not name the credential source, or shows the secret:\n%s", logs.String())
	}
}

func TestOpenS3URLUsesAWSCredentialChain(t *testing.T) {
	clearAWSEnv(t)
	creds := filepath.Join(t.TempDir(), "credentials")
	err := os.WriteFile(creds, []byte("[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file-secret\n"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	fake, endpoint := newFakeS3(t)
	b, err := Open(context.Background(), "s3://bkt?endpoint="+endpoint+"&insecure=true&region=us-east-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	s3Exists(t, b)
	if len(fake.keys) == 0 || fake.keys[0] != "AKIDFILE" {
		t.Fatalf("requests signed by %q; want AKIDFILE from the shared credentials file", fake.keys)
	}
}

func TestOpenConfigS3StaticKeys(t *testing.T) {
	clearAWSEnv(t)
	fake, endpoint := newFakeS3(t)
	conf := "type: S3\nconfig:\n  bucket: bkt\n  endpoint: " + endpoint +
		"\n  insecure: true\n  region: us-east-1\n  access_key: AKIDYAML\n  secret_key: yaml-secret\nprefix: p\n"
	b, err := OpenConfig(context.Background(), []byte(conf), nil)
	if err != nil {
		t.Fatal(err)
	}
	s3Exists(t, b)
	if len(fake.keys) == 0 || fake.keys[0] != "AKIDYAML" || fake.paths[0] != "/bkt/p/sst/x" {
		t.Fatalf("requests signed by %q for %q; want AKIDYAML for /bkt/p/sst/x", fake.keys, fake.paths)
	}
}

// The S3 client must not retry by itself: a retry it hides could turn our
// own successful create-if-absent into condition-not-met. RetryBucket
// retries instead.
func TestOpenS3DisablesClientRetries(t *testing.T) {
	clearAWSEnv(t)
	fake, endpoint := newFakeS3(t)
	fake.status = http.StatusServiceUnavailable
	t.Setenv("AWS_ACCESS_KEY_ID", "AK")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "SK")
	b, err := Open(context.Background(), "s3://bkt?endpoint="+endpoint+"&insecure=true&region=us-east-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exists(context.Background(), "x"); err == nil {
		t.Fatal("exists against a failing store succeeded")
	}
	if len(fake.paths) != 1 {
		t.Fatalf("%d requests for one call; want 1 (no client-side retries)", len(fake.paths))
	}
}

func TestOpenNeverShowsSecrets(t *testing.T) {
	clearAWSEnv(t)
	const secret = "s3cr3t-Kx9-do-not-log"
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, c := range []struct{ name, conf string }{
		{"bad lookup type", "type: S3\nconfig:\n  bucket: b\n  endpoint: e:9000\n  access_key: AK\n  secret_key: " + secret + "\n  bucket_lookup_type: bogus\n"},
		{"no endpoint", "type: S3\nconfig:\n  bucket: b\n  access_key: AK\n  secret_key: " + secret + "\n"},
		{"unknown field", "type: S3\nconfig:\n  bucket: b\n  secret_key: " + secret + "\n  secret_kee: " + secret + "\n"},
		{"secret in a provider error", "type: S3\nconfig:\n  bucket: b\n  endpoint: e:9000\n  sse_config:\n    type: SSE-C\n    encryption_key: /nonexistent/" + secret + "\n"},
		{"strict parse", "type: S3\nconfig:\n  secret_key: " + secret + "\nextra: 1\n"},
	} {
		_, err := OpenConfig(context.Background(), []byte(c.conf), logger)
		if err == nil {
			t.Errorf("%s: opened", c.name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error shows the secret: %v", c.name, err)
		}
	}
	_, err := Open(context.Background(), "s3://AKID:"+secret+"@bkt?endpoint=e:9000", logger)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("URL with credentials: %v", err)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("log shows the secret:\n%s", logs.String())
	}
}

func TestRedact(t *testing.T) {
	conf := map[any]any{"access_key": "AK", "bucket": "public", "nested": map[any]any{"password": "pw"}}
	got := redact("AK public pw", secretsOf(conf))
	if got != "[REDACTED] public [REDACTED]" {
		t.Fatalf("redact = %q", got)
	}
}

func TestKitLoggerMapsLevelsAndMessage(t *testing.T) {
	var buf bytes.Buffer
	k := kitLogger{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), []string{"tok-secret"}}
	k.Log("level", level.WarnValue(), "msg", "hello", "n", 3, "odd")
	k.Log("level", level.DebugValue(), "msg", "quiet")
	k.Log("level", level.DebugValue(), "msg", "trace tok-secret", "s3TraceMsg", "X-Amz-Security-Token: tok-secret")
	out := buf.String()
	if strings.Contains(out, "tok-secret") {
		t.Errorf("log shows a secret: %s", out)
	}
	for _, want := range []string{"level=WARN msg=hello n=3 odd=(MISSING)", "level=DEBUG msg=quiet",
		`msg="trace [REDACTED]" s3TraceMsg="X-Amz-Security-Token: [REDACTED]"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
}

func TestOpenRejectsCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, "mem://", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("open with a cancelled context: %v", err)
	}
}
