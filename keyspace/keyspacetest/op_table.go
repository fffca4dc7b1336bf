package keyspacetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
)

// OpKind is the command an Op runs.
type OpKind uint8

// The commands, one row each in opTable.
const (
	OpGet OpKind = iota
	OpSet
	OpIncrBy
	OpIncrByFloat
	OpAppend
	OpStrLen
	OpExists
	OpTypeOf
	OpDel
	OpRename
	OpExpire
	OpPersist
	OpPTTL
	OpScan
	OpDBSize
	OpRandomKey
	OpFlushDB
	OpFlushAll
	OpHSet
	OpHGet
	OpHDel
	OpHLen
	OpHExists
	OpHGetAll
	OpHIncrBy
	OpHIncrByFloat
	OpLPush
	OpRPush
	OpLPushX
	OpRPushX
	OpLPop
	OpRPop
	OpLLen
	OpLIndex
	OpLSet
	OpLRange
	OpSAdd
	OpSRem
	OpSCard
	OpSIsMember
	OpSMembers
	OpZAdd
	OpZIncrBy
	OpZRem
	OpZCard
	OpZScore
	OpZRange
	OpZRangeByScore
	OpZRank
	numOpKinds
)

// opSpec is one command of the driver: its name, how often RandomOps picks
// it, how it fills an Op, how it runs one, and how String shows the fields
// that are not byte strings.
type opSpec struct {
	name   string
	weight int
	gen    func(g *opGen, op *Op)
	apply  func(ctx context.Context, c Commands, op Op) Result
	extra  func(op Op) string
}

// opTable is indexed by OpKind; init fills it so its rows may refer to it.
var opTable [numOpKinds]opSpec

func (k OpKind) String() string {
	if k < numOpKinds {
		return opTable[k].name
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

func init() {
	opTable = [numOpKinds]opSpec{
		OpGet: {"GET", 5, genKey, func(ctx context.Context, c Commands, op Op) Result {
			v, ok, err := c.Get(ctx, op.DB, op.Key)
			return result(err, Result{Bytes: v, Nil: !ok})
		}, nil},
		OpSet: {"SET", 9, genSet, func(ctx context.Context, c Commands, op Op) Result {
			old, had, ok, err := c.Set(ctx, op.DB, op.Key, op.Val, op.Set)
			return result(err, Result{Bytes: old, Nil: !had, Bool: ok})
		}, func(op Op) string { return fmtSet(op.At, op.Set) }},
		OpIncrBy: {"INCRBY", 3, genIncrBy, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.IncrBy(ctx, op.DB, op.Key, op.Int)
			return result(err, Result{Int: n})
		}, fmtInt},
		OpIncrByFloat: {"INCRBYFLOAT", 3, genIncrByFloat, func(ctx context.Context, c Commands, op Op) Result {
			f, err := c.IncrByFloat(ctx, op.DB, op.Key, op.Float)
			return result(err, Result{Float: f})
		}, fmtFloat},
		OpAppend: {"APPEND", 2, genKeyVal, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.Append(ctx, op.DB, op.Key, op.Val)
			return result(err, Result{Int: n})
		}, nil},
		OpStrLen: {"STRLEN", 2, genKey, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.StrLen(ctx, op.DB, op.Key)
			return result(err, Result{Int: n})
		}, nil},

		OpExists: {"EXISTS", 3, genKeys, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.Exists(ctx, op.DB, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpTypeOf: {"TYPE", 4, genKey, func(ctx context.Context, c Commands, op Op) Result {
			t, err := c.TypeOf(ctx, op.DB, op.Key)
			return result(err, Result{Type: t})
		}, nil},
		OpDel: {"DEL", 5, genKeys, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.Del(ctx, op.DB, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpRename: {"RENAME", 4, genRename, func(ctx context.Context, c Commands, op Op) Result {
			ok, err := c.Rename(ctx, op.DB, op.Key, op.Key2, op.Flag)
			return result(err, Result{Bool: ok})
		}, func(op Op) string { return optFlag(op.Flag, " NX") }},
		OpExpire: {"PEXPIREAT", 6, genExpire, func(ctx context.Context, c Commands, op Op) Result {
			ok, err := c.Expire(ctx, op.DB, op.Key, op.Int, op.Cond)
			return result(err, Result{Bool: ok})
		}, func(op Op) string {
			return fmt.Sprintf(" @%+d", op.Int-op.At) + optFlag(op.Cond.NX, " NX") + optFlag(op.Cond.XX, " XX") +
				optFlag(op.Cond.GT, " GT") + optFlag(op.Cond.LT, " LT")
		}},
		OpPersist: {"PERSIST", 2, genKey, func(ctx context.Context, c Commands, op Op) Result {
			ok, err := c.Persist(ctx, op.DB, op.Key)
			return result(err, Result{Bool: ok})
		}, nil},
		OpPTTL: {"PTTL", 4, genKey, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.PTTL(ctx, op.DB, op.Key)
			return result(err, Result{Int: n})
		}, nil},
		OpScan: {"SCAN", 3, genScan, applyScan, func(op Op) string {
			return fmt.Sprintf(" MATCH %q COUNT %d TYPE %s", op.Match, op.Int, op.Type)
		}},
		OpDBSize: {"DBSIZE", 2, genNothing, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.DBSize(ctx, op.DB)
			return result(err, Result{Int: n})
		}, nil},
		OpRandomKey: {"RANDOMKEY", 1, genNothing, applyRandomKey, nil},
		OpFlushDB: {"FLUSHDB", 1, genNothing, func(ctx context.Context, c Commands, op Op) Result {
			return result(c.FlushDB(ctx, op.DB), Result{})
		}, nil},
		OpFlushAll: {"FLUSHALL", 1, genNothing, func(ctx context.Context, c Commands, op Op) Result {
			return result(c.FlushAll(ctx), Result{})
		}, nil},

		OpHSet: {"HSET", 6, genHSet, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.HSet(ctx, op.DB, op.Key, op.Pairs...)
			return result(err, Result{Int: n})
		}, nil},
		OpHGet: {"HGET", 3, genField, func(ctx context.Context, c Commands, op Op) Result {
			v, ok, err := c.HGet(ctx, op.DB, op.Key, op.Field)
			return result(err, Result{Bytes: v, Nil: !ok})
		}, nil},
		OpHDel: {"HDEL", 3, genFields, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.HDel(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpHLen: {"HLEN", 1, genKey, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.HLen(ctx, op.DB, op.Key)
			return result(err, Result{Int: n})
		}, nil},
		OpHExists: {"HEXISTS", 1, genField, func(ctx context.Context, c Commands, op Op) Result {
			ok, err := c.HExists(ctx, op.DB, op.Key, op.Field)
			return result(err, Result{Bool: ok})
		}, nil},
		OpHGetAll: {"HGETALL", 2, genKey, func(ctx context.Context, c Commands, op Op) Result {
			ps, err := c.HGetAll(ctx, op.DB, op.Key)
			return result(err, Result{Pairs: ps})
		}, nil},
		OpHIncrBy: {"HINCRBY", 2, genHIncrBy, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.HIncrBy(ctx, op.DB, op.Key, op.Field, op.Int)
			return result(err, Result{Int: n})
		}, fmtInt},
		OpHIncrByFloat: {"HINCRBYFLOAT", 2, genHIncrByFloat, func(ctx context.Context, c Commands, op Op) Result {
			f, err := c.HIncrByFloat(ctx, op.DB, op.Key, op.Field, op.Float)
			return result(err, Result{Float: f})
		}, fmtFloat},

		OpLPush: {"LPUSH", 4, genValues, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.LPush(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpRPush: {"RPUSH", 4, genValues, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.RPush(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpLPushX: {"LPUSHX", 1, genValues, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.LPushX(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpRPushX: {"RPUSHX", 1, genValues, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.RPushX(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpLPop: {"LPOP", 3, genPop, func(ctx context.Context, c Commands, op Op) Result {
			l, err := c.LPop(ctx, op.DB, op.Key, int(op.Int))
			return result(err, Result{List: l, Nil: l == nil})
		}, fmtInt},
		OpRPop: {"RPOP", 3, genPop, func(ctx context.Context, c Commands, op Op) Result {
			l, err := c.RPop(ctx, op.DB, op.Key, int(op.Int))
			return result(err, Result{List: l, Nil: l == nil})
		}, fmtInt},
		OpLLen: {"LLEN", 1, genKey, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.LLen(ctx, op.DB, op.Key)
			return result(err, Result{Int: n})
		}, nil},
		OpLIndex: {"LINDEX", 2, genIndex, func(ctx context.Context, c Commands, op Op) Result {
			v, ok, err := c.LIndex(ctx, op.DB, op.Key, op.Int)
			return result(err, Result{Bytes: v, Nil: !ok})
		}, fmtInt},
		OpLSet: {"LSET", 2, genLSet, func(ctx context.Context, c Commands, op Op) Result {
			return result(c.LSet(ctx, op.DB, op.Key, op.Int, op.Val), Result{})
		}, fmtInt},
		OpLRange: {"LRANGE", 3, genRange, func(ctx context.Context, c Commands, op Op) Result {
			l, err := c.LRange(ctx, op.DB, op.Key, op.Int, op.Int2)
			return result(err, Result{List: l})
		}, fmtRange},

		OpSAdd: {"SADD", 5, genMembers, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.SAdd(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpSRem: {"SREM", 3, genMembers, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.SRem(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpSCard: {"SCARD", 1, genKey, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.SCard(ctx, op.DB, op.Key)
			return result(err, Result{Int: n})
		}, nil},
		OpSIsMember: {"SISMEMBER", 2, genMember, func(ctx context.Context, c Commands, op Op) Result {
			ok, err := c.SIsMember(ctx, op.DB, op.Key, op.Field)
			return result(err, Result{Bool: ok})
		}, nil},
		OpSMembers: {"SMEMBERS", 2, genKey, func(ctx context.Context, c Commands, op Op) Result {
			l, err := c.SMembers(ctx, op.DB, op.Key)
			return result(err, Result{List: l})
		}, nil},

		OpZAdd: {"ZADD", 7, genZAdd, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.ZAdd(ctx, op.DB, op.Key, op.ZOpt, op.ZPairs...)
			return result(err, Result{Int: n})
		}, func(op Op) string {
			o := op.ZOpt
			return optFlag(o.NX, " NX") + optFlag(o.XX, " XX") + optFlag(o.GT, " GT") + optFlag(o.LT, " LT") + optFlag(o.CH, " CH")
		}},
		OpZIncrBy: {"ZINCRBY", 3, genZIncrBy, func(ctx context.Context, c Commands, op Op) Result {
			f, err := c.ZIncrBy(ctx, op.DB, op.Key, op.Float, op.Field)
			return result(err, Result{Float: f})
		}, fmtFloat},
		OpZRem: {"ZREM", 3, genMembers, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.ZRem(ctx, op.DB, op.Key, op.Args...)
			return result(err, Result{Int: n})
		}, nil},
		OpZCard: {"ZCARD", 1, genKey, func(ctx context.Context, c Commands, op Op) Result {
			n, err := c.ZCard(ctx, op.DB, op.Key)
			return result(err, Result{Int: n})
		}, nil},
		OpZScore: {"ZSCORE", 2, genMember, func(ctx context.Context, c Commands, op Op) Result {
			f, ok, err := c.ZScore(ctx, op.DB, op.Key, op.Field)
			return result(err, Result{Float: f, Nil: !ok})
		}, nil},
		OpZRange: {"ZRANGE", 3, genZRange, func(ctx context.Context, c Commands, op Op) Result {
			z, err := c.ZRange(ctx, op.DB, op.Key, op.Int, op.Int2, op.Flag)
			return result(err, Result{Z: z})
		}, func(op Op) string { return fmtRange(op) + optFlag(op.Flag, " REV") }},
		OpZRangeByScore: {"ZRANGEBYSCORE", 3, genZRangeByScore, func(ctx context.Context, c Commands, op Op) Result {
			z, err := c.ZRangeByScore(ctx, op.DB, op.Key, op.Min, op.Max, op.Int, op.Int2, op.Flag)
			return result(err, Result{Z: z})
		}, func(op Op) string {
			return " " + fmtBound(op.Min) + " " + fmtBound(op.Max) + fmt.Sprintf(" LIMIT %d %d", op.Int, op.Int2) + optFlag(op.Flag, " REV")
		}},
		OpZRank: {"ZRANK", 2, genZRank, func(ctx context.Context, c Commands, op Op) Result {
			n, ok, err := c.ZRank(ctx, op.DB, op.Key, op.Field, op.Flag)
			return result(err, Result{Int: n, Nil: !ok})
		}, func(op Op) string { return optFlag(op.Flag, " REV") }},
	}
}

// maxScanCalls bounds one Scan op: an implementation whose cursor never
// ends fails instead of hanging the test.
const maxScanCalls = 100_000

func applyScan(ctx context.Context, c Commands, op Op) Result {
	var cursor []byte
	var keys [][]byte
	for range maxScanCalls {
		next, page, err := c.Scan(ctx, op.DB, cursor, op.Match, int(op.Int), op.Type)
		if err != nil {
			return Result{Err: err.Error()}
		}
		keys = append(keys, page...)
		if len(next) == 0 {
			slices.SortFunc(keys, bytes.Compare)
			keys = slices.CompactFunc(keys, bytes.Equal)
			return Result{List: keys}
		}
		cursor = next
	}
	return Result{Err: fmt.Sprintf("keyspacetest: scan did not end after %d calls", maxScanCalls)}
}

func applyRandomKey(ctx context.Context, c Commands, op Op) Result {
	k, ok, err := c.RandomKey(ctx, op.DB)
	if err != nil || !ok {
		return result(err, Result{})
	}
	n, err := c.Exists(ctx, op.DB, k)
	if err != nil {
		return Result{Err: err.Error()}
	}
	if n != 1 {
		return Result{Err: fmt.Sprintf("keyspacetest: RandomKey returned %q, which does not exist", k)}
	}
	return Result{Bool: true}
}

func optFlag(on bool, s string) string {
	if on {
		return s
	}
	return ""
}

func fmtInt(op Op) string   { return fmt.Sprintf(" %d", op.Int) }
func fmtFloat(op Op) string { return fmt.Sprintf(" %v", op.Float) }
func fmtRange(op Op) string { return fmt.Sprintf(" %d %d", op.Int, op.Int2) }

func fmtBound(b ScoreBound) string {
	return optFlag(b.Exclusive, "(") + fmt.Sprint(b.Value)
}

func fmtSet(at int64, o SetOptions) string {
	s := optFlag(o.NX, " NX") + optFlag(o.XX, " XX") + optFlag(o.Get, " GET") + optFlag(o.KeepTTL, " KEEPTTL")
	if o.ExpireAt != 0 {
		s += fmt.Sprintf(" PXAT @%+d", o.ExpireAt-at)
	}
	return s
}
