package manifest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/thanos-io/objstore"
)

func TestCheckEpochs(t *testing.T) {
	m := &Manifest{ID: 4, WriterEpoch: 5, CompactorEpoch: 2}
	for _, epoch := range []uint64{5, 6} {
		if err := CheckWriter(m, epoch); err != nil {
			t.Errorf("CheckWriter(%d) = %v", epoch, err)
		}
	}
	err := CheckWriter(m, 4)
	if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), "writer epoch 4 superseded by 5") {
		t.Errorf("CheckWriter(4) = %v", err)
	}
	if err := CheckCompactor(m, 2); err != nil {
		t.Errorf("CheckCompactor(2) = %v", err)
	}
	err = CheckCompactor(m, 1)
	if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), "compactor epoch 1 superseded by 2") {
		t.Errorf("CheckCompactor(1) = %v", err)
	}
	// The epochs are independent.
	if err := CheckCompactor(m, 3); err != nil {
		t.Errorf("CheckCompactor(3) = %v", err)
	}
}

// A writer that opened later fences the earlier one through the store: the
// older writer's next update fails with ErrFenced and writes nothing.
func TestFencingThroughUpdate(t *testing.T) {
	ctx := context.Background()
	bkt := objstore.NewInMemBucket()
	if err := NewStore(bkt).Create(ctx, &Manifest{ID: 1}); err != nil {
		t.Fatal(err)
	}
	open := func(s *Store, claim func(*Manifest) uint64) (uint64, *Manifest) {
		var epoch uint64
		m, err := s.Update(ctx, nil, func(m *Manifest) error { epoch = claim(m); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return epoch, m
	}
	old, young := NewStore(bkt), NewStore(bkt)
	oldEpoch, oldView := open(old, ClaimWriter)
	youngEpoch, _ := open(young, ClaimWriter)
	compEpoch, _ := open(NewStore(bkt), ClaimCompactor)
	if oldEpoch != 1 || youngEpoch != 2 || compEpoch != 1 {
		t.Fatalf("epochs %d, %d, compactor %d; want 1, 2, 1", oldEpoch, youngEpoch, compEpoch)
	}
	_, err := old.Update(ctx, oldView, func(m *Manifest) error {
		if err := CheckWriter(m, oldEpoch); err != nil {
			return err
		}
		m.LastSeq++
		return nil
	})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("old writer's update = %v, want ErrFenced", err)
	}
	latest, err := young.Latest(ctx)
	if err != nil || latest.ID != 4 || latest.LastSeq != 0 {
		t.Fatalf("latest = %+v, %v; want manifest 4 untouched by the fenced writer", latest, err)
	}
	if ClaimWriter(latest.Clone()) != 3 {
		t.Fatal("ClaimWriter does not bump the epoch")
	}
}
