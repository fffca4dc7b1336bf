package resp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stratakv/strata/resp/resptest"
)

// TestPubSubDifferential runs a pub/sub session with a subscriber and a
// publisher on Strata and on redis-server and compares every frame.
func TestPubSubDifferential(t *testing.T) {
	redisAddr := resptest.StartRedis(t)
	ts := startServer(t, Config{})
	type step struct {
		who   int // 0 subscriber, 1 publisher
		args  []string
		reads int // frames the subscriber reads after the step
	}
	steps := []step{
		{0, []string{"SUBSCRIBE", "a", "b", "a"}, 3},
		{0, []string{"PSUBSCRIBE", "n*", "a*"}, 2},
		{1, []string{"PUBLISH", "a", "m1"}, 2}, // message + pmessage a*
		{1, []string{"PUBLISH", "news", "m2"}, 1},
		{1, []string{"PUBLISH", "b", "m3"}, 1},
		{1, []string{"PUBLISH", "zzz", "m4"}, 0},
		{1, []string{"PUBSUB", "NUMSUB", "a", "b", "c"}, 0},
		{1, []string{"PUBSUB", "NUMPAT"}, 0},
		{1, []string{"PUBSUB", "CHANNELS", "b*"}, 0},
		{0, []string{"PING"}, 1},
		{0, []string{"PING", "hi"}, 1},
		{0, []string{"GET", "a"}, 1},
		{0, []string{"SET", "a", "b"}, 1},
		{0, []string{"CLIENT", "ID"}, 1},
		{0, []string{"MULTI"}, 1},
		{0, []string{"NOSUCH"}, 1},
		{0, []string{"GET"}, 1},
		{0, []string{"UNSUBSCRIBE", "b", "zz"}, 2},
		{0, []string{"PUNSUBSCRIBE", "n*"}, 1},
		{1, []string{"PUBSUB", "NUMSUB", "a", "b"}, 0},
		{0, []string{"UNSUBSCRIBE"}, 1},
		{0, []string{"PUNSUBSCRIBE"}, 1},
		{0, []string{"UNSUBSCRIBE"}, 1},
		{0, []string{"PING"}, 1},
		{0, []string{"SUBSCRIBE", "x"}, 1},
		{0, []string{"RESET"}, 1},
		{0, []string{"PING"}, 1},
		{1, []string{"PUBLISH", "x", "gone"}, 0},
		{1, []string{"PUBSUB", "CHANNELS"}, 0},
	}
	run := func(addr string) []string {
		sub, pub := resptest.Dial(t, addr), resptest.Dial(t, addr)
		var out []string
		for _, st := range steps {
			if st.who == 1 {
				out = append(out, fmt.Sprintf("pub %q: %q", st.args, pub.Do(st.args...)))
			} else {
				sub.SendRaw(resptest.AppendCommand(nil, st.args...))
			}
			for range st.reads {
				out = append(out, fmt.Sprintf("sub after %q: %q", st.args, sub.ReadReply()))
			}
		}
		return out
	}
	got, want := run(ts.addr), run(redisAddr)
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("frame %d:\nstrata %s\nredis  %s", i, got[min(i, len(got)-1)], want[i])
		}
	}
}

// TestPubSubOrder: one publisher's messages arrive in order, all of them.
func TestPubSubOrder(t *testing.T) {
	ts := startServer(t, Config{})
	sub := resptest.Dial(t, ts.addr)
	sub.Do("SUBSCRIBE", "ch")
	pub := resptest.Dial(t, ts.addr)
	var pipe []byte
	for i := range 1000 {
		pipe = resptest.AppendCommand(pipe, "PUBLISH", "ch", fmt.Sprint(i))
	}
	pub.SendRaw(pipe)
	for i := range 1000 {
		msg := fmt.Sprint(i)
		want := fmt.Sprintf("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$%d\r\n%s\r\n", len(msg), msg)
		expectReply(t, sub, want)
		expectReply(t, pub, ":1\r\n")
	}
}

func TestGoRedisPubSub(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: ts.addr})
	defer rdb.Close()
	ps := rdb.Subscribe(ctx, "news")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription
		t.Fatal(err)
	}
	if err := ps.PSubscribe(ctx, "n*"); err != nil {
		t.Fatal(err)
	}
	if err := ps.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	ch := ps.Channel()
	time.Sleep(50 * time.Millisecond)
	if n, err := rdb.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
		t.Fatalf("PUBLISH: %d %v", n, err)
	}
	for _, pattern := range []string{"", "n*"} {
		select {
		case m := <-ch:
			if m.Channel != "news" || m.Payload != "hello" || m.Pattern != pattern {
				t.Fatalf("got %+v", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no message")
		}
	}
	n, err := rdb.PubSubNumSub(ctx, "news").Result()
	if err != nil || n["news"] != 1 {
		t.Fatalf("NUMSUB %v %v", n, err)
	}
}
