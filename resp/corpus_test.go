package resp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakv/strata/resp/resptest"
)

// TestCorpus runs every script of testdata/ against a Strata server and a
// real redis-server 7, comparing every reply byte for byte (or under the
// script's documented ordering exceptions).
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	redisAddr := resptest.StartRedis(t)
	ts := startServer(t, Config{})
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			resptest.RunScript(t, f, ts.addr, redisAddr)
		})
	}
}
