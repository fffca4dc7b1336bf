package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Fixed test credentials: MinIO listens on 127.0.0.1 only.
const (
	accessKey = "strata"
	secretKey = "strata-secret"

	readyTimeout = 60 * time.Second // generous: a loaded 2-core CI box
	stopTimeout  = 10 * time.Second // SIGTERM grace before SIGKILL
)

// process is one MinIO server with its data directory. It keeps its address
// across stop and start, so clients configured before a restart still work.
type process struct {
	bin, dataDir, logPath string
	addr                  string // 127.0.0.1:port

	cmd    *exec.Cmd     // nil while stopped
	exited chan struct{} // closed when cmd has been waited for
}

// startProcess starts MinIO on a free port with its state under dir.
func startProcess(bin, dir string) (*process, error) {
	p := &process{
		bin:     bin,
		dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "minio.log"),
	}
	// The free port can be taken between probing and MinIO binding it, so a
	// failed start gets another port; three attempts make that race moot.
	var err error
	for range 3 {
		if p.addr, err = freeAddr(); err != nil {
			return nil, err
		}
		if err = p.start(); err == nil {
			return p, nil
		}
	}
	return nil, err
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("blobtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// start runs MinIO at p.addr and waits until it serves requests.
func (p *process) start() error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("blobtest: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(p.bin, "server", "--quiet", "--address", p.addr, p.dataDir)
	cmd.Env = minioEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("blobtest: starting %s: %w", p.bin, err)
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(p.exited)
	if err := p.waitReady(); err != nil {
		p.stop()
		return fmt.Errorf("%w\nminio log:\n%s", err, p.logTail())
	}
	return nil
}

// minioEnv is the test environment without inherited MINIO_* settings, which
// could point the test server at a developer's real configuration.
func minioEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MINIO_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"MINIO_ROOT_USER="+accessKey,
		"MINIO_ROOT_PASSWORD="+secretKey,
		"MINIO_BROWSER=off", // no web console, so no second listening port
		"MINIO_UPDATE=off",
		"MINIO_CI_CD=1", // accept a data directory on the root disk
	)
}

func (p *process) waitReady() error {
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	// ready, not live: a live MinIO may still answer requests with "Server
	// not initialized yet" while it loads its storage after a restart. Even
	// ready has been seen to answer 200 a moment before the S3 API stops
	// answering 503 (XMinioServerNotInitialized), so an anonymous S3
	// request must get something else (403) too.
	url := "http://" + p.addr + "/minio/health/ready"
	s3 := "http://" + p.addr + "/"
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("blobtest: minio exited during startup (%v)", p.cmd.ProcessState)
		default:
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if resp, err := client.Get(s3); err == nil {
					resp.Body.Close()
					if resp.StatusCode != http.StatusServiceUnavailable {
						return nil
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("blobtest: minio at %s not live after %v", p.addr, readyTimeout)
}

// stop terminates MinIO's whole process group: SIGTERM, then SIGKILL if it
// lingers. It returns once the process has been reaped.
func (p *process) stop() {
	if p.cmd == nil {
		return
	}
	pgid := p.cmd.Process.Pid // Setpgid: the group is named after the leader
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
	// The leader is gone; anything it left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	p.cmd = nil
}

func (p *process) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-20):], []byte("\n")))
}

// makeBucket creates a bucket, retrying while MinIO is live but has not yet
// finished initializing its storage.
func (p *process) makeBucket(name string) error {
	client, err := minio.New(p.addr, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, "")})
	if err != nil {
		return fmt.Errorf("blobtest: minio client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	for {
		err := client.MakeBucket(ctx, name, minio.MakeBucketOptions{})
		if err == nil {
			return nil
		}
		code := minio.ToErrorResponse(err).Code
		retry := code == "XMinioServerNotInitialized" || code == "ServiceUnavailable"
		if !retry || ctx.Err() != nil {
			return fmt.Errorf("blobtest: creating bucket %s: %w", name, errors.Join(err, ctx.Err()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
