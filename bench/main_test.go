package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

var (
	flagGetKeys        = flag.Int("get.keys", 200_000, "keys preloaded for BenchmarkGet and BenchmarkScan")
	flagColdCache      = flag.Int64("get.coldcache", 1<<20, "block cache bytes of the cold read benchmarks")
	flagHotCache       = flag.Int64("get.hotcache", 256<<20, "block cache bytes of the hot read benchmarks")
	flagScanKeys       = flag.Int("scan.keys", 100, "keys read per scan")
	flagWALRate        = flag.Int("walrate.rate", 5000, "target writes/s of BenchmarkWALPutRate")
	flagWALWriters     = flag.Int("walrate.writers", 64, "writer goroutines of BenchmarkWALPutRate")
	flagWALDuration    = flag.Duration("walrate.duration", 2*time.Second, "length of one BenchmarkWALPutRate run")
	flagRecoveryBytes  = flag.Int64("recovery.bytes", 256<<20, "bytes written before BenchmarkRecovery reopens")
	flagRecoveryValue  = flag.Int("recovery.value", 1000, "value size of BenchmarkRecovery")
	flagRecoveryWriter = flag.Int("recovery.writers", 4, "writer goroutines of BenchmarkRecovery's load")
)

// fixtureRoot holds the preloaded databases shared by the read benchmarks.
var fixtureRoot string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureRoot = dir
	code := m.Run()
	if err := closeFixtures(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: close fixtures:", err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestEnginesAgree runs the adapters the benchmarks use against both
// engines and checks they return the same data, so that a benchmark never
// measures an adapter that silently does less work on one side.
func TestEnginesAgree(t *testing.T) {
	ctx := context.Background()
	const n = 3000
	key := func(i int) []byte { return makeKey(uint64(i), true) }
	value := func(i int) []byte { return makeValue(uint64(i), valueSize) }
	for _, name := range engineNames {
		t.Run(name, func(t *testing.T) {
			e, err := openEngine(ctx, name, t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer e.close()
			if err := e.load(ctx, n, key, value); err != nil {
				t.Fatal(err)
			}
			extra := makeKey(n, true)
			if err := e.putDurable(ctx, extra, []byte("late")); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i += 7 {
				v, ok, err := e.get(ctx, key(i))
				if err != nil || !ok || !bytes.Equal(v, value(i)) {
					t.Fatalf("get %s: ok=%v err=%v, value matches=%v", key(i), ok, err, bytes.Equal(v, value(i)))
				}
			}
			if v, ok, err := e.get(ctx, extra); err != nil || !ok || string(v) != "late" {
				t.Fatalf("get after putDurable: %q %v %v", v, ok, err)
			}
			if _, ok, err := e.get(ctx, []byte("no-such-key-0000")); err != nil || ok {
				t.Fatalf("get missing key: ok=%v err=%v", ok, err)
			}
			checkScan(t, ctx, e, n+1)
		})
	}
}

// checkScan compares a scan from a fixed start with the sorted key set.
func checkScan(t *testing.T, ctx context.Context, e engine, n int) {
	all := make([][]byte, n)
	for i := range all {
		all[i] = makeKey(uint64(i), true)
	}
	slices.SortFunc(all, bytes.Compare)
	start := all[n/2]
	keys, size, err := e.scan(ctx, start, 50)
	if err != nil {
		t.Fatal(err)
	}
	if keys != 50 || size < 50*(keySize+4) {
		t.Fatalf("scan from %s: %d keys, %d bytes; want 50 keys", start, keys, size)
	}
	keys, _, err = e.scan(ctx, all[n-3], 50)
	if err != nil || keys != 3 {
		t.Fatalf("scan near the end: %d keys (want 3), err %v", keys, err)
	}
}
