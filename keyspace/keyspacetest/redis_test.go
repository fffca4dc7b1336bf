package keyspacetest

// An implementation of Commands over a real redis-server, through go-redis,
// to check the model against Redis itself.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// redisCommands implements Commands on a redis-server. Replies map back to
// the Store API's results; Redis's error replies become errors with the
// same text. Replies that carry a float are also checked to print as
// FormatFloat/FormatIncrFloat say (formatErrs).
type redisCommands struct {
	dbs [NumDBs]*redis.Client

	mu         sync.Mutex
	formatErrs []string
	// incrFloatInexact counts INCRBYFLOAT replies with more digits than
	// their float64 has, which FormatIncrFloat cannot reproduce.
	incrFloatInexact int
}

var _ Commands = (*redisCommands)(nil)

func newRedisCommands(t *testing.T, addr string) *redisCommands {
	r := &redisCommands{}
	for i := range r.dbs {
		r.dbs[i] = redis.NewClient(&redis.Options{
			Addr:                     addr,
			DB:                       i,
			Protocol:                 2, // RESP2: doubles arrive as Redis's own text
			PoolSize:                 1,
			DisableIdentity:          true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		})
		t.Cleanup(func() { r.dbs[i].Close() })
	}
	return r
}

// do sends one command to db and returns its reply; a null reply is (nil,
// nil). A connection failure is no Redis reply: it panics, and the test
// fails.
func (r *redisCommands) do(ctx context.Context, db int, args ...any) (any, error) {
	if db < 0 || db >= NumDBs {
		return nil, ErrInvalidDB
	}
	v, err := r.dbs[db].Do(ctx, args...).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err == nil:
		return v, nil
	}
	var re redis.Error
	if errors.As(err, &re) {
		return nil, errors.New(re.Error())
	}
	panic(fmt.Sprintf("redis: %v", err))
}

func (r *redisCommands) formatErr(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.formatErrs = append(r.formatErrs, fmt.Sprintf(format, a...))
}

// fmtArg is how a client sends a float: its shortest representation.
func fmtArg(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// double parses a double reply and checks FormatFloat prints it back.
func (r *redisCommands) double(v any) float64 {
	s := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		panic(fmt.Sprintf("redis: double reply %q: %v", s, err))
	}
	if got := FormatFloat(f); got != s {
		r.formatErr("FormatFloat(%v) = %q, Redis replied %q", f, got, s)
	}
	return f
}

// incrFloat parses an INCRBYFLOAT/HINCRBYFLOAT reply and checks
// FormatIncrFloat prints it back, when the reply is the shortest text of its
// float64 (else no float64 can say it; GET returns the whole text).
func (r *redisCommands) incrFloat(v any) float64 {
	s := v.(string)
	f, _ := strconv.ParseFloat(s, 64)
	if strconv.FormatFloat(f, 'f', -1, 64) != s {
		r.mu.Lock()
		r.incrFloatInexact++
		r.mu.Unlock()
		return f
	}
	if got := FormatIncrFloat(f); got != s {
		r.formatErr("FormatIncrFloat(%v) = %q, Redis replied %q", f, got, s)
	}
	return f
}

func bulk(v any) ([]byte, bool) {
	if v == nil {
		return nil, false
	}
	return []byte(v.(string)), true
}

func list(v any) [][]byte {
	if v == nil {
		return nil
	}
	a := v.([]any)
	out := make([][]byte, 0, len(a))
	for _, e := range a {
		out = append(out, []byte(e.(string)))
	}
	return out
}

func integer(v any, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return v.(int64), nil
}

func boolean(v any, err error) (bool, error) {
	n, err := integer(v, err)
	return n == 1, err
}

func keysArgs(cmd string, key []byte, vals [][]byte) []any {
	args := []any{cmd}
	if key != nil {
		args = append(args, key)
	}
	for _, v := range vals {
		args = append(args, v)
	}
	return args
}

func (r *redisCommands) Get(ctx context.Context, db int, key []byte) ([]byte, bool, error) {
	v, err := r.do(ctx, db, "GET", key)
	b, ok := bulk(v)
	return b, ok, err
}

func (r *redisCommands) Set(ctx context.Context, db int, key, val []byte, o SetOptions) ([]byte, bool, bool, error) {
	args := []any{"SET", key, val}
	for _, f := range []struct {
		on   bool
		name string
	}{{o.NX, "NX"}, {o.XX, "XX"}, {o.Get, "GET"}, {o.KeepTTL, "KEEPTTL"}} {
		if f.on {
			args = append(args, f.name)
		}
	}
	if o.ExpireAt != 0 {
		args = append(args, "PXAT", o.ExpireAt)
	}
	v, err := r.do(ctx, db, args...)
	if err != nil {
		return nil, false, false, err
	}
	if !o.Get {
		return nil, false, v != nil, nil
	}
	// With GET the reply is the old value; whether SET wrote follows from
	// whether there was one.
	old, had := bulk(v)
	return old, had, !(o.NX && had) && !(o.XX && !had), nil
}

func (r *redisCommands) IncrBy(ctx context.Context, db int, key []byte, delta int64) (int64, error) {
	return integer(r.do(ctx, db, "INCRBY", key, delta))
}

func (r *redisCommands) IncrByFloat(ctx context.Context, db int, key []byte, delta float64) (float64, error) {
	v, err := r.do(ctx, db, "INCRBYFLOAT", key, fmtArg(delta))
	if err != nil {
		return 0, err
	}
	return r.incrFloat(v), nil
}

func (r *redisCommands) Append(ctx context.Context, db int, key, val []byte) (int64, error) {
	return integer(r.do(ctx, db, "APPEND", key, val))
}

func (r *redisCommands) StrLen(ctx context.Context, db int, key []byte) (int64, error) {
	return integer(r.do(ctx, db, "STRLEN", key))
}

func (r *redisCommands) Exists(ctx context.Context, db int, keys ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("EXISTS", nil, keys)...))
}

func (r *redisCommands) TypeOf(ctx context.Context, db int, key []byte) (Type, error) {
	v, err := r.do(ctx, db, "TYPE", key)
	if err != nil {
		return TypeNone, err
	}
	for t := TypeNone; t <= TypeZSet; t++ {
		if t.String() == v.(string) {
			return t, nil
		}
	}
	return TypeNone, fmt.Errorf("redis: TYPE replied %q", v)
}

func (r *redisCommands) Del(ctx context.Context, db int, keys ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("DEL", nil, keys)...))
}

func (r *redisCommands) Rename(ctx context.Context, db int, src, dst []byte, nx bool) (bool, error) {
	if nx {
		return boolean(r.do(ctx, db, "RENAMENX", src, dst))
	}
	_, err := r.do(ctx, db, "RENAME", src, dst)
	return err == nil, err
}

func (r *redisCommands) Expire(ctx context.Context, db int, key []byte, atMs int64, c ExpireCond) (bool, error) {
	args := []any{"PEXPIREAT", key, atMs}
	for _, f := range []struct {
		on   bool
		name string
	}{{c.NX, "NX"}, {c.XX, "XX"}, {c.GT, "GT"}, {c.LT, "LT"}} {
		if f.on {
			args = append(args, f.name)
		}
	}
	return boolean(r.do(ctx, db, args...))
}

func (r *redisCommands) Persist(ctx context.Context, db int, key []byte) (bool, error) {
	return boolean(r.do(ctx, db, "PERSIST", key))
}

func (r *redisCommands) PTTL(ctx context.Context, db int, key []byte) (int64, error) {
	return integer(r.do(ctx, db, "PTTL", key))
}

// Scan passes Redis's numeric cursor through as text; "0" ends the scan.
func (r *redisCommands) Scan(ctx context.Context, db int, cursor []byte, match string, count int, typ Type) ([]byte, [][]byte, error) {
	if len(cursor) == 0 {
		cursor = []byte("0")
	}
	args := []any{"SCAN", cursor}
	if match != "" {
		args = append(args, "MATCH", match)
	}
	if count > 0 {
		args = append(args, "COUNT", count)
	}
	if typ != TypeNone {
		args = append(args, "TYPE", typ.String())
	}
	v, err := r.do(ctx, db, args...)
	if err != nil {
		return nil, nil, err
	}
	a := v.([]any)
	next := []byte(a[0].(string))
	if string(next) == "0" {
		next = nil
	}
	return next, list(a[1]), nil
}

// DBSize first scans the whole db: Redis's DBSIZE counts keys that have
// expired but that nothing has deleted yet, and SCAN deletes them.
func (r *redisCommands) DBSize(ctx context.Context, db int) (int64, error) {
	if res := applyScan(ctx, r, Op{Kind: OpScan, DB: db, Int: 1000}); res.Err != "" {
		return 0, errors.New(res.Err)
	}
	return integer(r.do(ctx, db, "DBSIZE"))
}

func (r *redisCommands) RandomKey(ctx context.Context, db int) ([]byte, bool, error) {
	v, err := r.do(ctx, db, "RANDOMKEY")
	b, ok := bulk(v)
	return b, ok, err
}

func (r *redisCommands) FlushDB(ctx context.Context, db int) error {
	_, err := r.do(ctx, db, "FLUSHDB")
	return err
}

func (r *redisCommands) FlushAll(ctx context.Context) error {
	_, err := r.do(ctx, 0, "FLUSHALL")
	return err
}

func (r *redisCommands) HSet(ctx context.Context, db int, key []byte, pairs ...[2][]byte) (int64, error) {
	args := []any{"HSET", key}
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	return integer(r.do(ctx, db, args...))
}

func (r *redisCommands) HGet(ctx context.Context, db int, key, field []byte) ([]byte, bool, error) {
	v, err := r.do(ctx, db, "HGET", key, field)
	b, ok := bulk(v)
	return b, ok, err
}

func (r *redisCommands) HDel(ctx context.Context, db int, key []byte, fields ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("HDEL", key, fields)...))
}

func (r *redisCommands) HLen(ctx context.Context, db int, key []byte) (int64, error) {
	return integer(r.do(ctx, db, "HLEN", key))
}

func (r *redisCommands) HExists(ctx context.Context, db int, key, field []byte) (bool, error) {
	return boolean(r.do(ctx, db, "HEXISTS", key, field))
}

// HGetAll sorts the fields, as the Store API returns them.
func (r *redisCommands) HGetAll(ctx context.Context, db int, key []byte) ([][2][]byte, error) {
	v, err := r.do(ctx, db, "HGETALL", key)
	if err != nil {
		return nil, err
	}
	flat := list(v)
	var out [][2][]byte
	for i := 0; i+1 < len(flat); i += 2 {
		out = append(out, [2][]byte{flat[i], flat[i+1]})
	}
	slices.SortFunc(out, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
	return out, nil
}

func (r *redisCommands) HIncrBy(ctx context.Context, db int, key, field []byte, delta int64) (int64, error) {
	return integer(r.do(ctx, db, "HINCRBY", key, field, delta))
}

func (r *redisCommands) HIncrByFloat(ctx context.Context, db int, key, field []byte, delta float64) (float64, error) {
	v, err := r.do(ctx, db, "HINCRBYFLOAT", key, field, fmtArg(delta))
	if err != nil {
		return 0, err
	}
	return r.incrFloat(v), nil
}

func (r *redisCommands) LPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("LPUSH", key, vals)...))
}

func (r *redisCommands) RPush(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("RPUSH", key, vals)...))
}

func (r *redisCommands) LPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("LPUSHX", key, vals)...))
}

func (r *redisCommands) RPushX(ctx context.Context, db int, key []byte, vals ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("RPUSHX", key, vals)...))
}

// pop always sends a count, so an existing list gives an array, maybe
// empty, and a missing one a null array.
func (r *redisCommands) pop(ctx context.Context, cmd string, db int, key []byte, count int) ([][]byte, error) {
	v, err := r.do(ctx, db, cmd, key, count)
	if err != nil || v == nil {
		return nil, err
	}
	l := list(v)
	if l == nil {
		l = [][]byte{}
	}
	return l, nil
}

func (r *redisCommands) LPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error) {
	return r.pop(ctx, "LPOP", db, key, count)
}

func (r *redisCommands) RPop(ctx context.Context, db int, key []byte, count int) ([][]byte, error) {
	return r.pop(ctx, "RPOP", db, key, count)
}

func (r *redisCommands) LLen(ctx context.Context, db int, key []byte) (int64, error) {
	return integer(r.do(ctx, db, "LLEN", key))
}

func (r *redisCommands) LIndex(ctx context.Context, db int, key []byte, i int64) ([]byte, bool, error) {
	v, err := r.do(ctx, db, "LINDEX", key, i)
	b, ok := bulk(v)
	return b, ok, err
}

func (r *redisCommands) LSet(ctx context.Context, db int, key []byte, i int64, val []byte) error {
	_, err := r.do(ctx, db, "LSET", key, i, val)
	return err
}

func (r *redisCommands) LRange(ctx context.Context, db int, key []byte, start, stop int64) ([][]byte, error) {
	v, err := r.do(ctx, db, "LRANGE", key, start, stop)
	return list(v), err
}

func (r *redisCommands) SAdd(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("SADD", key, members)...))
}

func (r *redisCommands) SRem(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("SREM", key, members)...))
}

func (r *redisCommands) SCard(ctx context.Context, db int, key []byte) (int64, error) {
	return integer(r.do(ctx, db, "SCARD", key))
}

func (r *redisCommands) SIsMember(ctx context.Context, db int, key, member []byte) (bool, error) {
	return boolean(r.do(ctx, db, "SISMEMBER", key, member))
}

// SMembers sorts the members, as the Store API returns them.
func (r *redisCommands) SMembers(ctx context.Context, db int, key []byte) ([][]byte, error) {
	v, err := r.do(ctx, db, "SMEMBERS", key)
	l := list(v)
	slices.SortFunc(l, bytes.Compare)
	return l, err
}

func (r *redisCommands) ZAdd(ctx context.Context, db int, key []byte, o ZAddOptions, pairs ...ZMember) (int64, error) {
	args := []any{"ZADD", key}
	for _, f := range []struct {
		on   bool
		name string
	}{{o.NX, "NX"}, {o.XX, "XX"}, {o.GT, "GT"}, {o.LT, "LT"}, {o.CH, "CH"}} {
		if f.on {
			args = append(args, f.name)
		}
	}
	for _, p := range pairs {
		args = append(args, fmtArg(p.Score), p.Member)
	}
	return integer(r.do(ctx, db, args...))
}

func (r *redisCommands) ZIncrBy(ctx context.Context, db int, key []byte, delta float64, member []byte) (float64, error) {
	v, err := r.do(ctx, db, "ZINCRBY", key, fmtArg(delta), member)
	if err != nil {
		return 0, err
	}
	return r.double(v), nil
}

func (r *redisCommands) ZRem(ctx context.Context, db int, key []byte, members ...[]byte) (int64, error) {
	return integer(r.do(ctx, db, keysArgs("ZREM", key, members)...))
}

func (r *redisCommands) ZCard(ctx context.Context, db int, key []byte) (int64, error) {
	return integer(r.do(ctx, db, "ZCARD", key))
}

func (r *redisCommands) ZScore(ctx context.Context, db int, key, member []byte) (float64, bool, error) {
	v, err := r.do(ctx, db, "ZSCORE", key, member)
	if err != nil || v == nil {
		return 0, false, err
	}
	return r.double(v), true, nil
}

// withScores reads a WITHSCORES reply.
func (r *redisCommands) withScores(v any, err error) ([]ZMember, error) {
	if err != nil {
		return nil, err
	}
	a := v.([]any)
	var out []ZMember
	for i := 0; i+1 < len(a); i += 2 {
		out = append(out, ZMember{Member: []byte(a[i].(string)), Score: r.double(a[i+1])})
	}
	return out, nil
}

func (r *redisCommands) ZRange(ctx context.Context, db int, key []byte, start, stop int64, rev bool) ([]ZMember, error) {
	cmd := "ZRANGE"
	if rev {
		cmd = "ZREVRANGE"
	}
	return r.withScores(r.do(ctx, db, cmd, key, start, stop, "WITHSCORES"))
}

func fmtBoundArg(b ScoreBound) string {
	return optFlag(b.Exclusive, "(") + fmtArg(b.Value)
}

func (r *redisCommands) ZRangeByScore(ctx context.Context, db int, key []byte, lo, hi ScoreBound, offset, count int64, rev bool) ([]ZMember, error) {
	args := []any{"ZRANGEBYSCORE", key, fmtBoundArg(lo), fmtBoundArg(hi)}
	if rev {
		args = []any{"ZREVRANGEBYSCORE", key, fmtBoundArg(hi), fmtBoundArg(lo)}
	}
	args = append(args, "WITHSCORES", "LIMIT", offset, count)
	return r.withScores(r.do(ctx, db, args...))
}

func (r *redisCommands) ZRank(ctx context.Context, db int, key, member []byte, rev bool) (int64, bool, error) {
	cmd := "ZRANK"
	if rev {
		cmd = "ZREVRANK"
	}
	v, err := r.do(ctx, db, cmd, key, member)
	if err != nil || v == nil {
		return 0, false, err
	}
	return v.(int64), true, nil
}
