package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestDriveAgainstStrata: the load driver's SETs land (a GET of each key
// written returns its value) and its counts and latencies add up.
func TestDriveAgainstStrata(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs strata server")
	}
	ctx := context.Background()
	srv, err := StartStrata(ctx, nil, "--appendfsync", "everysec")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	const n = 2000
	res, err := Drive(ctx, DriveOptions{Addr: srv.Addr, Conns: 4, Total: n / 10}, func(c *Conn, w int, i uint64, _ *rand.Rand) int {
		for j := range uint64(10) {
			c.Send("SET", "k"+strconv.FormatUint(i*10+j, 10), "v"+strconv.FormatUint(i*10+j, 10))
		}
		return 10
	})
	if err != nil || res.FirstErr != nil {
		t.Fatal(err, res.FirstErr)
	}
	if res.Ops != n || res.Latency.Count() != n/10 || res.Errors != 0 {
		t.Fatalf("ops %d, latency records %d, errors %d; want %d, %d, 0", res.Ops, res.Latency.Count(), res.Errors, n, n/10)
	}
	if p50, p99 := res.Latency.Quantile(0.5), res.Latency.Quantile(0.99); p50 <= 0 || p99 < p50 || p99 > time.Minute {
		t.Errorf("p50 %v, p99 %v", p50, p99)
	}
	c, err := Dial(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, i := range []int{0, 777, n - 1} {
		v, err := c.Do("GET", "k"+strconv.Itoa(i))
		if err != nil || string(v.([]byte)) != "v"+strconv.Itoa(i) {
			t.Errorf("GET k%d = %q, %v", i, v, err)
		}
	}
	info, err := srv.Info()
	if err != nil || info["lsm_writes"] == "" || srv.PeakRSS() <= 0 {
		t.Errorf("INFO lsm_writes %q (%v), peak RSS %d", info["lsm_writes"], err, srv.PeakRSS())
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, time.Second}} {
		got := h.Quantile(tc.q)
		if d := float64(got-tc.want) / float64(tc.want); d < -0.03 || d > 0.03 {
			t.Errorf("q%v = %v, want %v ±3%%", tc.q, got, tc.want)
		}
	}
}
