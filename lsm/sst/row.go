package sst

import (
	"bytes"
	"errors"
)

// ErrCorruption is the one corruption sentinel of the project. Every decoder
// wraps it with the object name and offset, so callers test it with errors.Is
// and operators see where the damage is.
var ErrCorruption = errors.New("strata: corruption")

// Kind says whether a row stores a value or deletes the key.
type Kind uint8

// Kinds are part of the format: never renumber.
const (
	KindDelete Kind = 0
	KindPut    Kind = 1
)

func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "delete"
	case KindPut:
		return "put"
	}
	return "kind(?)"
}

// Row is one version of a key. ExpireAt is absolute milliseconds since the
// Unix epoch; 0 means the row never expires.
type Row struct {
	Key      []byte
	Seq      uint64
	Kind     Kind
	ExpireAt int64
	Value    []byte
}

// Clone returns a copy of r that owns its key and value.
func (r Row) Clone() Row {
	r.Key = bytes.Clone(r.Key)
	r.Value = bytes.Clone(r.Value)
	return r
}

// Compare orders rows by key ascending, then by seq descending, so the newest
// version of a key comes first.
func Compare(aKey []byte, aSeq uint64, bKey []byte, bSeq uint64) int {
	if c := bytes.Compare(aKey, bKey); c != 0 {
		return c
	}
	switch {
	case aSeq > bSeq:
		return -1
	case aSeq < bSeq:
		return 1
	}
	return 0
}

// Stats describe an SST or WAL object; they are stored in its footer and
// copied into the manifest.
type Stats struct {
	Smallest, Largest []byte // user keys; for WAL objects the smallest/largest seen
	MinSeq, MaxSeq    uint64
	Entries           uint64
	Tombstones        uint64
	EarliestExpiry    int64 // smallest non-zero ExpireAt, 0 if none
	ClockTick         int64 // the engine clock (ms) at the object's newest write: its last tick then
}
