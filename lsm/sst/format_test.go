package sst

import (
	"encoding/binary"
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
