package keyspace

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Describing engine rows for operators (`strata inspect`): one line per row
// that names the keyspace and the decoded parts of its key and value, e.g.
//
//	hash gen=0 key "user:1" version=123 field "name" = "x"
//	meta gen=0 key "k" type=string expire_at=2026-01-02T03:04:05.678Z value "v"
//	zset gen=0 key "z" version=9 by-score 1.5 member "m"
//
// gen is the generation of a database, which equals its index (SELECT n)
// until the first FLUSHDB or FLUSHALL moves it. A row that does not decode
// is described as corrupt, with its bytes quoted: describing never fails.

// maxDescribedValue bounds how many bytes of a value DescribeRow quotes.
const maxDescribedValue = 64

// DescribeKey describes an engine key, without its value.
func DescribeKey(key []byte) string { return describe(key, nil, false) }

// DescribeRow describes an engine row. A tombstone (put false) has no value
// to describe.
func DescribeRow(key, value []byte, put bool) string { return describe(key, value, put) }

func describe(key, value []byte, put bool) string {
	if len(key) == 0 {
		return "? empty key"
	}
	var (
		s   string
		err error
	)
	switch k := key[0]; {
	case k == kindMeta:
		s, err = describeMeta(key, value, put)
	case isElementKind(k):
		s, err = describeElement(key, value, put)
	case k == kindExpiry:
		s, err = describeExpiry(key, value, put)
	case k == kindSystem:
		s, err = describeSystem(key, value, put)
	default:
		return fmt.Sprintf("? key %s%s", quote(key), valueSuffix(value, put))
	}
	if err != nil {
		return fmt.Sprintf("corrupt key %s%s (%v)", quote(key), valueSuffix(value, put), err)
	}
	return s
}

func describeMeta(key, value []byte, put bool) (string, error) {
	gen, k, err := decodeMetaKey(key)
	if err != nil {
		return "", err
	}
	s := fmt.Sprintf("meta gen=%d key %s", gen, quote(k))
	if !put {
		return s, nil
	}
	m, err := decodeMeta(value)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(s)
	fmt.Fprintf(&b, " type=%s", m.Type)
	if m.Type != TypeString {
		fmt.Fprintf(&b, " version=%d count=%d", m.Version, m.Count)
	}
	if m.Type == TypeList {
		fmt.Fprintf(&b, " head=%d tail=%d", listOffset(m.Head), listOffset(m.Tail))
	}
	if m.ExpireAt != 0 {
		fmt.Fprintf(&b, " expire_at=%s", FormatTime(m.ExpireAt))
	}
	if m.Type == TypeString {
		fmt.Fprintf(&b, " value %s", quote(m.Payload))
	}
	return b.String(), nil
}

// listOffset shows a list position relative to where an empty list starts,
// so LPUSHed elements are negative and RPUSHed ones count up from 0.
func listOffset(pos uint64) int64 { return int64(pos - listInitialPosition) }

func describeElement(key, value []byte, put bool) (string, error) {
	kind, gen, k, version, rest, err := decodeElementKey(key)
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("gen=%d key %s version=%d", gen, quote(k), version)
	switch kind {
	case kindHash:
		return "hash " + head + " field " + quote(rest) + valueSuffix(value, put), nil
	case kindList:
		pos := listOffset(binary.BigEndian.Uint64(rest))
		return fmt.Sprintf("list %s pos=%d%s", head, pos, valueSuffix(value, put)), nil
	case kindSet:
		return "set " + head + " member " + quote(rest), nil
	}
	if rest[0] == zsetScoreTag { // decodeElementKey checked the tag and score
		score, member, _ := decodeScore(rest[1:])
		return fmt.Sprintf("zset %s by-score %s member %s", head, describeScore(score), quote(member)), nil
	}
	s := "zset " + head + " member " + quote(rest[1:])
	if put {
		score, err := decodeScoreValue(value)
		if err != nil {
			return "", err
		}
		s += " score=" + describeScore(score)
	}
	return s, nil
}

func describeExpiry(key, value []byte, put bool) (string, error) {
	gen, at, k, err := decodeExpiryKey(key)
	if err != nil {
		return "", err
	}
	s := fmt.Sprintf("expiry gen=%d at=%s key %s", gen, FormatTime(at), quote(k))
	if put {
		v, err := decodeExpiryValue(value)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf(" version=%d", v)
	}
	return s, nil
}

func describeSystem(key, value []byte, put bool) (string, error) {
	var s string
	switch {
	case len(key) == 3 && key[1] == systemGenTag:
		s = fmt.Sprintf("system generation of db %d", key[2])
	case len(key) == 2 && key[1] == systemMaxGenTag:
		s = "system highest generation"
	default:
		return "", corruptionf("system key", 1, "unknown system row")
	}
	if put {
		g, err := decodeGenValue(value)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf(" = %d", g)
	}
	return s, nil
}

// valueSuffix is " = value" for a put row and "" for a tombstone.
func valueSuffix(value []byte, put bool) string {
	if !put {
		return ""
	}
	return " = " + quote(value)
}

// quote quotes b as a Go string, cut at maxDescribedValue bytes with the
// full length noted.
func quote(b []byte) string {
	if len(b) <= maxDescribedValue {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%s...(%d bytes)", strconv.Quote(string(b[:maxDescribedValue])), len(b))
}

func describeScore(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// FormatTime formats an absolute Unix-millisecond time as UTC RFC 3339 with
// milliseconds, the way inspect shows every expiry and clock tick.
func FormatTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
