package blob

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
	if err := closeFd(fd); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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
