package keyspace

import (
	"strings"
	"testing"
)

func TestDescribeRow(t *testing.T) {
	const at = 1767323045678 // 2026-01-02T03:04:05.678Z
	k := []byte("user:1")
	cases := []struct {
		key, value []byte
		put        bool
		want       string
	}{
		{appendMetaKey(nil, 0, []byte("k")), appendMetaValue(nil, Meta{Type: TypeString, ExpireAt: at, Payload: []byte("v")}), true,
			`meta gen=0 key "k" type=string expire_at=2026-01-02T03:04:05.678Z value "v"`},
		{appendMetaKey(nil, 2, k), appendMetaValue(nil, Meta{Type: TypeList, Version: 7, Count: 3,
			Head: listInitialPosition - 1, Tail: listInitialPosition + 2}), true,
			`meta gen=2 key "user:1" type=list version=7 count=3 head=-1 tail=2`},
		{appendMetaKey(nil, 0, k), nil, false, `meta gen=0 key "user:1"`},
		{appendHashField(nil, 0, k, 9, []byte("name")), []byte("x"), true, `hash gen=0 key "user:1" version=9 field "name" = "x"`},
		{appendHashField(nil, 0, k, 9, []byte("name")), nil, false, `hash gen=0 key "user:1" version=9 field "name"`},
		{appendListIndex(nil, 0, k, 9, listInitialPosition-2), []byte("a"), true, `list gen=0 key "user:1" version=9 pos=-2 = "a"`},
		{appendSetMember(nil, 0, k, 9, []byte("m")), nil, true, `set gen=0 key "user:1" version=9 member "m"`},
		{appendZMember(nil, 0, k, 9, []byte("m")), appendScoreValue(nil, 1.5), true, `zset gen=0 key "user:1" version=9 member "m" score=1.5`},
		{appendZScore(nil, 0, k, 9, -2, []byte("m")), nil, true, `zset gen=0 key "user:1" version=9 by-score -2 member "m"`},
		{appendExpiryKey(nil, 0, at, k), appendExpiryValue(nil, 9), true, `expiry gen=0 at=2026-01-02T03:04:05.678Z key "user:1" version=9`},
		{systemGenKey(3), appendGenValue(nil, 17), true, `system generation of db 3 = 17`},
		{systemMaxGenKey(), appendGenValue(nil, 17), true, `system highest generation = 17`},
		{[]byte("Q\x00"), []byte("v"), true, `? key "Q\x00" = "v"`},
		{[]byte{kindHash, 0, 0}, nil, false, `corrupt key "h\x00\x00"`},
		{appendMetaKey(nil, 0, k), []byte{9}, true, `corrupt key "m\x00\x00\x00\x00user:1" = "\t"`},
		{appendHashField(nil, 0, k, 9, []byte("f")), []byte(strings.Repeat("a", 100)), true,
			`hash gen=0 key "user:1" version=9 field "f" = "` + strings.Repeat("a", 64) + `"...(100 bytes)`},
	}
	for _, c := range cases {
		got := DescribeRow(c.key, c.value, c.put)
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("DescribeRow(%q, %q) = %s\nwant prefix   %s", c.key, c.value, got, c.want)
		}
		if strings.HasPrefix(c.want, "corrupt") != strings.HasPrefix(got, "corrupt") {
			t.Errorf("DescribeRow(%q): %s", c.key, got)
		}
	}
}

// FuzzDescribeRow: describing never panics, whatever the bytes.
func FuzzDescribeRow(f *testing.F) {
	f.Add(appendZScore(nil, 0, []byte("z"), 1, 3, []byte("m")), []byte{}, true)
	f.Add(appendListIndex(nil, 0, []byte("l"), 1, 5), []byte("e"), false)
	f.Fuzz(func(t *testing.T, key, value []byte, put bool) {
		if DescribeRow(key, value, put) == "" {
			t.Fatal("empty description")
		}
	})
}
