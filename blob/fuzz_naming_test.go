package blob

import (
	"strings"
	"testing"
)

// FuzzParseNames: object names come from bucket listings, which may hold
// anything. A name parses only if it ends with exactly what the matching
// make function writes (after any bucket prefix), so two names under one
// prefix never map to one id.
func FuzzParseNames(f *testing.F) {
	for _, s := range []string{WALName(1), ManifestName(12345), SSTName(NewSSTID()), "wal/1.sst",
		"wal/+0000000000000000001.sst", "manifest/00000000000000000001.sst", "sst/zzz.sst", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if id, ok := ParseWALName(name); ok && !madeBy(name, WALName(id)) {
			t.Fatalf("ParseWALName(%q) = %d, which is named %q", name, id, WALName(id))
		}
		if id, ok := ParseManifestName(name); ok && !madeBy(name, ManifestName(id)) {
			t.Fatalf("ParseManifestName(%q) = %d, which is named %q", name, id, ManifestName(id))
		}
		if id, ok := ParseSSTName(name); ok && !madeBy(name, SSTName(id)) {
			t.Fatalf("ParseSSTName(%q) = %s, which is named %q", name, id, SSTName(id))
		}
	})
}

// madeBy reports whether name is made, a name without a prefix, under some
// bucket prefix (empty or ending in '/').
func madeBy(name, made string) bool {
	prefix, ok := strings.CutSuffix(name, made)
	return ok && (prefix == "" || strings.HasSuffix(prefix, "/"))
}
