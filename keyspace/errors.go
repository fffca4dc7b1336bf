package keyspace

import (
	"errors"
	"fmt"
)

// Errors carry Redis's own reply text, so the RESP layer sends them as they
// are.
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
	ErrNaNOrInfinity   = errors.New("ERR increment would produce NaN or Infinity")
	ErrInvalidExpire   = errors.New("ERR invalid expire time in 'set' command")
	ErrValueNaNOrInf   = errors.New("ERR value is NaN or Infinity")
)

// errCorruptList reports a list whose metadata names a position with no
// element row.
func errCorruptList(key []byte, pos uint64) error {
	return fmt.Errorf("keyspace: list %q has no element at position %d: %w", key, pos, errCorrupt)
}
