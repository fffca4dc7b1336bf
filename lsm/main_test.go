package lsm

import (
	"testing"

	"github.com/stratakv/strata/blob/blobtest"
)

// TestMain stops the shared MinIO of the model and fencing tests.
func TestMain(m *testing.M) { blobtest.Main(m) }
