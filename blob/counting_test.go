package blob

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/thanos-io/objstore"
)

func TestCountingBucketCountsEveryCall(t *testing.T) {
	c := NewCountingBucket(NewMemBucket())
	ctx := context.Background()
	mustUpload(t, c, "a", "abc")
	if err := c.Upload(ctx, "a", strings.NewReader("x"), objstore.WithIfNotExists()); !c.IsConditionNotMetErr(err) {
		t.Fatalf("second create: %v", err) // a failed call still counts
	}
	mustGet(t, c, "a")
	if rc, err := c.GetRange(ctx, "a", 0, 1); err == nil {
		rc.Close()
	}
	c.Exists(ctx, "a")
	c.Exists(ctx, "b")
	c.Attributes(ctx, "a")
	c.Iter(ctx, "", func(string) error { return nil })
	c.IterWithAttributes(ctx, "", func(objstore.IterObjectAttributes) error { return nil })
	c.Delete(ctx, "a")
	want := OpCounts{Get: 1, GetRange: 1, Upload: 2, Delete: 1, Iter: 2, Exists: 2, Attributes: 1}
	if got := c.Counts(); got != want {
		t.Fatalf("counts = %+v; want %+v", got, want)
	}
}

func TestWithMetricsExportsOperationCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := WithMetrics(NewMemBucket(), reg, "strata")
	mustUpload(t, b, "a", "abc")
	mustGet(t, b, "a")
	_, err := b.Get(context.Background(), "missing")
	if !b.IsObjNotFoundErr(err) {
		t.Fatalf("metrics wrapper lost the not-found classification: %v", err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "objstore_bucket_operations_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					got[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	if got["upload"] != 1 || got["get"] != 2 {
		t.Fatalf("operation counts %v; want upload 1, get 2", got)
	}
}
