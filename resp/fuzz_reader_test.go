package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// The command reader's fuzz targets: whatever a client sends, the reader
// never panics, never holds more than its limits allow, and never returns
// an argument or a command past them; and valid frames, however the stream
// is cut, come out as the same arguments.

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

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\na\r\n", "*0\r\n*-1\r\nPING\r\n", "set k \"a b\" 'c'\r\n",
		"*1\r\n$2147483647\r\n", "*1\r\n*1\r\n*1\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nxx",
		"*01\r\n", "$-1\r\n", "*1\r\n$4\r\nPINGxx", "\"unbalanced\r\n", "*1\r\n$70\r\n" + string(make([]byte, 72)),
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		const maxBulk, maxQuery = 64, 4096
		rd := newReader(&chunkReader{b: data, n: 1 + int(chunk)}, maxBulk, maxQuery)
		for {
			args, err := rd.next()
			// The buffer grows only while one command fills it, and a
			// command over the query limit is refused.
			if c := cap(rd.buf); c > max(readBufSize, 2*maxQuery) {
				t.Fatalf("the reader holds a %d-byte buffer", c)
			}
			if err != nil {
				var pe *protocolError
				if err != io.EOF && !errors.As(err, &pe) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(args) == 0 || len(args) > maxMultibulkLen {
				t.Fatalf("a command of %d arguments came out", len(args))
			}
			// An inline line's arguments are bounded by the query limit,
			// not by proto-max-bulk-len (as in Redis).
			for _, a := range args {
				if len(a) > maxQuery {
					t.Fatalf("a %d-byte argument got past the limits", len(a))
				}
			}
		}
	})
}

// FuzzReaderRoundTrip: arguments cut from the input by sep, sent as a
// multibulk and as a quoted inline command, come out the same, read
// through any split of the stream.
func FuzzReaderRoundTrip(f *testing.F) {
	f.Add([]byte("SET k v"), byte(' '), uint8(1))
	f.Add([]byte("ECHO\x00a\r\nb\x00\"'\\"), byte(0), uint8(7))
	f.Add([]byte("x"), byte('x'), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, sep byte, chunk uint8) {
		args := bytes.Split(data, []byte{sep})
		if len(args) > 64 || len(args[0]) == 0 {
			return
		}
		stream := multibulk(nil, args)
		stream = append(stream, quotedInline(args)...)
		var r io.Reader = &chunkReader{b: stream, n: 1 + int(chunk)}
		if chunk%2 == 0 {
			r = iotest.HalfReader(r)
		}
		got, err := readAll(newReader(r, 1<<20, 1<<20))
		if err != io.EOF {
			t.Fatalf("valid stream refused: %v", err)
		}
		if len(got) != 2 {
			t.Fatalf("got %d commands, want 2", len(got))
		}
		want := make([]string, len(args))
		for i, a := range args {
			want[i] = string(a)
		}
		for _, c := range got {
			if fmt.Sprintf("%q", c) != fmt.Sprintf("%q", want) {
				t.Fatalf("args %q came out as %q", want, c)
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

// FuzzShortHeader: wherever the header fast path accepts a line, the
// general path (the first '\n', then parseHeader) reads the same number
// from it, unrefused, and ends the line at the same byte; the lines it
// turns down are the general path's to judge.
func FuzzShortHeader(f *testing.F) {
	for _, s := range []string{
		"3\r\n", "0\r\n", "12\r\nxx", "00\r\n", "-1\r\n", "01\r\n", "5\n", "5\r", "5\rx\n",
		"123456789012345678\r\n", "1234567890123456789\r\n", "9\r\n\r\n", " 1\r\n", "1 \r\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, at uint8) {
		i := int(at) % (len(b) + 1)
		n, next, ok := shortHeader(b, i)
		if !ok {
			return
		}
		nl := bytes.IndexByte(b[i:], '\n')
		if nl < 0 {
			t.Fatalf("%q at %d: accepted a line with no end", b, i)
		}
		nl += i
		v, neg, bad := parseHeader(b[i : nl+1])
		if neg || bad || v != int64(n) || next != nl+1 {
			t.Fatalf("%q at %d: fast path %d (next %d), general path %d neg=%v bad=%v (next %d)",
				b, i, n, next, v, neg, bad, nl+1)
		}
	})
}

// TestShortHeader pins which lines take the fast path: the usual ones.
func TestShortHeader(t *testing.T) {
	for _, c := range []struct {
		line string
		n    int
		ok   bool
	}{
		{"3\r\n", 3, true}, {"0\r\n", 0, true}, {"12\r\n", 12, true},
		{"123456789012345678\r\n", 123456789012345678, true},
		{"1234567890123456789\r\n", 0, false}, // 19 digits: the general path's
		{"00\r\n", 0, false}, {"01\r\n", 0, false}, {"-1\r\n", 0, false},
		{"5\n", 0, false}, {"5\r", 0, false}, {"12\r", 0, false}, {"", 0, false},
	} {
		n, next, ok := shortHeader([]byte(c.line), 0)
		if ok != c.ok || ok && (n != c.n || next != len(c.line)) {
			t.Errorf("shortHeader(%q) = %d, %d, %v; want %d, %d, %v", c.line, n, next, ok, c.n, len(c.line), c.ok)
		}
	}
}
