package wal

import (
	"sort"
	"sync/atomic"
)

// Histogram is a snapshot of a distribution with fixed bucket bounds:
// Counts[i] observations were <= Bounds[i] (and above Bounds[i-1]); the
// last count is above every bound.
type Histogram struct {
	Bounds []float64
	Counts []uint64 // len(Bounds)+1
	Count  uint64
	Sum    float64
}

// histogram records observations lock-free into fixed buckets.
type histogram struct {
	bounds []float64
	counts []atomic.Uint64
	count  atomic.Uint64
	sum    atomic.Uint64 // in units of 1/sumScale, to stay an integer
}

const sumScale = 1e6

func newHistogram(bounds ...float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	h.counts[sort.SearchFloat64s(h.bounds, v)].Add(1)
	h.count.Add(1)
	h.sum.Add(uint64(v * sumScale))
}

func (h *histogram) snapshot() Histogram {
	s := Histogram{Bounds: h.bounds, Counts: make([]uint64, len(h.counts))}
	for i := range h.counts {
		s.Counts[i] = h.counts[i].Load()
	}
	s.Count = h.count.Load()
	s.Sum = float64(h.sum.Load()) / sumScale
	return s
}
