package wal

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

func TestReadHeader(t *testing.T) {
	ctx := context.Background()
	bkt := blob.NewMemBucket()
	batchObj, err := encodeBatches(batch(7, "a", "b"), 0, 1, header{epoch: 3, id: 7}, sst.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	v1Batch, err := encodeBatches(batch(7, "a"), 0, 1, header{epoch: 2, v1: true}, sst.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	fence := encodeFence(5, 8)
	if len(fence) != HeaderLen {
		t.Fatalf("fence is %d bytes, want HeaderLen %d", len(fence), HeaderLen)
	}
	v1Fence := appendHeader(nil, header{kind: kindFence, epoch: 4, v1: true})
	if len(v1Fence) != 21 {
		t.Fatalf("first-version fence is %d bytes, want 21", len(v1Fence))
	}
	fenceWithBody := append(append([]byte{}, fence...), 0)
	badCRC := append([]byte{}, fence...)
	badCRC[HeaderLen-1] ^= 1
	for name, data := range map[string][]byte{
		blob.WALName(7): batchObj, blob.WALName(8): fence,
		// Object 7's and 8's bytes under other ids: what a recycled file
		// shows after a power loss cut its upload short.
		blob.WALName(9): batchObj, blob.WALName(10): fence,
		// First-version objects record no id; under any name they decode.
		blob.WALName(11): v1Batch, blob.WALName(12): v1Fence,
		"fencebody": fenceWithBody, "badcrc": badCRC, "short": fence[:10], "v1short": v1Fence[:20],
	} {
		if err := bkt.Upload(ctx, name, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}

	cases := []struct {
		name    string
		want    Header
		corrupt bool
	}{
		{name: blob.WALName(7), want: Header{Epoch: 3, ID: 7}},
		{name: blob.WALName(8), want: Header{Epoch: 5, Fence: true, ID: 8}},
		{name: blob.WALName(9), corrupt: true},
		{name: blob.WALName(10), corrupt: true},
		{name: blob.WALName(11), want: Header{Epoch: 2}},
		{name: blob.WALName(12), want: Header{Epoch: 4, Fence: true}},
		{name: "fencebody", corrupt: true},
		{name: "badcrc", corrupt: true},
		{name: "short", corrupt: true},
		{name: "v1short", corrupt: true},
	}
	for _, c := range cases {
		got, err := ReadHeader(ctx, bkt, c.name)
		if c.corrupt {
			if !errors.Is(err, sst.ErrCorruption) {
				t.Errorf("%s: got %+v, %v; want corruption", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
		// The whole object decodes to the same header as its prefix.
		data, _ := readAll(ctx, bkt, c.name)
		if whole, err := DecodeHeader(data, c.name); err != nil || whole != c.want {
			t.Errorf("%s: whole object: got %+v, %v; want %+v", c.name, whole, err, c.want)
		}
	}
	if _, err := ReadHeader(ctx, bkt, "missing"); !bkt.IsObjNotFoundErr(err) {
		t.Errorf("missing object: got %v, want a not-found error", err)
	}
}
