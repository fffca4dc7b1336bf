package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratakv/strata/resp/resptest"
)

// fuzzLoadStats are the load's figures, shared by its workers.
type fuzzLoadStats struct {
	frames, commands, protocolErrors, reconnects atomic.Int64
}

// How long a worker waits for the reply to its sync PING: after clean
// frames, long enough for a loaded server's durable writes; after a frame
// that may have left the stream out of step, only briefly, as the server
// is then likely waiting for bytes that never come.
const (
	fuzzSyncWait   = 3 * time.Second
	fuzzPoisonWait = 150 * time.Millisecond
)

// fuzzLoadCommands are the commands the load leaves out: they would stop
// the server (SHUTDOWN), delete or hide the control's sentinel key
// (FLUSHALL, FLUSHDB), or lock the control connection out (CLIENT KILL or
// PAUSE, CONFIG SET requirepass or maxclients). Everything else is fair
// game, blocking and pub/sub commands included.
var fuzzLoadCommands = map[string]bool{"shutdown": true, "flushall": true, "flushdb": true,
	"client": true, "config": true}

// runFuzzLoad runs conns workers sending random frames to addr until ctx
// ends.
func runFuzzLoad(ctx context.Context, addr string, seed uint64, conns int, cmds []fuzzCmd, st *fuzzLoadStats) {
	var allowed []fuzzCmd
	for _, c := range cmds {
		if !fuzzLoadCommands[c.name] {
			allowed = append(allowed, c)
		}
	}
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			w := &fuzzWorker{addr: addr, id: i, gen: newFuzzGen(seed, uint64(100+i), allowed), st: st}
			w.run(ctx)
		})
	}
	wg.Wait()
}

// fuzzWorker is one connection of the load. It writes one to three frames
// followed by PING <token> and reads replies until the token comes back:
// then the stream is in step again. A connection the server closed (a
// protocol error, QUIT), or one that did not answer in time (a declared
// length never sent, a blocking command, MULTI queueing the PING), is
// replaced by a new one.
type fuzzWorker struct {
	addr string
	id   int
	gen  *fuzzGen
	st   *fuzzLoadStats
	nc   net.Conn
	r    *bufio.Reader
}

func (w *fuzzWorker) run(ctx context.Context) {
	defer w.close()
	for n := 0; ctx.Err() == nil; n++ {
		if w.nc == nil {
			nc, err := net.DialTimeout("tcp", w.addr, time.Second)
			if err != nil {
				// The control probe reports a server that stopped
				// accepting; keep trying until the run ends.
				time.Sleep(50 * time.Millisecond)
				continue
			}
			w.nc, w.r = nc, bufio.NewReader(nc)
		}
		var buf []byte
		poisoned := false
		for range 1 + w.gen.r.IntN(3) {
			b, k, poison := w.gen.frame()
			buf = append(buf, b...)
			w.st.frames.Add(1)
			w.st.commands.Add(int64(k))
			if poison {
				poisoned = true
				break // nothing after it would be read as meant
			}
		}
		token := "fuzz-sync-" + strconv.Itoa(w.id) + "-" + strconv.Itoa(n)
		buf = resptest.AppendCommand(buf, "PING", token)
		wait := fuzzSyncWait
		if poisoned {
			wait = fuzzPoisonWait
		}
		if !w.exchange(buf, token, wait) {
			w.close()
			w.st.reconnects.Add(1)
		}
	}
}

// exchange writes buf and reads replies until one holds token (true), or
// the connection closed, the wait ran out or the PING was queued by MULTI
// (false: the connection must be replaced).
func (w *fuzzWorker) exchange(buf []byte, token string, wait time.Duration) bool {
	w.nc.SetWriteDeadline(time.Now().Add(fuzzSyncWait))
	if _, err := w.nc.Write(buf); err != nil {
		w.drain()
		return false
	}
	w.nc.SetReadDeadline(time.Now().Add(wait))
	for {
		reply, err := resptest.ReadFrame(w.r)
		if err != nil {
			return false
		}
		w.count(reply)
		switch {
		case bytes.Contains(reply, []byte(token)):
			return true
		case string(reply) == "+QUEUED\r\n":
			return false
		}
	}
}

// drain reads what the server sent before it closed the connection: a
// write fails when the server has already refused the stream, and its
// protocol error is waiting to be read.
func (w *fuzzWorker) drain() {
	w.nc.SetReadDeadline(time.Now().Add(fuzzPoisonWait))
	for {
		reply, err := resptest.ReadFrame(w.r)
		if err != nil {
			return
		}
		w.count(reply)
	}
}

func (w *fuzzWorker) count(reply []byte) {
	if bytes.HasPrefix(reply, []byte("-ERR Protocol error")) {
		w.st.protocolErrors.Add(1)
	}
}

func (w *fuzzWorker) close() {
	if w.nc != nil {
		w.nc.Close()
		w.nc, w.r = nil, nil
	}
}

// fuzzConn is a raw connection for one-at-a-time commands (the control
// probe, the differential check).
type fuzzConn struct {
	nc net.Conn
	r  *bufio.Reader
}

func dialFuzzConn(addr string) (*fuzzConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &fuzzConn{nc: nc, r: bufio.NewReader(nc)}, nil
}

// do sends one command and returns its reply frame.
func (c *fuzzConn) do(timeout time.Duration, args ...string) ([]byte, error) {
	return c.raw(timeout, resptest.AppendCommand(nil, args...))
}

// raw sends b and returns the next reply frame.
func (c *fuzzConn) raw(timeout time.Duration, b []byte) ([]byte, error) {
	c.nc.SetDeadline(time.Now().Add(timeout))
	if _, err := c.nc.Write(b); err != nil {
		return nil, err
	}
	return resptest.ReadFrame(c.r)
}

// transcript sends b on this fresh connection and returns every reply
// until the server closes it or is silent for wait, then "<closed>" or
// "<open>": what a client sees of a bad frame.
func (c *fuzzConn) transcript(b []byte, wait time.Duration) []string {
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	var out []string
	if _, err := c.nc.Write(b); err != nil {
		out = append(out, "<write failed>")
	}
	for range 8 {
		c.nc.SetReadDeadline(time.Now().Add(wait))
		reply, err := resptest.ReadFrame(c.r)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return append(out, "<open>")
		case err != nil:
			return append(out, "<closed>")
		}
		out = append(out, string(reply))
	}
	return append(out, "<open>")
}

func (c *fuzzConn) close() { c.nc.Close() }
