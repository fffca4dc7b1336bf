package blobtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RequireCommand returns the path of the executable name on PATH. When it is
// missing the test is skipped, or failed under CI=true.
func RequireCommand(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s not found on PATH", name)
	}
	return path
}

// missing reports an absent test dependency: a skip on a developer machine,
// a failure in CI, where every dependency must be installed.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: test dependencies are required; scripts/test.sh installs them)", msg)
	}
	t.Skipf("%s; scripts/test.sh installs it", msg)
}

var errNoMinIO = errors.New("blobtest: no minio binary in $STRATA_MINIO_BIN, $STRATA_CACHE or PATH")

// minioBinary finds the MinIO server binary. An explicit $STRATA_MINIO_BIN
// that does not exist is an error of its own, not a reason to skip: the
// caller asked for that binary.
func minioBinary() (string, error) {
	if err := waitForBuild(); err != nil {
		return "", err
	}
	if bin := os.Getenv("STRATA_MINIO_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("blobtest: STRATA_MINIO_BIN: %w", err)
		}
		return bin, nil
	}
	cache := os.Getenv("STRATA_CACHE")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache", "strata", "bin")
		}
	}
	if cache != "" {
		bin := filepath.Join(cache, "minio")
		if _, err := os.Stat(bin); err == nil {
			return bin, nil
		}
	}
	if bin, err := exec.LookPath("minio"); err == nil {
		return bin, nil
	}
	return "", errNoMinIO
}

// waitForBuild waits for a MinIO build that scripts/test.sh runs beside the
// tests: it names a status file in $STRATA_MINIO_STATUS that the build
// writes when it ends ("ok" or "failed"). Only tests that need MinIO wait,
// so the rest of the suite runs during the build.
func waitForBuild() error {
	status := os.Getenv("STRATA_MINIO_STATUS")
	if status == "" {
		return nil
	}
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(status)
		if err == nil && len(b) > 0 {
			if strings.TrimSpace(string(b)) != "ok" {
				return fmt.Errorf("%w: the MinIO build failed (see scripts/test.sh output)", errNoMinIO)
			}
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("blobtest: the MinIO build did not finish within 30 minutes")
}
