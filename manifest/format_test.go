package manifest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/stratakv/strata/lsm/sst"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata golden files")

func TestRoundTrip(t *testing.T) {
	r := newRand(t)
	for i := range 2000 {
		m := randManifest(r)
		if err := m.Validate(); err != nil {
			t.Fatalf("generator made an invalid manifest: %v", err)
		}
		enc := m.AppendEncoded(nil)
		got, err := Decode(enc, "rt")
		if err != nil {
			t.Fatalf("manifest %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("manifest %d: round trip differs:\n got %+v\nwant %+v", i, got, m)
		}
		if re := got.AppendEncoded(nil); !bytes.Equal(re, enc) {
			t.Fatalf("manifest %d: re-encoding differs", i)
		}
	}
}

func TestAppendEncodedKeepsPrefix(t *testing.T) {
	m := randManifest(newRand(t))
	prefix := []byte("prefix")
	out := m.AppendEncoded(bytes.Clone(prefix))
	if !bytes.HasPrefix(out, prefix) {
		t.Fatal("prefix overwritten")
	}
	if _, err := Decode(out[len(prefix):], "p"); err != nil {
		t.Fatalf("decode after prefix: %v", err)
	}
}

func TestDecodeOwnsMemory(t *testing.T) {
	m := &Manifest{LastSeq: 9, L0: []SST{{Stats: sst.Stats{Smallest: []byte("a"), Largest: []byte("b"), MaxSeq: 9}}}}
	enc := m.AppendEncoded(nil)
	got, err := Decode(enc, "o")
	if err != nil {
		t.Fatal(err)
	}
	clear(enc)
	if string(got.L0[0].Stats.Smallest) != "a" || string(got.L0[0].Stats.Largest) != "b" {
		t.Fatal("decoded manifest aliases its input")
	}
}

// Every single-byte change is caught: CRC-32C detects every burst error of
// up to 32 bits, and a change to the checksum itself is a mismatch.
func TestDecodeEveryByteFlipped(t *testing.T) {
	r := newRand(t)
	for range 20 {
		enc := randManifest(r).AppendEncoded(nil)
		for i := range enc {
			for _, mask := range []byte{0x01, 0x80, 0xff, byte(r.IntN(255) + 1)} {
				bad := bytes.Clone(enc)
				bad[i] ^= mask
				if _, err := Decode(bad, "flip"); !errors.Is(err, sst.ErrCorruption) {
					t.Fatalf("byte %d ^ %#x: err = %v, want corruption", i, mask, err)
				}
			}
		}
	}
}

func TestDecodeTruncated(t *testing.T) {
	enc := randManifest(newRand(t)).AppendEncoded(nil)
	for n := range len(enc) {
		if _, err := Decode(enc[:n], "trunc"); !errors.Is(err, sst.ErrCorruption) {
			t.Fatalf("prefix of %d/%d bytes: err = %v, want corruption", n, len(enc), err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	m := &Manifest{ID: 7, LastSeq: 5, NextRunID: 1, L0: []SST{{ID: ulid.ULID{1}, Stats: sst.Stats{MaxSeq: 5}}}}
	enc := m.AppendEncoded(nil)
	body := bodyOf(enc)
	invalid := &Manifest{LastSeq: 1, L0: []SST{{Stats: sst.Stats{MaxSeq: 2}}}} // max seq > last seq

	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "too short", nil},
		{"bad magic", "bad magic", append([]byte("NOTAMANI"), enc[len(magic):]...)},
		{"bad checksum", "bad checksum", append(bytes.Clone(enc[:len(enc)-1]), enc[len(enc)-1]^1)},
		{"unknown version", "unsupported format version 2", reframe(2, body)},
		{"version zero", "unsupported format version 0", reframe(0, body)},
		{"trailing bytes", "1 trailing bytes", reframe(1, append(bytes.Clone(body), 0))},
		{"truncated body", "truncated", reframe(1, body[:len(body)-1])},
		{"non-minimal varint", "non-minimal varint", reframe(1, append([]byte{0x87, 0x00}, body[1:]...))},
		{"varint overflow", "malformed varint", reframe(1, bytes.Repeat([]byte{0xff}, 11))},
		{"huge l0 count", "element count exceeds", reframe(1, append(bytes.Repeat([]byte{0}, 8), 0xff, 0xff, 0xff, 0xff, 0x0f))},
		{"huge key length", "truncated", reframe(1, hugeKeyBody())},
		{"invalid manifest", "max seq 2 > manifest last seq 1", invalid.AppendEncoded(nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.data, "manifest/x.manifest")
			if !errors.Is(err, sst.ErrCorruption) {
				t.Fatalf("err = %v, want corruption", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "manifest/x.manifest") {
				t.Fatalf("err = %q, want it to name the object and say %q", err, c.want)
			}
		})
	}
}

// hugeKeyBody is a body whose one L0 SST claims a smallest key far longer
// than the object.
func hugeKeyBody() []byte {
	b := bytes.Repeat([]byte{0}, 8)              // the eight scalar fields
	b = append(b, 1)                             // one L0 SST
	b = append(b, make([]byte, 16+1)...)         // ulid, size
	b = binary.AppendUvarint(b, 1<<40)           // smallest length
	return append(b, make([]byte, minSSTLen)...) // enough bytes to pass the count check
}

func TestDecodeOffsets(t *testing.T) {
	_, err := Decode(reframe(1, []byte{1, 2, 3}), "off")
	// Three scalar fields decode, the fourth finds no bytes at offset 10+3.
	if err == nil || !strings.Contains(err.Error(), "at offset 13") {
		t.Fatalf("err = %v, want offset 13", err)
	}
}

// goldenManifest is fixed: its encoding is pinned in testdata, so a change to
// format version 1 fails this test instead of silently breaking old buckets.
func goldenManifest() *Manifest {
	return &Manifest{
		ID: 42, WriterEpoch: 3, CompactorEpoch: 2,
		ReplayAfterWALID: 1000, NextWALID: 1002, LastSeq: 123456, ClockTick: 1700000000000, NextRunID: 8,
		L0: []SST{
			{ID: ulid.MustParse("01J0000000000000000000000B"), Size: 4096, Stats: sst.Stats{
				Smallest: []byte("apple"), Largest: []byte("zebra"), MinSeq: 123000, MaxSeq: 123456,
				Entries: 456, Tombstones: 7, EarliestExpiry: 1700000005000, ClockTick: 1700000000000}},
			{ID: ulid.MustParse("01J0000000000000000000000A"), Size: 100, Stats: sst.Stats{
				Smallest: []byte("b"), Largest: []byte("c"), MinSeq: 1, MaxSeq: 122999, Entries: 2, ClockTick: -1}},
		},
		Runs: []Run{
			{ID: 7, SSTs: []SST{
				{ID: ulid.MustParse("01HZ000000000000000000000A"), Size: 1 << 26, Stats: sst.Stats{
					Smallest: []byte("a"), Largest: []byte("m"), MaxSeq: 99, Entries: 1 << 20}},
				{ID: ulid.MustParse("01HZ000000000000000000000B"), Size: 1 << 25, Stats: sst.Stats{
					Smallest: []byte("n"), Largest: []byte("z\xff"), MaxSeq: 98, Entries: 1 << 19}},
			}},
			{ID: 2},
		},
	}
}

func TestGoldenV1(t *testing.T) {
	path := filepath.Join("testdata", "v1.manifest")
	enc := goldenManifest().AppendEncoded(nil)
	if *rewrite {
		if err := os.WriteFile(path, enc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if !bytes.Equal(enc, want) {
		t.Fatalf("format version 1 encoding changed: add a new version instead\n got %x\nwant %x", enc, want)
	}
	got, err := Decode(want, path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, goldenManifest()) {
		t.Fatalf("golden decodes to %+v", got)
	}
}
