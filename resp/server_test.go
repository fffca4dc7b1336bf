package resp

import (
	"context"
	"flag"
	"net"
	"testing"
	"time"

	"github.com/thanos-io/objstore"

	"github.com/stratakv/strata/blob"
	"github.com/stratakv/strata/blob/blobtest"
	"github.com/stratakv/strata/keyspace"
	"github.com/stratakv/strata/lsm"
)

// TestMain runs the tests with the reader scribbling over each command's
// bytes once the next is asked for, so a handler that keeps an argument
// without copying it fails them (not under -bench: it costs time).
func TestMain(m *testing.M) {
	flag.Parse()
	scribble = flag.Lookup("test.bench").Value.String() == ""
	blobtest.Main(m)
}

// testServer is a Strata server on a loopback port over a bucket, for
// tests. restart closes it gracefully and opens a new one on the same
// bucket and address: what was acknowledged must still be there.
type testServer struct {
	t    testing.TB
	bkt  objstore.Bucket
	cfg  Config
	addr string
	db   *lsm.DB
	srv  *Server
	done chan error
}

// startServer starts a server over an in-memory bucket (or bkt, if given).
func startServer(t testing.TB, cfg Config, bkt ...objstore.Bucket) *testServer {
	t.Helper()
	ts := &testServer{t: t, cfg: cfg, bkt: blob.NewMemBucket()}
	if len(bkt) > 0 {
		ts.bkt = bkt[0]
	}
	ts.open("127.0.0.1:0")
	t.Cleanup(ts.close)
	return ts
}

func (ts *testServer) open(addr string) {
	t := ts.t
	t.Helper()
	ctx := context.Background()
	db, err := lsm.Open(ctx, ts.bkt, lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := keyspace.Open(ctx, db, keyspace.Options{Async: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(db, st, ts.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	for range 50 { // the old listener's port may take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	ts.db, ts.srv, ts.addr, ts.done = db, srv, ln.Addr().String(), make(chan error, 1)
	go func() { ts.done <- srv.Serve(ln) }()
}

func (ts *testServer) close() {
	if ts.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Close(ctx); err != nil {
		ts.t.Errorf("server close: %v", err)
	}
	if err := <-ts.done; err != nil {
		ts.t.Errorf("serve: %v", err)
	}
	if err := ts.db.Close(); err != nil {
		ts.t.Errorf("engine close: %v", err)
	}
	ts.srv = nil
}

// restart closes the server and starts a new one over the same bucket and
// address.
func (ts *testServer) restart() {
	ts.t.Helper()
	addr := ts.addr
	ts.close()
	ts.open(addr)
}
