package main

import (
	"os"
	"testing"
)

// TestMain removes the strata binary the campaigns built.
func TestMain(m *testing.M) {
	code := m.Run()
	removeBuild()
	os.Exit(code)
}
