package resp

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestCommandStats: the accessor reports what ran, what failed and what was
// refused, per command, and the connected clients.
func TestCommandStats(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: ts.addr, MaxRetries: -1})
	defer rdb.Close()
	for range 3 {
		rdb.Set(ctx, "k", "v", 0)
	}
	rdb.LPush(ctx, "k", "x")          // WRONGTYPE: ran and failed
	rdb.Do(ctx, "get", "a", "b", "c") // wrong arity: refused
	got := map[string]CommandStat{}
	for _, st := range ts.srv.CommandStats() {
		got[st.Name] = st
	}
	if st := got["set"]; st.Calls != 3 || st.Failed != 0 || st.Rejected != 0 {
		t.Errorf("set: %+v", st)
	}
	if st := got["lpush"]; st.Calls != 1 || st.Failed != 1 {
		t.Errorf("lpush: %+v", st)
	}
	if st := got["get"]; st.Calls != 0 || st.Rejected != 1 {
		t.Errorf("get: %+v", st)
	}
	if _, ok := got["hset"]; ok {
		t.Error("hset listed without a call")
	}
	if n := ts.srv.Clients(); n != 1 {
		t.Errorf("Clients() = %d, want 1", n)
	}
}
