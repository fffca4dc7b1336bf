package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
)

// Distinctive secrets that no output may show. The bucket's own secret key
// is MinIO's (blobtest's), which the server needs to work.
const (
	envSecret   = "envSecret-q7Zx2LmN0pRt"
	envToken    = "envToken-H4kW9sVb3yUe"
	requirePass = "requirePass-Jd8Fq1Cz"
	confToken   = "confToken-Xm5Rk2Wq8Tz"
)

// TestServerNeverShowsCredentials: a server on MinIO, configured by an
// objstore file with the keys in it (and S3 request tracing on), with more
// secrets in the AWS environment and a requirepass, logging at debug, runs a
// workload through an outage of the bucket, and then `strata inspect` and a
// server on an unreachable endpoint run with the same file. No log line,
// error, INFO, CONFIG GET * or inspect output shows a bucket secret, and
// none but CONFIG GET requirepass (as in Redis) shows the password.
func TestServerNeverShowsCredentials(t *testing.T) {
	minio := blobtest.NewMinIO(t)
	dir := t.TempDir()
	conf := writeBucketConfig(t, dir, "bucket.yml", minio.Endpoint, minio, "")
	env := []string{"AWS_SECRET_ACCESS_KEY=" + envSecret, "AWS_SESSION_TOKEN=" + envToken}
	port := freePort(t)
	srv := startChild(t, "server", env, strataBinary(t), "server", "--objstore.config-file", conf,
		"--loglevel", "debug", "--requirepass", requirePass, "--port", strconv.Itoa(port), "--shutdown-timeout", "5s")
	if err := srv.waitFor("ready to accept connections", 60*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.tail(20))
	}
	o := clientOptions(port)
	o.Password, o.MaxRetries = requirePass, -1
	rdb := newClientWith(t, o)
	ctx := context.Background()
	for i := range 50 {
		if err := rdb.Set(ctx, fmt.Sprintf("k%d", i), "v", 0).Err(); err != nil {
			t.Fatalf("SET: %v", err)
		}
	}
	var shown strings.Builder // everything the server answered
	info, err := rdb.Info(ctx, "everything").Result()
	if err != nil {
		t.Fatal(err)
	}
	shown.WriteString(info)
	all, err := rdb.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if all["requirepass"] != requirePass {
		t.Errorf("CONFIG GET * requirepass = %q; Redis shows it", all["requirepass"])
	}
	delete(all, "requirepass")
	fmt.Fprint(&shown, all)

	// The error path: the bucket goes away under writes, then comes back.
	minio.Stop(t)
	failed := 0
	for i := range 5 {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := rdb.Set(wctx, fmt.Sprintf("down%d", i), "v", 0).Err()
		cancel()
		if err != nil {
			failed++
			shown.WriteString(err.Error())
		}
	}
	minio.Start(t)
	if failed == 0 {
		t.Error("no write failed while the bucket was down: the error path was not taken")
	}
	srv.stop(30 * time.Second)

	outputs := map[string]string{"server": srv.out.String(), "INFO, CONFIG GET * and errors": shown.String()}
	for _, sub := range []string{"manifest", "history", "verify"} {
		cmd := exec.Command(strataBinary(t), "inspect", sub, "--objstore.config-file", conf)
		cmd.Env = append(os.Environ(), env...)
		out, _ := cmd.CombinedOutput()
		outputs["inspect "+sub] = string(out)
	}
	// Two servers that cannot start: nothing listens at the endpoint; the
	// session token is one MinIO refuses, and the S3 trace would print it
	// in every request's headers if the output were not scrubbed.
	dead := writeBucketConfig(t, dir, "dead.yml", "127.0.0.1:"+strconv.Itoa(freePort(t)), minio, "")
	withToken := writeBucketConfig(t, dir, "token.yml", minio.Endpoint, minio, "  session_token: "+confToken+"\n")
	for name, file := range map[string]string{"server on a dead endpoint": dead, "server with a bad token": withToken} {
		c := startChild(t, name, env, strataBinary(t), "server", "--objstore.config-file", file,
			"--loglevel", "debug", "--port", strconv.Itoa(freePort(t)))
		select {
		case <-c.exited:
		case <-time.After(90 * time.Second):
			t.Fatalf("%s did not give up", name)
		}
		outputs[name] = c.out.String()
		if !strings.Contains(outputs[name], "strata server: ") {
			t.Errorf("%s printed no startup error:\n%s", name, c.tail(5))
		}
	}
	if !strings.Contains(outputs["server"], "s3TraceMsg") || !strings.Contains(outputs["server with a bad token"], "X-Amz-Security-Token: [REDACTED]") {
		t.Errorf("the outputs lack the S3 trace of the token: the test would prove nothing")
	}
	for name, out := range outputs {
		for _, secret := range []string{minio.SecretKey, envSecret, envToken, confToken, requirePass} {
			if i := strings.Index(out, secret); i >= 0 {
				t.Errorf("%s shows the secret %q: ...%s...", name, secret, out[max(0, i-200):min(len(out), i+100)])
			}
		}
	}
}

// writeBucketConfig writes an objstore S3 configuration for m's bucket at
// endpoint, with the keys inline and every request traced into the debug
// log, plus extra lines of config, and returns its path.
func writeBucketConfig(t *testing.T, dir, name, endpoint string, m *blobtest.MinIOServer, extra string) string {
	t.Helper()
	body := fmt.Sprintf("type: S3\nconfig:\n  bucket: %s\n  endpoint: %s\n  insecure: true\n"+
		"  access_key: %s\n  secret_key: %s\n  trace:\n    enable: true\n%sprefix: creds\n",
		m.Bucket, endpoint, m.AccessKey, m.SecretKey, extra)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
