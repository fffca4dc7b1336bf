package metrics

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/manifest"
)

// fenceCheckInterval is how long a fence check's answer is reused, so a
// burst of probes costs the bucket one read.
const fenceCheckInterval = time.Second

// WriterCheck returns a readiness check that fails once a manifest in bkt
// carries a writer epoch above epoch: a newer server has taken the bucket
// over, and this one no longer accepts writes. The engine learns this on its
// own manifest poll; the check reads the bucket itself because lsm.DB does
// not expose its sticky error. Each check probes only the manifest ids after
// the newest one seen (one GET that is usually absent).
func WriterCheck(bkt objstore.Bucket, epoch uint64) func(context.Context) error {
	store := manifest.NewStore(bkt)
	var (
		mu      sync.Mutex
		cur     *manifest.Manifest
		checked time.Time
		last    error
	)
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if !checked.IsZero() && time.Since(checked) < fenceCheckInterval {
			return last
		}
		m, err := store.Refresh(ctx, cur)
		switch {
		case err != nil:
			// An unreachable bucket does not make the server unready: it
			// still serves reads from memory and retries its writes.
			last = nil
		case m.WriterEpoch > epoch:
			cur, last = m, fmt.Errorf("fenced: manifest %d has writer epoch %d, ours is %d", m.ID, m.WriterEpoch, epoch)
		default:
			cur, last = m, nil
		}
		checked = time.Now()
		return last
	}
}
