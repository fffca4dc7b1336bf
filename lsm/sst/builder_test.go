package sst

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestBuilderYields: on a single processor, another goroutine runs while a
// builder adds rows, long before the scheduler would preempt the builder
// (10 ms): what lets clients run during a memtable flush or a compaction.
func TestBuilderYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ran atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				ran.Add(1)
				runtime.Gosched()
			}
		}
	}()
	keys := make([][]byte, 4*yieldRows)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%08d", i)
	}
	b := NewBuilder(BuilderOptions{})
	before := ran.Load()
	for i, k := range keys {
		if err := b.Add(Row{Key: k, Seq: uint64(i + 1), Kind: KindPut, Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	during := ran.Load() - before
	close(stop)
	<-done
	if during == 0 {
		t.Fatalf("no other goroutine ran while the builder added %d rows", len(keys))
	}
}
