package resp

import (
	"bytes"
	"testing"
)

// FuzzCursorDecode: any SCAN cursor a client sends decodes without
// panicking, to nothing (refused), the start, or a keyspace cursor that
// encodes back to a cursor decoding to the same bytes.
func FuzzCursorDecode(f *testing.F) {
	t := newCursorTable(4, 1<<10)
	for _, s := range []string{"0", "", "1", "-1", "00", "72057594037927936", "144115188075855872",
		"576460752303423487", "4611686018427387904", "9223372036854775807", "18446744073709551616", "+1", " 1"} {
		f.Add([]byte(s))
	}
	f.Add([]byte(t.encode([]byte("abc"))))
	f.Add([]byte(t.encode(bytes.Repeat([]byte("k"), 20))))
	f.Fuzz(func(tt *testing.T, arg []byte) {
		cur, ok := t.decode(arg)
		if !ok || cur == nil {
			return
		}
		again, ok := t.decode([]byte(t.encode(cur)))
		if !ok || !bytes.Equal(again, cur) {
			tt.Fatalf("cursor %q decodes to %x, which re-encodes to %x (%v)", arg, cur, again, ok)
		}
	})
}

// FuzzCursorRoundTrip: every keyspace cursor the server issues decodes
// back to itself while its table entry lives.
func FuzzCursorRoundTrip(f *testing.F) {
	f.Add([]byte("a"))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(tt *testing.T, cur []byte) {
		if len(cur) == 0 {
			return // nil is the end of a scan, never issued as a cursor
		}
		t := newCursorTable(4, 1<<20)
		text := t.encode(cur)
		got, ok := t.decode([]byte(text))
		if !ok || !bytes.Equal(got, cur) {
			tt.Fatalf("cursor %x issued as %s decodes to %x (%v)", cur, text, got, ok)
		}
		if n, ok := parseInt([]byte(text)); !ok || n <= 0 {
			tt.Fatalf("cursor %s is not a positive signed 64-bit integer", text)
		}
	})
}
