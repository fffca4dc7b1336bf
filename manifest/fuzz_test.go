package manifest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratakv/strata/lsm/sst"
)

// FuzzDecode feeds Decode arbitrary bytes, both as a whole object and as a
// body framed with a valid header and checksum (which random bytes almost
// never have), so the body decoder is explored too. Decode must not panic,
// must fail only with corruption, and whatever it accepts must be valid and
// re-encode to the same bytes: the encoding is unique.
func FuzzDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 16 {
		enc := randManifest(r).AppendEncoded(nil)
		f.Add(enc)
		f.Add(bodyOf(enc))
	}
	if golden, err := os.ReadFile(filepath.Join("testdata", "v1.manifest")); err == nil {
		f.Add(golden)
		f.Add(bodyOf(golden))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, reframe(FormatVersion, data)} {
			m, err := Decode(in, "fuzz")
			if err != nil {
				if !errors.Is(err, sst.ErrCorruption) {
					t.Fatalf("error without corruption: %v", err)
				}
				continue
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("decoded an invalid manifest: %v", err)
			}
			if re := m.AppendEncoded(nil); !bytes.Equal(re, in) {
				t.Fatalf("accepted input re-encodes differently:\n in %x\n re %x", in, re)
			}
		}
	})
}
