package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/tidwall/redcon"
)

// The RESP framing reader's fuzz targets: whatever a client sends, the
// reader between the socket and redcon never panics, never holds more than
// its limits allow, and never lets redcon see an argument or a command
// past them; and valid frames, however the stream is cut, reach redcon as
// the same arguments.

// chunkReader returns at most n bytes per Read, as a socket may.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// checkedReader checks the limit reader's held bytes after every Read.
type checkedReader struct {
	t *testing.T
	l *limitReader
}

func (c checkedReader) Read(p []byte) (int, error) {
	n, err := c.l.Read(p)
	// An inline line or a header line is held until its end: at most the
	// limit plus one socket read past it. Bulk payloads are never held;
	// scanned bytes wait at most holdMax plus one read (an inline line
	// grows when rewritten as a multibulk: at most 4x, "a " -> "$1\r\na\r\n").
	if held := len(c.l.held); held > maxInlineSize+len(c.l.buf) {
		c.t.Fatalf("limit reader holds a %d-byte line", held)
	}
	if out := len(c.l.out); out > holdMax+4*(maxInlineSize+len(c.l.buf)) {
		c.t.Fatalf("limit reader holds %d scanned bytes", out)
	}
	return n, err
}

func FuzzLimitReader(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\na\r\n", "*0\r\n*-1\r\nPING\r\n", "set k \"a b\" 'c'\r\n",
		"*1\r\n$2147483647\r\n", "*1\r\n*1\r\n*1\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nxx",
		"*01\r\n", "$-1\r\n", "*1\r\n$4\r\nPINGxx", "\"unbalanced\r\n", "*1\r\n$70\r\n" + string(make([]byte, 72)),
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		const maxBulk, maxQuery = 64, 4096
		l := newLimitReader(&chunkReader{b: data, n: 1 + int(chunk)}, maxBulk, maxQuery)
		rd := redcon.NewReader(checkedReader{t, l})
		for {
			cmds, err := rd.ReadCommands()
			for _, c := range cmds {
				if len(c.Raw) > maxQuery+len(l.buf) {
					t.Fatalf("a %d-byte command got past the %d-byte limit", len(c.Raw), maxQuery)
				}
				if len(c.Args) > maxMultibulkLen {
					t.Fatalf("%d arguments got past the limit", len(c.Args))
				}
				// An inline line's arguments are bounded by the line limit,
				// not by proto-max-bulk-len (as in Redis); the reader turns
				// the line into a multibulk, so redcon cannot tell them apart.
				for _, a := range c.Args {
					if len(a) > max(maxBulk, maxInlineSize+len(l.buf)) {
						t.Fatalf("a %d-byte argument got past the limits", len(a))
					}
				}
			}
			if err != nil {
				var pe *protocolError
				if err != io.EOF && !errors.As(err, &pe) && !bytes.HasPrefix([]byte(err.Error()), []byte("Protocol error")) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
		}
	})
}

// FuzzLimitReaderRoundTrip: arguments cut from the input by sep, sent as
// a multibulk and as a quoted inline command, come out of redcon the same,
// read through any split of the stream.
func FuzzLimitReaderRoundTrip(f *testing.F) {
	f.Add([]byte("SET k v"), byte(' '), uint8(1))
	f.Add([]byte("ECHO\x00a\r\nb\x00\"'\\"), byte(0), uint8(7))
	f.Add([]byte("x"), byte('x'), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, sep byte, chunk uint8) {
		args := bytes.Split(data, []byte{sep})
		if len(args) > 64 || len(args[0]) == 0 {
			return
		}
		stream := appendCommand(nil, args)
		stream = append(stream, quotedInline(args)...)
		var r io.Reader = &chunkReader{b: stream, n: 1 + int(chunk)}
		if chunk%2 == 0 {
			r = iotest.HalfReader(r)
		}
		rd := redcon.NewReader(newLimitReader(r, 1<<20, 1<<20))
		var got []redcon.Command
		for {
			cmds, err := rd.ReadCommands()
			got = append(got, cmds...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("valid stream refused: %v", err)
			}
		}
		if len(got) != 2 {
			t.Fatalf("got %d commands, want 2", len(got))
		}
		for _, c := range got {
			if fmt.Sprintf("%q", c.Args) != fmt.Sprintf("%q", args) {
				t.Fatalf("args %q came out as %q", args, c.Args)
			}
		}
	})
}

// quotedInline writes args as an inline command, each argument in double
// quotes with every byte as \xHH, which sdssplitargs reads back exactly.
func quotedInline(args [][]byte) []byte {
	var b []byte
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, '"')
		for _, c := range a {
			b = fmt.Appendf(b, `\x%02x`, c)
		}
		b = append(b, '"')
	}
	return append(b, '\r', '\n')
}
