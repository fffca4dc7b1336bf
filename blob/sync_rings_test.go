package blob

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestSyncRings: concurrent syncs of files and a directory each succeed on
// a ring of their own, at most maxIdleRings are kept between them, and
// after close syncs still succeed (as system calls).
func TestSyncRings(t *testing.T) {
	dir := t.TempDir()
	var p syncRings
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Create(filepath.Join(dir, string(rune('a'+g))))
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for i := range 20 {
				if _, err := f.Write(bytes.Repeat([]byte{byte(i)}, 4096)); err != nil {
					t.Error(err)
					return
				}
				if err := p.fdatasync(f); err != nil {
					t.Errorf("file %d sync %d: %v", g, i, err)
					return
				}
				if err := p.fdatasync(d); err != nil {
					t.Errorf("directory sync: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	p.mu.Lock()
	idle := len(p.idle)
	p.mu.Unlock()
	if idle > maxIdleRings {
		t.Fatalf("%d idle rings kept, want at most %d", idle, maxIdleRings)
	}
	p.close()
	if err := p.fdatasync(d); err != nil {
		t.Fatalf("sync after close: %v", err)
	}
	if len(p.idle) != 0 {
		t.Fatalf("close left %d idle rings; a sync after it kept one", len(p.idle))
	}
}

// TestYieldingWriter: an upload's copy through it reaches the file whole
// and in order, whatever its size against the yield interval.
func TestYieldingWriter(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, yieldBytes - 1, yieldBytes, yieldBytes + 1, 3*yieldBytes + 5} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7 / 3)
		}
		path := filepath.Join(dir, "f")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.Copy(&yieldingWriter{f: f}, bytes.NewReader(data))
		f.Close()
		if err != nil || got != int64(n) {
			t.Fatalf("copy of %d bytes = %d, %v", n, got, err)
		}
		back, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, data) {
			t.Fatalf("file of a %d-byte copy differs (%d bytes read)", n, len(back))
		}
	}
}
