package blob

import (
	"testing"
	"time"

	"github.com/thanos-io/objstore"
)

func TestParseFaultSpec(t *testing.T) {
	cfg, err := ParseFaultSpec("error=0.05, slow=0.01:2s,after-write=0.5,read-error=0.02,seed=7")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.All != 0.05 || cfg.LatencyRate != 0.01 || cfg.Latency[objstore.OpUpload] != 2*time.Second ||
		cfg.Latency[objstore.OpIter] != 2*time.Second || cfg.UploadAfterWriteFraction != 0.5 ||
		cfg.DeleteAfterWriteFraction != 0.5 || cfg.ReadErrorRate != 0.02 || cfg.Seed != 7 {
		t.Errorf("parsed %+v", cfg)
	}
	for _, bad := range []string{"", "error", "error=2", "error=x", "slow=0.1", "slow=0.1:soon", "colour=red", "seed=a"} {
		if _, err := ParseFaultSpec(bad); err == nil {
			t.Errorf("ParseFaultSpec(%q) accepted", bad)
		}
	}
}
