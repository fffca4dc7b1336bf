package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratakv/strata/blob/blobtest"
)

// TestPGOScript runs scripts/pgo.sh briefly on the tests' binary: it must
// write a CPU profile that go tool pprof reads and that holds the server's
// command path, the part of the binary the profile is meant to shape.
func TestPGOScript(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers and runs redis-benchmark through the script")
	}
	blobtest.RequireCommand(t, "redis-benchmark")
	blobtest.RequireCommand(t, "curl")
	bash := blobtest.RequireCommand(t, "bash")
	goBin := blobtest.RequireCommand(t, "go")
	script, err := filepath.Abs(filepath.Join("..", "scripts", "pgo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "default.pgo")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, script)
	cmd.Env = append(os.Environ(), "PGO_SECONDS=3", "PGO_OUT="+out, "STRATA_BIN="+strataBinaryNoRace(t))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgo.sh: %v\n%s", err, b)
	}
	top, err := exec.CommandContext(ctx, goBin, "tool", "pprof", "-top", "-cum", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top %s: %v\n%s", out, err, top)
	}
	for _, fn := range []string{"resp.(*client).serve", "keyspace.(*Store).Set"} {
		if !strings.Contains(string(top), fn) {
			t.Errorf("the profile has no %s:\n%.3000s", fn, top)
		}
	}
}
