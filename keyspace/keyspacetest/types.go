package keyspacetest

// The option, result and error types of the keyspace.Store API: aliases of
// keyspace's, so the model and the Store are driven by the same ops; the
// second group names errors keyspace does not have (the RESP layer checks
// those argument combinations).

import (
	"errors"

	"github.com/stratakv/strata/keyspace"
)

// The Store API's types and errors are keyspace's own.
type (
	Type        = keyspace.Type
	SetOptions  = keyspace.SetOptions
	ExpireCond  = keyspace.ExpireCond
	ZAddOptions = keyspace.ZAddOptions
	ZMember     = keyspace.ZMember
	ScoreBound  = keyspace.ScoreBound
)

// The types.
const (
	TypeNone   = keyspace.TypeNone
	TypeString = keyspace.TypeString
	TypeHash   = keyspace.TypeHash
	TypeList   = keyspace.TypeList
	TypeSet    = keyspace.TypeSet
	TypeZSet   = keyspace.TypeZSet
)

// Errors keyspace has too, with Redis's exact texts.
var (
	ErrWrongType       = keyspace.ErrWrongType
	ErrNotInteger      = keyspace.ErrNotInteger
	ErrNotFloat        = keyspace.ErrNotFloat
	ErrOverflow        = keyspace.ErrOverflow
	ErrNoSuchKey       = keyspace.ErrNoSuchKey
	ErrIndexOutOfRange = keyspace.ErrIndexOutOfRange
	ErrNaN             = keyspace.ErrNaN
	ErrHashNotInteger  = keyspace.ErrHashNotInteger
	ErrHashNotFloat    = keyspace.ErrHashNotFloat
	ErrInvalidDB       = keyspace.ErrInvalidDB
	ErrNaNOrInfinity   = keyspace.ErrNaNOrInfinity
	ErrInvalidExpire   = keyspace.ErrInvalidExpire
	ErrZAddNXXX        = keyspace.ErrZAddNXXX
	ErrZAddGTLTNX      = keyspace.ErrZAddGTLTNX
)

// Errors keyspace does not have, which Redis 7 replies with for arguments
// the Store API can express (texts checked against redis-server 7.0).
var (
	// ErrValueNaNOrInf: HINCRBYFLOAT with an infinite increment, checked
	// before the key (INCRBYFLOAT answers ErrNaNOrInfinity instead).
	ErrValueNaNOrInf = errors.New("ERR value is NaN or Infinity")
	// ErrSyntax: SET with NX and XX, or KeepTTL and ExpireAt.
	ErrSyntax = errors.New("ERR syntax error")
	// ErrExpireNXAndOther and ErrExpireGTLT: EXPIRE's incompatible
	// conditions, checked in this order before the key is looked up.
	ErrExpireNXAndOther = errors.New("ERR NX and XX, GT or LT options at the same time are not compatible")
	ErrExpireGTLT       = errors.New("ERR GT and LT options at the same time are not compatible")
	// ErrNotPositive: LPOP/RPOP with a negative count.
	ErrNotPositive = errors.New("ERR value is out of range, must be positive")
	// ErrMinMaxNotFloat: a NaN bound in ZRangeByScore.
	ErrMinMaxNotFloat = errors.New("ERR min or max is not a float")
)
