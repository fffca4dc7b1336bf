package blob

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/thanos-io/objstore"
)

// ParseFaultSpec parses the fault-injection spec of the chaos campaigns
// (the binary reads it from $STRATA_FAULTS): comma-separated settings,
//
//	error=0.05        every operation fails with this probability
//	slow=0.01:2s      every operation is delayed 2s with this probability
//	after-write=0.5   fraction of failed uploads and deletes that took effect
//	read-error=0.01   probability that a Get or GetRange body fails part way
//	seed=42           the random seed (default 1)
//
// An empty spec is an error: the caller asked for faults.
func ParseFaultSpec(spec string) (FaultConfig, error) {
	cfg := FaultConfig{Seed: 1}
	if strings.TrimSpace(spec) == "" {
		return cfg, fmt.Errorf("blob: empty fault spec")
	}
	for _, part := range strings.Split(spec, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return cfg, fmt.Errorf("blob: fault spec %q: want key=value", part)
		}
		var err error
		switch key {
		case "error":
			cfg.All, err = parseRate(val)
		case "after-write":
			cfg.UploadAfterWriteFraction, err = parseRate(val)
			cfg.DeleteAfterWriteFraction = cfg.UploadAfterWriteFraction
		case "read-error":
			cfg.ReadErrorRate, err = parseRate(val)
		case "slow":
			rate, d, cut := strings.Cut(val, ":")
			if !cut {
				return cfg, fmt.Errorf("blob: fault spec slow=%q: want rate:duration", val)
			}
			if cfg.LatencyRate, err = parseRate(rate); err != nil {
				break
			}
			var delay time.Duration
			if delay, err = time.ParseDuration(d); err == nil {
				cfg.Latency = map[string]time.Duration{}
				for _, op := range []string{objstore.OpGet, objstore.OpGetRange, objstore.OpUpload, objstore.OpDelete,
					objstore.OpIter, objstore.OpExists, objstore.OpAttributes} {
					cfg.Latency[op] = delay
				}
			}
		case "seed":
			cfg.Seed, err = strconv.ParseInt(val, 10, 64)
		default:
			return cfg, fmt.Errorf("blob: fault spec: unknown setting %q", key)
		}
		if err != nil {
			return cfg, fmt.Errorf("blob: fault spec %s: %v", part, err)
		}
	}
	return cfg, nil
}

func parseRate(s string) (float64, error) {
	r, err := strconv.ParseFloat(s, 64)
	if err == nil && (r < 0 || r > 1) {
		err = fmt.Errorf("rate %v not in [0, 1]", r)
	}
	return r, err
}
