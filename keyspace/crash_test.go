package keyspace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/lsm"
)

const crashDirEnv = "STRATA_KEYSPACE_CRASH_DIR"

// TestCrashChild is the child of TestCrashKeepsCountsConsistent: it runs
// multi-row commands on a few keys of each type until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestCrashKeepsCountsConsistent")
	}
	ctx := context.Background()
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	db, err := lsm.Open(ctx, bkt, lsm.Options{MemtableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for w := range 8 {
		go func() {
			rnd := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for {
				if err := crashStep(ctx, s, rnd); err != nil {
					fmt.Println("step failed:", err)
					os.Exit(3)
				}
			}
		}()
	}
	select {}
}

// crashStep runs one random multi-row command.
func crashStep(ctx context.Context, s *Store, rnd *rand.Rand) error {
	n := 1 + rnd.IntN(60)
	key := fmt.Appendf(nil, "%d", rnd.IntN(4))
	var err error
	switch rnd.IntN(8) {
	case 0:
		pairs := make([][2][]byte, n)
		for i := range pairs {
			pairs[i] = [2][]byte{fmt.Appendf(nil, "f%d", rnd.IntN(200)), []byte("v")}
		}
		_, err = s.HSet(ctx, 0, append([]byte("h"), key...), pairs...)
	case 1:
		fields := make([][]byte, n)
		for i := range fields {
			fields[i] = fmt.Appendf(nil, "f%d", rnd.IntN(200))
		}
		_, err = s.HDel(ctx, 0, append([]byte("h"), key...), fields...)
	case 2:
		members := make([]ZMember, n)
		for i := range members {
			members[i] = ZMember{Score: float64(rnd.IntN(100)), Member: fmt.Appendf(nil, "m%d", rnd.IntN(200))}
		}
		_, err = s.ZAdd(ctx, 0, append([]byte("z"), key...), ZAddOptions{}, members...)
	case 3:
		members := make([][]byte, n)
		for i := range members {
			members[i] = fmt.Appendf(nil, "m%d", rnd.IntN(200))
		}
		_, err = s.ZRem(ctx, 0, append([]byte("z"), key...), members...)
	case 4:
		vals := make([][]byte, n)
		for i := range vals {
			vals[i] = []byte("element")
		}
		if rnd.IntN(2) == 0 {
			_, err = s.LPush(ctx, 0, append([]byte("l"), key...), vals...)
		} else {
			_, err = s.RPush(ctx, 0, append([]byte("l"), key...), vals...)
		}
	case 5:
		_, err = s.LPop(ctx, 0, append([]byte("l"), key...), n)
	case 6:
		members := make([][]byte, n)
		for i := range members {
			members[i] = fmt.Appendf(nil, "m%d", rnd.IntN(200))
		}
		_, err = s.SAdd(ctx, 0, append([]byte("s"), key...), members...)
	case 7:
		members := make([][]byte, n)
		for i := range members {
			members[i] = fmt.Appendf(nil, "m%d", rnd.IntN(200))
		}
		_, err = s.SRem(ctx, 0, append([]byte("s"), key...), members...)
	}
	return err
}

// TestCrashKeepsCountsConsistent kills a process running many-row HSET,
// ZADD, LPUSH, SADD (and their removals) with SIGKILL; after reopening,
// every collection's count equals its elements, because every command is
// one atomic batch.
func TestCrashKeepsCountsConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	for cycle := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(400+rand.IntN(800)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		checked := checkCounts(t, dir)
		t.Logf("cycle %d: %d collections consistent after SIGKILL", cycle, checked)
	}
}

func checkCounts(t *testing.T, dir string) int {
	t.Helper()
	ctx := context.Background()
	bkt, err := blob.NewLocalBucket(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bkt.Close() })
	db, err := lsm.Open(ctx, bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := Open(ctx, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i := range 4 {
		check := func(key string, count int64, elements int, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if count != int64(elements) {
				t.Fatalf("%s: count %d but %d elements after a crash", key, count, elements)
			}
			if count > 0 {
				checked++
			}
		}
		k := fmt.Sprint(i)
		hl, err := s.HLen(ctx, 0, []byte("h"+k))
		all, err2 := s.HGetAll(ctx, 0, []byte("h"+k))
		check("h"+k, hl, len(all), firstErr(err, err2))
		zc, err := s.ZCard(ctx, 0, []byte("z"+k))
		zr, err2 := s.ZRange(ctx, 0, []byte("z"+k), 0, -1, false)
		check("z"+k+" by score", zc, len(zr), firstErr(err, err2))
		c, _, err3 := s.openCollection(ctx, 0, []byte("z"+k), TypeZSet, false)
		if c != nil {
			members := 0
			err3 = c.scan(ctx, func(suffix, _ []byte) error {
				if suffix[0] == zsetMemberTag {
					members++
				}
				return nil
			})
			check("z"+k+" by member", zc, members, err3)
		}
		ll, err := s.LLen(ctx, 0, []byte("l"+k))
		lr, err2 := s.LRange(ctx, 0, []byte("l"+k), 0, -1)
		check("l"+k, ll, len(lr), firstErr(err, err2))
		sc, err := s.SCard(ctx, 0, []byte("s"+k))
		sm, err2 := s.SMembers(ctx, 0, []byte("s"+k))
		check("s"+k, sc, len(sm), firstErr(err, err2))
	}
	return checked
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
