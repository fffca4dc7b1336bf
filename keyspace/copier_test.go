package keyspace

import (
	"bytes"
	"fmt"
	"testing"
)

// TestCopierCopiesAreIndependent checks what a reply relies on: each copy
// keeps its bytes when the source changes, when more copies are made (into
// the same chunk or new ones, large ones too), and when a caller appends to
// a copy; nil stays nil and empty stays empty but not nil (a nil element
// would go out as a null bulk).
func TestCopierCopiesAreIndependent(t *testing.T) {
	var cp copier
	src := make([]byte, 0, 64<<10)
	var copies, want [][]byte
	for i := range 3000 {
		n := i % 40
		if i%500 == 7 {
			n = 20 << 10 // over a quarter chunk: copied on its own
		}
		src = src[:0]
		for j := range n {
			src = append(src, byte(i+j))
		}
		copies = append(copies, cp.copy(src))
		want = append(want, bytes.Clone(src))
		clear(src) // the engine reuses its buffers
	}
	// An append to a copy must not reach the next one.
	copies[10] = append(copies[10], 0xEE, 0xEE)
	want[10] = append(want[10], 0xEE, 0xEE)
	for i := range copies {
		if !bytes.Equal(copies[i], want[i]) {
			t.Fatalf("copy %d = %x, want %x", i, copies[i], want[i])
		}
	}
	if got := cp.copy(nil); got != nil {
		t.Fatalf("copy(nil) = %#v, want nil", got)
	}
	if got := cp.copy([]byte{}); got == nil || len(got) != 0 {
		t.Fatalf("copy(empty) = %#v, want empty, not nil", got)
	}
	var fresh copier
	if got := fresh.copy([]byte{}); got == nil {
		t.Fatal("copy(empty) on a new copier = nil, want empty, not nil")
	}
}

// BenchmarkCopier compares a copier with a clone per element for a reply
// of 100 short elements.
func BenchmarkCopier(b *testing.B) {
	elems := make([][]byte, 100)
	for i := range elems {
		elems[i] = fmt.Appendf(nil, "element:%d", i)
	}
	b.Run("copier", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var cp copier
			for _, e := range elems {
				_ = cp.copy(e)
			}
		}
	})
	b.Run("clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range elems {
				_ = bytes.Clone(e)
			}
		}
	})
}
