package resp

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/resp/resptest"
)

// benchPipeline sends b.N commands over one connection in pipelines of
// depth, as redis-benchmark -P does, and reads every reply.
func benchPipeline(b *testing.B, cfg Config, depth int, cmd func(i int) []string) {
	ts := startServer(b, cfg)
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReader(nc)
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += depth {
		buf = buf[:0]
		n := min(depth, b.N-i)
		for j := range n {
			buf = resptest.AppendCommand(buf, cmd(i+j)...)
		}
		if _, err := nc.Write(buf); err != nil {
			b.Fatal(err)
		}
		for range n {
			if _, err := resptest.ReadFrame(rd); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkSetPipelinedAsync(b *testing.B) {
	benchPipeline(b, Config{AppendFsync: "everysec"}, 16, func(i int) []string {
		return []string{"SET", fmt.Sprintf("key:%06d", i%100000), "xxx"}
	})
}

func BenchmarkSetPipelinedDurable(b *testing.B) {
	benchPipeline(b, Config{}, 16, func(i int) []string {
		return []string{"SET", fmt.Sprintf("key:%06d", i%100000), "xxx"}
	})
}

func BenchmarkIncrPipelined(b *testing.B) {
	benchPipeline(b, Config{AppendFsync: "everysec"}, 16, func(i int) []string {
		return []string{"INCR", fmt.Sprintf("counter:%06d", i%100000)}
	})
}

func BenchmarkHSetPipelined(b *testing.B) {
	benchPipeline(b, Config{AppendFsync: "everysec"}, 16, func(i int) []string {
		return []string{"HSET", "myhash", fmt.Sprintf("field:%06d", i%100000), "xxx"}
	})
}

func BenchmarkZAddPipelined(b *testing.B) {
	benchPipeline(b, Config{AppendFsync: "everysec"}, 16, func(i int) []string {
		return []string{"ZADD", "myzset", fmt.Sprint(i % 1000), fmt.Sprintf("element:%06d", i%100000)}
	})
}

func BenchmarkGetPipelined(b *testing.B) {
	benchPipeline(b, Config{AppendFsync: "everysec"}, 16, func(i int) []string {
		return []string{"GET", fmt.Sprintf("key:%06d", i%100000)}
	})
}

// TestUnderRedisBenchmark runs redis-benchmark against an in-process
// server on the local-disk bucket, for profiling the server's hot paths:
//
//	STRATA_REDIS_BENCHMARK="-t set,get -P 16" go test ./resp -run UnderRedisBenchmark -cpuprofile cpu.out
//
// It is skipped unless STRATA_REDIS_BENCHMARK is set; the figures of record
// come from the matrix experiment of bench/cmd/stratabench.
func TestUnderRedisBenchmark(t *testing.T) {
	extra := os.Getenv("STRATA_REDIS_BENCHMARK")
	if extra == "" {
		t.Skip("set STRATA_REDIS_BENCHMARK to redis-benchmark's arguments to run it")
	}
	bin := blobtest.RequireCommand(t, "redis-benchmark")
	bkt, err := blob.NewLocalBucket(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	fsync := os.Getenv("STRATA_APPENDFSYNC")
	ts := startServer(t, Config{AppendFsync: fsync}, bkt)
	_, port, _ := net.SplitHostPort(ts.addr)
	args := append([]string{"-p", port, "-c", "50", "-n", "200000", "-r", "100000", "-q"}, strings.Fields(extra)...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	t.Logf("redis-benchmark %s:\n%s", strings.Join(args, " "), out)
}
