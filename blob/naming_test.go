package blob

import (
	"sync"
	"testing"

	"github.com/oklog/ulid/v2"
)

func TestNamingRoundTrips(t *testing.T) {
	for _, id := range []uint64{0, 1, 42, 1<<64 - 1} {
		m := ManifestName(id)
		if got, ok := ParseManifestName(m); !ok || got != id {
			t.Errorf("ParseManifestName(%q) = %d, %v", m, got, ok)
		}
		if got, ok := ParseManifestName("tenant/a/" + m); !ok || got != id {
			t.Errorf("with a prefix: ParseManifestName = %d, %v", got, ok)
		}
		w := WALName(id)
		if got, ok := ParseWALName(w); !ok || got != id {
			t.Errorf("ParseWALName(%q) = %d, %v", w, got, ok)
		}
		if _, ok := ParseManifestName(w); ok {
			t.Errorf("a WAL name %q parsed as a manifest", w)
		}
	}
	if got := ManifestName(42); got != "manifest/00000000000000000042.manifest" {
		t.Errorf("ManifestName(42) = %q", got)
	}
	if got := WALName(42); got != "wal/00000000000000000042.sst" {
		t.Errorf("WALName(42) = %q", got)
	}
	id := NewSSTID()
	if got, ok := ParseSSTName(SSTName(id)); !ok || got != id {
		t.Errorf("ParseSSTName(SSTName(%v)) = %v, %v", id, got, ok)
	}
}

func TestNamingRejects(t *testing.T) {
	for _, name := range []string{
		"manifest/42.manifest", "manifest/0000000000000000004x.manifest", "manifest/00000000000000000042.sst",
		"xmanifest/00000000000000000042.manifest", "manifest/sub/00000000000000000042.manifest",
		"manifest/99999999999999999999.manifest", "manifest/", "",
	} {
		if _, ok := ParseManifestName(name); ok {
			t.Errorf("ParseManifestName(%q) accepted", name)
		}
	}
	for _, name := range []string{"sst/nope.sst", "sst/" + NewSSTID().String() + ".manifest", "wal/" + NewSSTID().String() + ".sst"} {
		if _, ok := ParseSSTName(name); ok {
			t.Errorf("ParseSSTName(%q) accepted", name)
		}
	}
}

func TestNewSSTIDUniqueAndOrdered(t *testing.T) {
	const goroutines, per = 8, 500
	ids := make(chan ulid.ULID, goroutines*per)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev := ulid.ULID{}
			for range per {
				id := NewSSTID()
				if id.Compare(prev) <= 0 {
					t.Errorf("id %v not after %v from the same goroutine", id, prev)
				}
				prev = id
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[ulid.ULID]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %v", id)
		}
		seen[id] = true
	}
}
