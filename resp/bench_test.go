package resp

import (
	"bufio"
	"fmt"
	"net"
	"testing"

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

func BenchmarkGetPipelined(b *testing.B) {
	benchPipeline(b, Config{AppendFsync: "everysec"}, 16, func(i int) []string {
		return []string{"GET", fmt.Sprintf("key:%06d", i%100000)}
	})
}
