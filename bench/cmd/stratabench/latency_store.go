package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Helpers the latency and cost experiments share: strata servers on a data
// directory that outlives them (so a restart keeps the data and empties the
// block cache), an object store slowed by STRATA_FAULTS, INFO counter
// deltas, and a keyspace loaded into SSTs for point reads.

// objstoreOps are the operations INFO's # Objstore section counts
// (objstore_<op>), in table order.
var objstoreOps = []string{"upload", "get", "get_range", "exists", "attributes", "iter", "delete"}

// Counters are INFO's numeric fields at one moment.
type Counters map[string]float64

// ReadCounters reads s's INFO strata (Server.Info) and keeps the fields
// that are numbers.
func ReadCounters(s *Server) (Counters, error) {
	info, err := s.Info()
	if err != nil {
		return nil, err
	}
	out := Counters{}
	for k, v := range info {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out, nil
}

// Delta is after[k] - c[k]: c is the earlier reading.
func (c Counters) Delta(after Counters, k string) float64 { return after[k] - c[k] }

// bucketGets is GETs of any kind (whole and ranged) between two readings.
func (c Counters) bucketGets(after Counters) float64 {
	return c.Delta(after, "objstore_get") + c.Delta(after, "objstore_get_range")
}

// slowStoreEnv is the server environment that delays every object-store
// call by d, under the retry layer (blob.ParseFaultSpec); none for d = 0.
func slowStoreEnv(d time.Duration) []string {
	if d <= 0 {
		return nil
	}
	return []string{"STRATA_FAULTS=slow=1:" + d.String()}
}

// startOnDir starts strata on the local bucket dir, which outlives the
// server: the later --dir overrides StartStrata's own temp directory, and
// Stop removes only that one.
func startOnDir(ctx context.Context, dir string, storeDelay time.Duration, args ...string) (*Server, error) {
	return StartStrata(ctx, slowStoreEnv(storeDelay), append([]string{"--dir", dir}, args...)...)
}

// readKey names the i-th key of a loaded keyspace.
func readKey(i uint64) string { return fmt.Sprintf("r%08d", i) }

// loadKeyspace writes n keys of valueSize random (incompressible) bytes
// into a new local bucket under parent with a server on an undelayed
// store, saves the memtable to SSTs, waits for compaction to settle and
// stops the server. It returns the bucket directory.
func loadKeyspace(ctx context.Context, env *Env, parent string, n, valueSize int) (string, error) {
	dir := filepath.Join(parent, "keyspace")
	srv, err := startOnDir(ctx, dir, 0, "--appendfsync", "everysec")
	if err != nil {
		return "", err
	}
	defer srv.Stop()
	const pipeline = 50
	start := time.Now()
	res, err := Drive(ctx, DriveOptions{Addr: srv.Addr, Conns: 4, Total: uint64((n + pipeline - 1) / pipeline), Seed: 7},
		func(c *Conn, _ int, i uint64, rng *rand.Rand) int {
			sent := 0
			for k := i * pipeline; k < min((i+1)*pipeline, uint64(n)); k++ {
				v := make([]byte, valueSize)
				for j := range v {
					v[j] = byte(rng.Uint32())
				}
				c.Send("SET", readKey(k), v)
				sent++
			}
			return sent
		})
	if err != nil {
		return "", err
	}
	if res.FirstErr != nil || res.Ops != uint64(n) {
		return "", fmt.Errorf("loading: %d of %d keys, first error %v", res.Ops, n, res.FirstErr)
	}
	if err := doOnce(srv.Addr, "SAVE"); err != nil {
		return "", err
	}
	if err := settle(ctx, srv, 3*time.Second, 3*time.Minute); err != nil {
		return "", err
	}
	c, _ := ReadCounters(srv)
	fmt.Fprintf(env.Log, "loaded %d keys × %d B in %v: %.0f SSTs, %.0f MB, %.0f sorted runs, %.0f in L0\n", n, valueSize,
		time.Since(start).Round(time.Second), c["lsm_ssts"], c["lsm_sst_bytes"]/1e6, c["lsm_sorted_runs"], c["lsm_l0_ssts"])
	return dir, nil
}

// doOnce sends one command on a new connection and fails on an error reply.
func doOnce(addr string, args ...any) error {
	c, err := Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do(args...)
	return err
}

// settle waits until no memtable is waiting for a flush and the manifest
// has not changed for quiet (compactions publish manifests), at most limit.
func settle(ctx context.Context, s *Server, quiet, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	last, since := -1.0, time.Now()
	for time.Now().Before(deadline) {
		c, err := ReadCounters(s)
		if err != nil {
			return err
		}
		if id := c["lsm_manifest_id"]; id != last || c["lsm_immutable_memtables"] > 0 {
			last, since = id, time.Now()
		} else if time.Since(since) >= quiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: compaction did not settle in %v", s.Name, limit)
}

// parseList splits a comma-separated flag value and parses each item.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// tempDir makes a scratch directory for an experiment's kept data.
func tempDir(name string) (string, error) { return os.MkdirTemp("", "stratabench-"+name+"-") }
