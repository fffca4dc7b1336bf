package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm/sst"
)

// The WAL's fuzz targets: a WAL object read from the bucket is the only
// input replay trusts, so its decoder must refuse anything it did not
// write with corruption, never panic, and agree with the header decoder.

// fuzzSeedObjects are valid WAL objects of both kinds, both versions and
// every compression.
func fuzzSeedObjects(tb testing.TB) [][]byte {
	objs := [][]byte{encodeFence(1, 1), encodeFence(1<<40, 1<<50), appendHeader(nil, header{kind: kindFence, epoch: 3, v1: true})}
	for i, c := range []sst.Compression{sst.CompressionNone, sst.CompressionS2, sst.CompressionZstd} {
		rows := append(batch(uint64(10*i+1), "a", "b"), batch(uint64(10*i+2), "c")...)
		rows[1].Kind, rows[2].ExpireAt = sst.KindDelete, 1_700_000_000_000
		data, err := encodeBatches(rows, 0, int64(1000+i), header{epoch: uint64(i + 1), id: uint64(i + 7), v1: i == 2}, c)
		if err != nil {
			tb.Fatal(err)
		}
		objs = append(objs, data)
	}
	return objs
}

// FuzzDecodeObject: DecodeObject and DecodeHeader fail only with
// corruption and agree; a fence decodes only from its exact encoding; a
// batch's rows survive a re-encoding.
func FuzzDecodeObject(f *testing.F) {
	for _, obj := range fuzzSeedObjects(f) {
		f.Add(obj)
		f.Add(obj[:len(obj)-1])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		epoch, fence, rows, stats, err := DecodeObject(data, "fuzz")
		h, herr := DecodeHeader(data, "fuzz")
		for _, e := range []error{err, herr} {
			if e != nil && !errors.Is(e, sst.ErrCorruption) {
				t.Fatalf("error without corruption: %v", e)
			}
		}
		if err != nil {
			return
		}
		if herr != nil || h.Epoch != epoch || h.Fence != fence {
			t.Fatalf("DecodeHeader %+v %v disagrees with DecodeObject epoch %d fence %v", h, herr, epoch, fence)
		}
		hdr, _, _ := decodeHeader(data, "fuzz")
		if hdr.id != h.ID {
			t.Fatalf("DecodeHeader id %d, decodeHeader %d", h.ID, hdr.id)
		}
		if fence {
			if !bytes.Equal(data, appendHeader(nil, hdr)) {
				t.Fatalf("fence %x is not the encoding of its header %+v", data, hdr)
			}
			return
		}
		re, err := encodeBatches(rows, 0, stats.ClockTick, hdr, sst.CompressionNone)
		if err != nil {
			return // rows the builder refuses (out of seq order): DecodeAll took them as they are
		}
		epoch2, _, rows2, _, err := DecodeObject(re, "re")
		if err != nil || epoch2 != epoch || len(rows2) != len(rows) {
			t.Fatalf("re-encoded object: epoch %d, %d rows, %v; want %d, %d rows", epoch2, len(rows2), err, epoch, len(rows))
		}
		for i := range rows {
			a, b := rows[i], rows2[i]
			if !bytes.Equal(a.Key, b.Key) || a.Seq != b.Seq || a.Kind != b.Kind || a.ExpireAt != b.ExpireAt || !bytes.Equal(a.Value, b.Value) {
				t.Fatalf("row %d changed in a round trip: %+v -> %+v", i, a, b)
			}
		}
	})
}

// FuzzReplay stores a sequence of WAL objects described by the input (per
// object: a kind byte, an epoch byte) and checks that Replay hands over
// exactly the batch objects a model of its rule keeps: in id order, none
// whose epoch is below an epoch seen at a lower id, fences skipped. A
// damaged object, or one holding another id's bytes (a recycled file's,
// after a power loss), is a torn tail when a fence of a newer epoch than
// any before it follows within MaxInflight ids, or the list ends within
// them: it and the objects up to that fence are skipped. Elsewhere it stops
// replay with corruption. A first-version object records no id and is
// replayed like a batch.
func FuzzReplay(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 1, 2, 0, 1, 0, 2})
	f.Add([]byte{0, 3, 2, 3, 0, 1})
	f.Add([]byte{1, 1, 0, 1, 3, 2, 0, 2})
	f.Add([]byte{0, 1, 5, 1, 4, 1, 0, 1})
	f.Add([]byte{0, 1, 3, 1, 0, 1, 2, 2, 0, 2})
	f.Add(append(bytes.Repeat([]byte{0, 1}, 3), append([]byte{4, 1}, bytes.Repeat([]byte{0, 1}, 20)...)...))
	f.Fuzz(func(t *testing.T, desc []byte) {
		if len(desc) > 64 {
			desc = desc[:64]
		}
		ctx := context.Background()
		bkt := blob.NewMemBucket()
		type object struct {
			id, epoch      uint64
			fence, damaged bool
		}
		var objs []object
		var ids []uint64
		for i := 0; i+1 < len(desc); i += 2 {
			id, kind, epoch := uint64(i/2+1), desc[i]%6, uint64(desc[i+1]%8)
			o := object{id: id, epoch: epoch}
			var data []byte
			switch kind {
			case 0, 1, 5: // batch (5: of the first version)
				var err error
				h := header{epoch: epoch, id: id, v1: kind == 5}
				if data, err = encodeBatches(batch(id, fmt.Sprint(id)), 0, 1, h, sst.CompressionNone); err != nil {
					t.Fatal(err)
				}
			case 2:
				data = encodeFence(epoch, id)
				o.fence = true
			case 3: // damaged: a batch object with a flipped body byte
				data, _ = encodeBatches(batch(id, "x"), 0, 1, header{epoch: epoch, id: id}, sst.CompressionNone)
				data[len(data)/2+headerLen/2] ^= 0x40
				o.damaged = true
			default: // another object's bytes, whole
				data, _ = encodeBatches(batch(id, "x"), 0, 1, header{epoch: epoch, id: id + 100}, sst.CompressionNone)
				o.damaged = true
			}
			if err := bkt.Upload(ctx, blob.WALName(id), bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			objs = append(objs, o)
			ids = append(ids, id)
		}
		// The model.
		var want, wantTorn []uint64
		corrupt := false
		var newest uint64
	replay:
		for i := 0; i < len(objs); i++ {
			o := objs[i]
			if o.damaged {
				end, tail := -1, newest
				for j := i + 1; j < len(objs) && objs[j].id <= o.id+MaxInflight; j++ {
					if objs[j].damaged {
						continue
					}
					if objs[j].fence && objs[j].epoch > tail {
						end = j
						break
					}
					tail = max(tail, objs[j].epoch)
				}
				if end < 0 && objs[len(objs)-1].id+1 <= o.id+MaxInflight {
					end = len(objs)
				}
				if end < 0 {
					corrupt = true
					break replay
				}
				for _, s := range objs[i:end] {
					wantTorn = append(wantTorn, s.id)
				}
				i = end - 1
				continue
			}
			if !o.fence && o.epoch >= newest {
				want = append(want, o.id)
			}
			newest = max(newest, o.epoch)
		}
		var got, gotTorn []uint64
		err := ReplayTorn(ctx, bkt, ids, func(o Object) error {
			got = append(got, o.ID)
			if len(o.Rows) != 1 || o.Rows[0].Seq != o.ID {
				t.Fatalf("object %d replayed rows %+v", o.ID, o.Rows)
			}
			return nil
		}, func(skipped []uint64) { gotTorn = append(gotTorn, skipped...) })
		if corrupt != (err != nil) || err != nil && !errors.Is(err, sst.ErrCorruption) {
			t.Fatalf("damage outside a torn tail: %v; Replay error: %v (input %v)", corrupt, err, desc)
		}
		if err == nil && fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("replayed %v, want %v (input %v)", got, want, desc)
		}
		if err == nil && fmt.Sprint(gotTorn) != fmt.Sprint(wantTorn) {
			t.Fatalf("skipped %v as torn, want %v (input %v)", gotTorn, wantTorn, desc)
		}
	})
}
