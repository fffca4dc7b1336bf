package blob

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestRawFileCalls checks the raw calls a journaled upload makes behave as
// the os package's: an exclusive create refuses an existing name, a
// positioned write leaves the file offset alone, and a plain write appends
// at it.
func TestRawFileCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	fd, err := openRaw(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openRaw(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("exclusive create of an existing name: %v, want fs.ErrExist", err)
	}
	if err := writeFull(fd, []byte("hello"), -1); err != nil {
		t.Fatal(err)
	}
	if err := writeFull(fd, []byte("J"), 0); err != nil {
		t.Fatal(err)
	}
	if err := writeFull(fd, []byte(" world"), -1); err != nil {
		t.Fatal(err)
	}
	if err := writeFull(fd, []byte("!"), 20); err != nil {
		t.Fatal(err)
	}
	got := closeAndRead(t, fd, path)
	if want := "Jello world\x00\x00\x00\x00\x00\x00\x00\x00\x00!"; string(got) != want {
		t.Fatalf("file holds %q, want %q", got, want)
	}
	bad := filepath.Join(path, "x")
	_, err = openRaw(bad, os.O_RDONLY, 0)
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != bad || !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("open under a file: %v, want ENOTDIR in a PathError naming %s", err, bad)
	}
}

// TestWriteFullLarge: a body of several write chunks lands whole and in
// order, appended or positioned, and a positioned write after it leaves
// the file offset where the appends left it.
func TestWriteFullLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	fd, err := openRaw(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 3<<20+17) // more than one chunk on every platform
	for i := range body {
		body[i] = byte(i*7 + i/251)
	}
	if err := writeFull(fd, body, -1); err != nil {
		t.Fatal(err)
	}
	if err := writeFull(fd, body, int64(len(body))+5); err != nil {
		t.Fatal(err)
	}
	if err := writeFull(fd, []byte("end"), -1); err != nil { // at the appends' offset
		t.Fatal(err)
	}
	got := closeAndRead(t, fd, path)
	want := slices.Concat(body, []byte("end\x00\x00"), body)
	if !bytes.Equal(got, want) {
		t.Fatalf("file of %d bytes does not hold the bodies written (%d bytes)", len(got), len(want))
	}
}

// TestWriteFull2: two parts land back to back at the offset given, in one
// call or, past a write chunk or with a part empty, in two, and the file
// offset is left alone.
func TestWriteFull2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	fd, err := openRaw(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 3<<20+17)
	for i := range big {
		big[i] = byte(i*7 + i/251)
	}
	var want []byte
	off := int64(3)
	for _, c := range []struct{ a, b []byte }{
		{[]byte("header:"), []byte("body")},
		{[]byte("h"), nil},
		{nil, []byte("b")},
		{[]byte("hdr"), big},
		{big[:5000], big[5000:9000]},
	} {
		if err := writeFull2(fd, c.a, c.b, off); err != nil {
			t.Fatal(err)
		}
		want = append(want, make([]byte, off-int64(len(want)))...)
		want = append(append(want, c.a...), c.b...)
		off = int64(len(want)) + 2
	}
	if err := writeFull(fd, []byte("A"), -1); err != nil { // at offset 0: writeFull2 did not move it
		t.Fatal(err)
	}
	want[0] = 'A'
	if got := closeAndRead(t, fd, path); !bytes.Equal(got, want) {
		t.Fatalf("file of %d bytes does not hold the parts written (%d bytes)", len(got), len(want))
	}
}

// closeAndRead closes fd, raw, and returns the contents of the file at path.
func closeAndRead(t *testing.T, fd int, path string) []byte {
	t.Helper()
	if err := closeFd(fd); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
