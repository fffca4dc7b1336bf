package keyspace

import (
	"context"
	"fmt"
	"testing"
)

// TestElementScans: HSCAN, SSCAN and ZSCAN page through every element
// exactly once, with MATCH.
func TestElementScans(t *testing.T) {
	ctx := context.Background()
	s, _ := openTestStore(t)
	const n = 95
	for i := range n {
		name := fmt.Appendf(nil, "e%03d", i)
		if _, err := s.HSet(ctx, 0, []byte("h"), [2][]byte{name, []byte("v")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SAdd(ctx, 0, []byte("s"), name); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ZAdd(ctx, 0, []byte("z"), ZAddOptions{}, ZMember{Score: float64(n - i), Member: name}); err != nil {
			t.Fatal(err)
		}
	}
	page := func(name string, scan func(cursor []byte) ([]byte, int, error)) {
		t.Helper()
		var cursor []byte
		total, pages := 0, 0
		for {
			next, got, err := scan(cursor)
			if err != nil {
				t.Fatal(err)
			}
			total += got
			pages++
			if next == nil {
				break
			}
			cursor = next
		}
		if total != n || pages < 9 {
			t.Fatalf("%s: %d elements in %d pages, want %d in at least 9", name, total, pages, n)
		}
	}
	page("HSCAN", func(c []byte) ([]byte, int, error) {
		nx, p, err := s.HScan(ctx, 0, []byte("h"), c, "", 10)
		return nx, len(p), err
	})
	page("SSCAN", func(c []byte) ([]byte, int, error) {
		nx, p, err := s.SScan(ctx, 0, []byte("s"), c, "", 10)
		return nx, len(p), err
	})
	page("ZSCAN", func(c []byte) ([]byte, int, error) {
		nx, p, err := s.ZScan(ctx, 0, []byte("z"), c, "", 10)
		return nx, len(p), err
	})
	_, got, err := s.ZScan(ctx, 0, []byte("z"), nil, "e00?", 1000)
	if err != nil || len(got) != 10 || got[3].Score != n-3 {
		t.Fatalf("ZSCAN MATCH e00? = %v, %v", got, err)
	}
}
