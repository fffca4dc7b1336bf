package manifest

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/stratakv/strata/lsm/sst"
)

func TestCloneIsDeep(t *testing.T) {
	r := newRand(t)
	for range 200 {
		m := randManifest(r)
		before := m.AppendEncoded(nil)
		c := m.Clone()
		if !reflect.DeepEqual(c, m) {
			t.Fatal("clone differs")
		}
		// Scribble over everything the clone can reach.
		c.ID++
		for i := range c.L0 {
			c.L0[i].Size++
			clear(c.L0[i].Stats.Smallest)
			clear(c.L0[i].Stats.Largest)
		}
		for i := range c.Runs {
			c.Runs[i].ID++
			for j := range c.Runs[i].SSTs {
				c.Runs[i].SSTs[j].ID[0]++
				clear(c.Runs[i].SSTs[j].Stats.Smallest)
				clear(c.Runs[i].SSTs[j].Stats.Largest)
			}
		}
		if !bytes.Equal(m.AppendEncoded(nil), before) {
			t.Fatal("changing the clone changed the original")
		}
	}
}

func TestAllSSTs(t *testing.T) {
	id := func(b byte) ulid.ULID { return ulid.ULID{b} }
	m := &Manifest{
		L0:   []SST{{ID: id(1)}, {ID: id(2)}},
		Runs: []Run{{ID: 5, SSTs: []SST{{ID: id(3)}, {ID: id(4)}}}, {ID: 4}, {ID: 1, SSTs: []SST{{ID: id(5)}}}},
	}
	var got []byte
	for _, s := range m.AllSSTs() {
		got = append(got, s.ID[0])
	}
	if string(got) != "\x01\x02\x03\x04\x05" {
		t.Fatalf("AllSSTs order %v", got)
	}
	if len((&Manifest{}).AllSSTs()) != 0 {
		t.Fatal("empty manifest has SSTs")
	}
}

func TestValidate(t *testing.T) {
	sstOf := func(id byte, lo, hi string, maxSeq uint64) SST {
		return SST{ID: ulid.ULID{id}, Stats: sst.Stats{Smallest: []byte(lo), Largest: []byte(hi), MaxSeq: maxSeq}}
	}
	valid := func() *Manifest {
		return &Manifest{
			LastSeq: 100, NextRunID: 10,
			L0: []SST{sstOf(1, "a", "z", 100), sstOf(2, "c", "d", 90), sstOf(3, "b", "b", 90)},
			Runs: []Run{
				{ID: 9, SSTs: []SST{sstOf(4, "a", "c", 50), sstOf(5, "d", "f", 50)}},
				{ID: 3, SSTs: []SST{sstOf(6, "", "", 0)}},
			},
		}
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid manifest: %v", err)
	}
	if err := (&Manifest{}).Validate(); err != nil {
		t.Fatalf("empty manifest: %v", err)
	}
	cases := []struct {
		name, want string
		break_     func(m *Manifest)
	}{
		{"l0 not newest first", "not newest first", func(m *Manifest) { m.L0[1].Stats.MaxSeq = 95; m.L0[2].Stats.MaxSeq = 99 }},
		{"sst twice in l0", "listed twice", func(m *Manifest) { m.L0[2].ID = m.L0[0].ID }},
		{"sst in l0 and a run", "listed twice", func(m *Manifest) { m.Runs[1].SSTs[0].ID = m.L0[1].ID }},
		{"sst in two runs", "listed twice", func(m *Manifest) { m.Runs[1].SSTs[0].ID = m.Runs[0].SSTs[0].ID }},
		{"run overlap", "not below", func(m *Manifest) { m.Runs[0].SSTs[1].Stats.Smallest = []byte("c") }},
		{"run unsorted", "not below", func(m *Manifest) { m.Runs[0].SSTs[0], m.Runs[0].SSTs[1] = m.Runs[0].SSTs[1], m.Runs[0].SSTs[0] }},
		{"smallest above largest", "smallest", func(m *Manifest) { m.L0[1].Stats.Smallest = []byte("e") }},
		{"min seq above max seq", "min seq", func(m *Manifest) { m.Runs[0].SSTs[0].Stats.MinSeq = 51 }},
		{"max seq above last seq", "last seq", func(m *Manifest) { m.LastSeq = 99 }},
		{"run id not below next", "next run id", func(m *Manifest) { m.NextRunID = 9 }},
		{"run id twice", "run id 3 listed twice", func(m *Manifest) { m.Runs = append(m.Runs, Run{ID: 3}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := valid()
			c.break_(m)
			err := m.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want ErrInvalid saying %q", err, c.want)
			}
		})
	}
}

func TestValidateSuccessor(t *testing.T) {
	prev := &Manifest{ID: 1, WriterEpoch: 2, CompactorEpoch: 2, ReplayAfterWALID: 5, NextWALID: 7, LastSeq: 9, ClockTick: -5, NextRunID: 3}
	if err := validateSuccessor(prev, prev.Clone()); err != nil {
		t.Fatalf("unchanged successor: %v", err)
	}
	grown := prev.Clone()
	grown.WriterEpoch, grown.LastSeq, grown.ClockTick, grown.NextWALID = 3, 10, 0, 1 // the hint may go anywhere
	if err := validateSuccessor(prev, grown); err != nil {
		t.Fatalf("grown successor: %v", err)
	}
	for name, f := range map[string]func(*Manifest){
		"writer epoch":        func(m *Manifest) { m.WriterEpoch = 1 },
		"compactor epoch":     func(m *Manifest) { m.CompactorEpoch = 1 },
		"replay after wal id": func(m *Manifest) { m.ReplayAfterWALID = 4 },
		"last seq":            func(m *Manifest) { m.LastSeq = 8 },
		"next run id":         func(m *Manifest) { m.NextRunID = 2 },
		"clock tick":          func(m *Manifest) { m.ClockTick = -6 },
	} {
		next := prev.Clone()
		f(next)
		err := validateSuccessor(prev, next)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), name+" went back") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
