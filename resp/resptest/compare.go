package resptest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Mode says how two replies to one command are compared.
type Mode int

// The modes, each with the script prefix that selects it (doc.go).
const (
	// Exact compares the replies byte for byte.
	Exact Mode = iota
	// Unordered compares an aggregate's elements as a multiset (SMEMBERS,
	// KEYS); a map's key/value pairs are the elements.
	Unordered
	// UnorderedPairs compares a flat array of field, value, field, value...
	// as a multiset of pairs (HGETALL in RESP2).
	UnorderedPairs
	// Len compares the kind of reply, nullness, the element count of an
	// aggregate and the value of an integer; not the text of strings nor
	// the elements (SRANDMEMBER, SPOP).
	Len
	// TypeOnly compares the kind of reply and nullness only (PTTL, whose
	// value depends on timing).
	TypeOnly
	// Scan compares a SCAN-family reply [cursor, [elements]]: both cursors
	// must be "0", and the elements are compared as a multiset. Scripts
	// make the whole scan fit one call with a large COUNT.
	Scan
	// NoCompare runs the command on both servers and ignores the replies
	// (TIME, INFO).
	NoCompare
)

var modeNames = map[Mode]string{
	Exact: "exact", Unordered: "unordered", UnorderedPairs: "unordered-pairs", Len: "len",
	TypeOnly: "typeonly", Scan: "scan", NoCompare: "noreply-compare",
}

// String returns the mode's script prefix ("exact" has none).
func (m Mode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ErrMismatch is wrapped by every error of CompareReplies about replies
// that differ, rather than replies that do not parse.
var ErrMismatch = errors.New("replies differ")

func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMismatch, fmt.Sprintf(format, args...))
}

// CompareReplies compares two raw reply frames in mode and returns nil if
// they agree, or an error saying how they differ. Error replies are always
// compared exactly, whatever the mode: error text is part of compatibility.
// Replies equal byte for byte agree in every mode, even if malformed.
func CompareReplies(a, b []byte, mode Mode) error {
	if mode == NoCompare || bytes.Equal(a, b) {
		return nil
	}
	if mode == Exact {
		return ErrMismatch
	}
	va, err := Parse(a)
	if err != nil {
		return fmt.Errorf("first reply: %w", err)
	}
	vb, err := Parse(b)
	if err != nil {
		return fmt.Errorf("second reply: %w", err)
	}
	switch {
	case va.Kind != vb.Kind:
		return mismatch("reply kinds %q and %q", va.Kind, vb.Kind)
	case va.Null != vb.Null:
		return mismatch("one reply is null")
	case va.Kind == '-' || va.Kind == '!':
		return mismatch("error replies")
	case !bytes.Equal(attrRaw(va), attrRaw(vb)):
		return mismatch("attributes")
	}
	switch mode {
	case Unordered:
		return compareUnordered(va, vb)
	case UnorderedPairs:
		if !va.IsAggregate() || len(va.Elems)%2 != 0 || len(vb.Elems)%2 != 0 {
			return mismatch("replies are not arrays of pairs")
		}
		return compareMultiset(groups(va.Elems, 2), groups(vb.Elems, 2))
	case Len:
		return compareLen(va, vb)
	case TypeOnly:
		return nil
	case Scan:
		return compareScan(va, vb)
	}
	return fmt.Errorf("resptest: unknown mode %v", mode)
}

func attrRaw(v Value) []byte {
	if v.Attr == nil {
		return nil
	}
	return v.Attr.Raw
}

func compareUnordered(va, vb Value) error {
	if !va.IsAggregate() {
		return mismatch("replies are not aggregates")
	}
	if va.Kind == '%' {
		return compareMultiset(groups(va.Elems, 2), groups(vb.Elems, 2))
	}
	return compareMultiset(groups(va.Elems, 1), groups(vb.Elems, 1))
}

func compareLen(va, vb Value) error {
	switch {
	case va.IsAggregate() && len(va.Elems) != len(vb.Elems):
		return mismatch("%d elements and %d", len(va.Elems), len(vb.Elems))
	case va.Kind == ':' && !bytes.Equal(va.Str, vb.Str):
		return mismatch("integers %s and %s", va.Str, vb.Str)
	}
	return nil
}

func compareScan(va, vb Value) error {
	for i, v := range []Value{va, vb} {
		if v.Kind != '*' || len(v.Elems) != 2 || !v.Elems[1].IsAggregate() {
			return mismatch("reply %d is not [cursor, [elements]]", i+1)
		}
		if c := v.Elems[0]; c.Kind != '$' || string(c.Str) != "0" {
			return mismatch("reply %d has cursor %s, not \"0\": raise COUNT", i+1, Format(c.Raw))
		}
	}
	return compareMultiset(groups(va.Elems[1].Elems, 1), groups(vb.Elems[1].Elems, 1))
}

// groups returns the raw bytes of each run of n elements.
func groups(elems []Value, n int) []string {
	out := make([]string, 0, len(elems)/n)
	for i := 0; i+n <= len(elems); i += n {
		var s strings.Builder
		for _, e := range elems[i : i+n] {
			s.Write(e.Raw)
		}
		out = append(out, s.String())
	}
	return out
}

// compareMultiset compares a and b as multisets and names what each has
// that the other lacks.
func compareMultiset(a, b []string) error {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	var onlyA, onlyB []string
	for s, n := range count {
		for ; n > 0; n-- {
			onlyA = append(onlyA, formatGroup(s))
		}
		for ; n < 0; n++ {
			onlyB = append(onlyB, formatGroup(s))
		}
	}
	if len(onlyA) == 0 && len(onlyB) == 0 {
		return nil
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	return mismatch("as multisets: only in the first: [%s]; only in the second: [%s]",
		strings.Join(onlyA, ", "), strings.Join(onlyB, ", "))
}

// formatGroup formats the concatenated frames of a group on one line.
func formatGroup(raw string) string {
	r := []byte(raw)
	var parts []string
	for len(r) > 0 {
		v, rest, err := parsePrefix(r)
		if err != nil {
			return Quote(r)
		}
		parts = append(parts, strings.ReplaceAll(Format(v.Raw), "\n", " "))
		r = rest
	}
	return strings.Join(parts, " => ")
}

// parsePrefix parses the frame at the start of r and returns what follows.
func parsePrefix(r []byte) (Value, []byte, error) {
	br := newBytesReader(r)
	v, err := readValue(br, 0)
	if err != nil {
		return Value{}, nil, err
	}
	return v, r[len(v.Raw):], nil
}
