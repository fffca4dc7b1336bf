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
	batchObj, err := encodeBatches(batch(7, "a", "b"), 0, 1, 3, sst.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	fence := encodeFence(5)
	if len(fence) != HeaderLen {
		t.Fatalf("fence is %d bytes, want HeaderLen %d", len(fence), HeaderLen)
	}
	fenceWithBody := append(append([]byte{}, fence...), 0)
	badCRC := append([]byte{}, fence...)
	badCRC[HeaderLen-1] ^= 1
	for name, data := range map[string][]byte{
		"batch": batchObj, "fence": fence, "fencebody": fenceWithBody, "badcrc": badCRC, "short": fence[:10],
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
		{name: "batch", want: Header{Epoch: 3}},
		{name: "fence", want: Header{Epoch: 5, Fence: true}},
		{name: "fencebody", corrupt: true},
		{name: "badcrc", corrupt: true},
		{name: "short", corrupt: true},
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
