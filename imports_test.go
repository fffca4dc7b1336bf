package strata_test

// The dependency rules of docs/DESIGN.md §1, checked over the real import
// graph: imports point down only, cmd → resp → keyspace → lsm → {wal,
// manifest} → lsm/sst → blob, and lsm never imports compactor.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/stratakv/strata"

// mayImport lists, per project package (path relative to the module root),
// the project packages its files may import directly; "*" allows any. A
// package missing here fails the check, so a new package gets a rule when it
// is added. "." is the module root, which holds only this test.
var mayImport = map[string][]string{
	"cmd/strata":  {"*"},
	"integration": {"*"},
	// The hardening campaigns: a test program, so it may use test helpers.
	"integration/chaos": {"*"},
	"resp":              {"keyspace", "lsm", "wal", "manifest", "lsm/sst", "blob"},
	// keyspace implements the compactor's filter interface.
	"keyspace": {"lsm", "compactor", "wal", "manifest", "lsm/sst", "blob"},
	// compactor reads manifests through lsm; lsm never imports compactor (the
	// server main wires the two side by side). Its garbage collector reads
	// WAL object headers to tell fences from batch objects.
	"compactor":             {"lsm", "wal", "manifest", "lsm/sst", "blob"},
	"metrics":               {"lsm", "compactor", "wal", "manifest", "lsm/sst", "blob"}, // the Prometheus edge, beside cmd; resp does not import it
	"inspect":               {"keyspace", "manifest", "wal", "lsm/sst", "blob"},         // read-only, under `strata inspect`
	"lsm":                   {"wal", "manifest", "lsm/sst", "blob"},
	"wal":                   {"lsm/sst", "blob"},
	"manifest":              {"lsm/sst", "blob"},
	"lsm/sst":               {"blob"},
	"blob":                  {},
	"blob/blobtest":         {"blob"},
	"lsm/lsmtest":           {"lsm", "lsm/sst", "blob", "blob/blobtest"},
	"keyspace/keyspacetest": {"keyspace", "lsm", "lsm/lsmtest", "lsm/sst", "blob", "blob/blobtest"},
	"resp/resptest":         {}, // over the wire only: it cannot lean on the code it checks
	".":                     {},
}

// testHelpers are packages for tests: any package's test files may import
// them, no non-test file may.
var testHelpers = []string{"blob/blobtest", "lsm/lsmtest", "keyspace/keyspacetest", "resp/resptest"}

// testPrograms are programs that exist to test Strata (never shipped), so
// their non-test files may import test helpers too.
var testPrograms = []string{"integration/chaos"}

// onlyFor restricts third-party packages to the project packages that may
// import them: nothing below resp knows about RESP.
var onlyFor = map[string][]string{
	"github.com/tidwall/redcon": {"resp", "cmd/strata", "integration"},
}

// listedPackage is the part of `go list -json` output the check reads.
type listedPackage struct {
	ImportPath   string
	Imports      []string // of non-test files
	TestImports  []string // of _test.go files in the package
	XTestImports []string // of _test.go files in package x_test
}

// checkImports returns one line per forbidden direct import in pkgs.
func checkImports(pkgs []listedPackage) []string {
	var bad []string
	for _, p := range pkgs {
		rel, ok := relPath(p.ImportPath)
		if !ok {
			continue
		}
		allowed, known := mayImport[rel]
		if !known {
			bad = append(bad, fmt.Sprintf("%s: no import rule; add it to mayImport in imports_test.go", rel))
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if why := forbidden(rel, allowed, imp, test); why != "" {
					bad = append(bad, fmt.Sprintf("%s imports %s: %s", rel, imp, why))
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true)
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// forbidden says why package rel may not import imp, or "" if it may.
func forbidden(rel string, allowed []string, imp string, test bool) string {
	if users, ok := onlyFor[imp]; ok && !slices.Contains(users, rel) {
		return "only " + strings.Join(users, ", ") + " may import it"
	}
	target, ok := relPath(imp)
	if !ok || slices.Contains(allowed, "*") {
		return ""
	}
	switch {
	case slices.Contains(testHelpers, target):
		// A test helper may build on another: both only ever reach tests.
		if !test && !slices.Contains(testHelpers, rel) && !slices.Contains(testPrograms, rel) {
			return "a test helper, importable from _test.go files only"
		}
	case test && target == rel: // package x_test importing x
	case !slices.Contains(allowed, target):
		return "not in its allowed imports " + fmt.Sprint(allowed) + " (docs/DESIGN.md §1)"
	}
	return ""
}

// relPath returns importPath relative to the module root, and whether it is
// in the module at all.
func relPath(importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, module+"/")
	return rel, ok
}

func goList(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestImports(t *testing.T) {
	pkgs := goList(t)
	// Guard against a vacuous pass: the walk must have found the tree.
	if !slices.ContainsFunc(pkgs, func(p listedPackage) bool { return p.ImportPath == module+"/blob" }) {
		t.Fatalf("go list found %d packages and not %s/blob", len(pkgs), module)
	}
	for _, line := range checkImports(pkgs) {
		t.Error(line)
	}
}

func TestCheckImportsSynthetic(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	valid := []listedPackage{
		{ImportPath: m("cmd/strata"), Imports: []string{m("resp"), m("compactor"), m("lsm"), "fmt"}},
		{ImportPath: m("resp"), Imports: []string{m("keyspace"), "github.com/tidwall/redcon"}},
		{ImportPath: m("keyspace"), Imports: []string{m("lsm"), m("compactor")}},
		{ImportPath: m("compactor"), Imports: []string{m("lsm"), m("manifest")}},
		{ImportPath: m("lsm"), Imports: []string{m("wal"), m("manifest"), m("lsm/sst"), m("blob")},
			XTestImports: []string{m("lsm"), m("blob/blobtest")}},
		{ImportPath: m("wal"), Imports: []string{m("lsm/sst")}},
		{ImportPath: m("manifest"), Imports: []string{m("lsm/sst"), m("blob")}},
		{ImportPath: m("lsm/sst"), Imports: []string{"bytes"}, TestImports: []string{m("blob")}},
		{ImportPath: m("blob"), Imports: []string{"github.com/thanos-io/objstore"},
			XTestImports: []string{m("blob"), m("blob/blobtest")}},
		{ImportPath: m("blob/blobtest"), Imports: []string{m("blob")}},
		{ImportPath: m("integration"), XTestImports: []string{m("resp"), m("blob/blobtest")}},
		{ImportPath: module, XTestImports: []string{"testing"}},
		{ImportPath: "example.com/elsewhere", Imports: []string{m("cmd/strata")}},
	}
	if bad := checkImports(valid); len(bad) != 0 {
		t.Fatalf("valid graph reported:\n%s", strings.Join(bad, "\n"))
	}

	cases := []struct {
		name string
		pkg  listedPackage
		want string // substring of the one expected violation
	}{
		{"lsm imports compactor", listedPackage{ImportPath: m("lsm"), Imports: []string{m("compactor")}},
			"lsm imports " + m("compactor")},
		{"leaf imports upward", listedPackage{ImportPath: m("blob"), Imports: []string{m("lsm/sst")}},
			"blob imports " + m("lsm/sst")},
		{"wal imports manifest", listedPackage{ImportPath: m("wal"), Imports: []string{m("manifest")}},
			"wal imports " + m("manifest")},
		{"resp imports compactor", listedPackage{ImportPath: m("resp"), Imports: []string{m("compactor")}},
			"resp imports " + m("compactor")},
		{"in-package test imports upward", listedPackage{ImportPath: m("manifest"), TestImports: []string{m("lsm")}},
			"manifest imports " + m("lsm")},
		{"external test imports upward", listedPackage{ImportPath: m("lsm/sst"), XTestImports: []string{m("wal")}},
			"lsm/sst imports " + m("wal")},
		{"test helper in non-test code", listedPackage{ImportPath: m("lsm"), Imports: []string{m("blob/blobtest")}},
			"test helper"},
		{"test helper imports upward", listedPackage{ImportPath: m("blob/blobtest"), Imports: []string{m("lsm")}},
			"blob/blobtest imports " + m("lsm")},
		{"RESP below resp", listedPackage{ImportPath: m("keyspace"), Imports: []string{"github.com/tidwall/redcon"}},
			"only resp, cmd/strata, integration may import it"},
		{"package without a rule", listedPackage{ImportPath: m("lsm/memtable")}, "lsm/memtable: no import rule"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := checkImports(append(slices.Clone(valid), c.pkg))
			if len(bad) != 1 || !strings.Contains(bad[0], c.want) {
				t.Fatalf("got violations %q, want one containing %q", bad, c.want)
			}
		})
	}
}
