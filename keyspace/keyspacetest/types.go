package keyspacetest

// The option, result and error types of the keyspace.Store API, defined
// here with keyspace's names, fields and error texts so that this package
// does not depend on keyspace. To run the model against keyspace.Store, turn
// the first group of declarations into aliases (type Type = keyspace.Type,
// const TypeNone = keyspace.TypeNone, var ErrWrongType =
// keyspace.ErrWrongType, ...); the second group names errors keyspace does
// not have (yet). Nothing outside this file depends on how they are declared.

import "errors"

// Type is the type of the value a key holds.
type Type uint8

// The types, in the order of the meta value's type byte (TypeNone = no key).
const (
	TypeNone Type = iota
	TypeString
	TypeHash
	TypeList
	TypeSet
	TypeZSet
)

// String returns the name Redis's TYPE command replies with.
func (t Type) String() string {
	switch t {
	case TypeNone:
		return "none"
	case TypeString:
		return "string"
	case TypeHash:
		return "hash"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	}
	return "unknown"
}

// SetOptions are the options of SET. ExpireAt is an absolute time in ms
// (EX, PX, EXAT and PXAT all become one), 0 for none. Set reports the old
// value only when Get is set.
type SetOptions struct {
	NX, XX, KeepTTL, Get bool
	ExpireAt             int64
}

// ExpireCond is the condition of EXPIRE and its variants. GT and LT treat a
// key without a TTL as having an infinite one.
type ExpireCond struct {
	NX, XX, GT, LT bool
}

// ZAddOptions are the flags of ZADD (INCR is ZIncrBy).
type ZAddOptions struct {
	NX, XX, GT, LT, CH bool
}

// ZMember is one member of a sorted set with its score.
type ZMember struct {
	Score  float64
	Member []byte
}

// ScoreBound is one end of a score range: "(1" is {1, true}; -inf and +inf
// are math.Inf(-1) and math.Inf(1).
type ScoreBound struct {
	Value     float64
	Exclusive bool
}

// Errors keyspace has too, with Redis's exact texts.
var (
	ErrWrongType       = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	ErrNotInteger      = errors.New("ERR value is not an integer or out of range")
	ErrNotFloat        = errors.New("ERR value is not a valid float")
	ErrOverflow        = errors.New("ERR increment or decrement would overflow")
	ErrNoSuchKey       = errors.New("ERR no such key")
	ErrIndexOutOfRange = errors.New("ERR index out of range")
	ErrNaN             = errors.New("ERR resulting score is not a number (NaN)")
	ErrHashNotInteger  = errors.New("ERR hash value is not an integer")
	ErrHashNotFloat    = errors.New("ERR hash value is not a float")
	ErrInvalidDB       = errors.New("ERR DB index is out of range")
	// ErrNaNOrInfinity: INCRBYFLOAT/HINCRBYFLOAT whose result is infinite,
	// or whose current value is (the string "inf" parses), or INCRBYFLOAT
	// with an infinite increment.
	ErrNaNOrInfinity = errors.New("ERR increment would produce NaN or Infinity")
	// ErrInvalidExpire: SET with ExpireAt < 0 (Redis: PXAT <= 0).
	ErrInvalidExpire = errors.New("ERR invalid expire time in 'set' command")
	// ErrZAddNXXX and ErrZAddGTLTNX: ZADD's incompatible flags, checked in
	// this order before anything else.
	ErrZAddNXXX   = errors.New("ERR XX and NX options at the same time are not compatible")
	ErrZAddGTLTNX = errors.New("ERR GT, LT, and/or NX options at the same time are not compatible")
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
