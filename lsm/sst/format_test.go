package sst

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestDecodeVarints checks decodeUvarint, decodeVarint and the row
// decoder's uvarintAt and varintAt against encoding/binary: every one-byte
// encoding, longer ones, and malformed ones (cut short, over 64 bits).
func TestDecodeVarints(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 1 << 20, -1 << 40, 1<<63 - 1, -1 << 63} {
		b := binary.AppendVarint(nil, v)
		got, rest, err := decodeVarint(append(b, 0xAA))
		if err != nil || got != v || len(rest) != 1 || rest[0] != 0xAA {
			t.Errorf("decodeVarint(%x) = %d, %x, %v; want %d", b, got, rest, err, v)
		}
		u := uint64(v)
		b = binary.AppendUvarint(nil, u)
		gotU, rest, err := decodeUvarint(append(b, 0xAA))
		if err != nil || gotU != u || len(rest) != 1 || rest[0] != 0xAA {
			t.Errorf("decodeUvarint(%x) = %d, %x, %v; want %d", b, gotU, rest, err, u)
		}
		in := append([]byte{0xEE}, b...)
		if gotU, p := uvarintAt(in, 1); gotU != u || p != len(in) {
			t.Errorf("uvarintAt(%x, 1) = %d, %d; want %d, %d", in, gotU, p, u, len(in))
		}
		in = append([]byte{0xEE}, binary.AppendVarint(nil, v)...)
		if got, p := varintAt(in, 1); got != v || p != len(in) {
			t.Errorf("varintAt(%x, 1) = %d, %d; want %d, %d", in, got, p, v, len(in))
		}
	}
	for c := range 0x80 {
		want, _ := binary.Varint([]byte{byte(c)})
		if got, _, err := decodeVarint([]byte{byte(c)}); err != nil || got != want {
			t.Errorf("decodeVarint(%02x) = %d, %v; want %d", c, got, err, want)
		}
	}
	long := [][]byte{nil, {0x80}, {0xff, 0xff},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},       // 65 bits
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}} // 11 bytes
	for _, b := range long {
		if _, p := uvarintAt(b, 0); p >= 0 {
			t.Errorf("uvarintAt(%x, 0) = offset %d, want < 0", b, p)
		}
		if _, p := uvarintAt(b, -1); p >= 0 {
			t.Errorf("uvarintAt(%x, -1) = offset %d, want < 0", b, p)
		}
	}
	if v, p := uvarintAt([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0); v != 1<<64-1 || p != 10 {
		t.Errorf("uvarintAt(max uint64) = %d, %d", v, p)
	}
	for _, b := range [][]byte{nil, {0x80}, {0xff, 0xff}} {
		if _, _, err := decodeVarint(b); err == nil {
			t.Errorf("decodeVarint(%x): no error", b)
		}
		if _, _, err := decodeUvarint(b); err == nil {
			t.Errorf("decodeUvarint(%x): no error", b)
		}
	}
}

// TestAppendBlockRoom stores blocks with every compression into a dst with
// room for the encoding and into one without: the stored bytes must be the
// same either way (S2 encodes in place only with room), decode to the
// block, and leave what dst held before intact.
func TestAppendBlockRoom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	blocks := map[string][]byte{
		"empty":        {},
		"compressible": bytes.Repeat([]byte("list element 0001 "), 200),
		"random":       random,
	}
	prefix := []byte("held before")
	for name, raw := range blocks {
		for _, c := range []Compression{CompressionNone, CompressionS2, CompressionZstd} {
			var outs [][]byte
			for _, room := range []int{0, len(raw) + len(raw)/4 + 64} {
				dst := append(make([]byte, 0, len(prefix)+room), prefix...)
				out, _ := appendBlock(dst, raw, c, nil)
				if !bytes.Equal(out[:len(prefix)], prefix) {
					t.Fatalf("%s/%d room %d: prefix overwritten", name, c, room)
				}
				stored := out[len(prefix):]
				contents, rest, err := decodeBlock(stored, uint64(len(stored)-trailerLen), maxBlockLen)
				if err != nil || len(rest) != 0 || !bytes.Equal(contents, raw) {
					t.Fatalf("%s/%d room %d: decoded %d bytes, %d left, %v", name, c, room, len(contents), len(rest), err)
				}
				outs = append(outs, stored)
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Errorf("%s/%d: stored differently with room (%d bytes) and without (%d)", name, c, len(outs[1]), len(outs[0]))
			}
		}
	}
}
