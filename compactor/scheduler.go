package compactor

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/stratakv/strata/manifest"
)

// The scheduler decides what to compact (Pick) and how a finished compaction
// changes the manifest (Apply). Both are pure: a manifest and options in, a
// plan or an edited manifest out; no I/O, no clock, no globals.
//
// Scheduler invariants (DESIGN.md §7; manifest/doc.go invariant 3):
//
//  S1. Age order. Every row in L0 is newer than every row in any run, and the
//     runs are listed newest first with no overlap in age. Only compaction
//     creates runs, in exactly two ways:
//     - an L0 job merges the OLDEST L0 SSTs (a suffix of m.L0) into a new run
//     placed at the FRONT of m.Runs. At apply time its inputs are still the
//     oldest L0 SSTs (the writer only prepends to L0, and no other job takes
//     L0 SSTs, see S2), so by S1 every run then in the manifest is older
//     than them: index 0 is the right place, and the L0 SSTs left behind are
//     newer than the new run. Apply refuses an L0 job whose inputs are not
//     exactly the oldest L0 SSTs, which is what would make index 0 wrong.
//     - a run job merges ADJACENT runs into one run at their position, so
//     every run stays between the same neighbours in age.
//     The argument is about positions, not seqs, and so are Apply's checks:
//     one memtable flush may write several L0 SSTs with the same seqs (over
//     disjoint keys), and an L0 job may take only some of them.
//  S2. At most one job holding L0 SSTs is in flight. A second one could only
//     take newer SSTs than the first (the oldest are taken), and finishing
//     first it would put newer data behind older data.
//  S3. Jobs in flight are disjoint: no L0 SST or run is the input of two of
//     them, and their output run ids are distinct and unused.
//  S4. Bottom. A job's Bottom is true iff its output is to be the last (oldest)
//     run. Runs are only ever added at the front, so a run job that takes the
//     last run still produces the last run when it finishes; an L0 job is
//     bottom only if there were no runs at all, and S2 keeps it that way.
//     Apply re-checks it, since a bottom job drops tombstones and expired
//     rows outright and would resurrect older rows anywhere else.
//  S5. Apply is re-run on a reloaded manifest after a CAS conflict. It derives
//     its edit from the manifest it is given and re-checks S1, S3 and S4
//     there, touching only fields the compactor owns (the removal of its own
//     L0 SSTs, Runs, NextRunID); an edit that no longer applies fails with
//     ErrStaleJob and leaves the manifest unchanged.

// SchedulerOptions configure Pick. The zero value is valid after
// EnsureDefaults.
type SchedulerOptions struct {
	// L0Trigger: L0 is compacted once it has this many SSTs. Default 4.
	L0Trigger int
	// MaxSources bounds the inputs of one job (L0 SSTs or runs), and so its
	// memory (one open iterator per input) and its duration. Default 32.
	MaxSources int
	// MinMergeWidth: at least this many adjacent similar runs merge at once.
	// It is the size-tiering fan-in: each merge makes a run about
	// MinMergeWidth times the size of its inputs, so a row is rewritten about
	// log_MinMergeWidth(data / L0 job size) times. Default 4.
	MinMergeWidth int
	// SizeRatio: adjacent runs are similar if the largest of them is at most
	// SizeRatio × the smallest. Default 4, SlateDB's include_size_threshold
	// (SlateDB measures each older run against the smallest newer run of the
	// window; here the window's largest against its smallest, either order).
	//
	// A ratio below MinMergeWidth keeps tiers apart (s, W·s, W²·s … never
	// merge with each other), which looks cheaper but leaves up to W-1 runs
	// on every tier: more runs to read, MaxRuns reached sooner, and a bottom
	// run that merges only once W runs of its own size exist (space
	// amplification up to ~W). With SizeRatio = W, a tier of W-1 runs joins
	// the next run once that is at most W times bigger: fewer runs, and
	// bottom merges, which drop dead rows, come sooner, for a little more
	// rewriting. TestWriteAmplification, 10k equal L0 SSTs, SizeRatio 2 vs 4:
	// appending, write amplification 5.7 vs 6.6, mean runs 8.4 vs 6.7;
	// overwriting a key space worth 500 L0 SSTs, write amplification 4.2 vs
	// 4.6, mean runs 8.1 vs 5.6, space amplification 2.5 vs 1.4. Appending
	// 100k (1M) L0 SSTs: write amplification 7.8 vs 8.0 (9.9 vs 10.9), mean
	// runs 10.6 vs 8.8 (12.0 vs 10.5).
	SizeRatio float64
	// MaxRuns bounds read amplification: if more runs than this remain after
	// the merges in flight, adjacent runs merge even if they are not similar.
	// Default 16.
	MaxRuns int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *SchedulerOptions) EnsureDefaults() {
	if o.L0Trigger == 0 {
		o.L0Trigger = 4
	}
	if o.MaxSources == 0 {
		o.MaxSources = 32
	}
	if o.MinMergeWidth == 0 {
		o.MinMergeWidth = 4
	}
	if o.SizeRatio == 0 {
		o.SizeRatio = 4
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = 16
	}
}

// Validate reports the first unusable setting.
func (o SchedulerOptions) Validate() error {
	switch {
	case o.L0Trigger < 1:
		return fmt.Errorf("compactor: L0Trigger %d must be at least 1", o.L0Trigger)
	case o.MinMergeWidth < 2:
		return fmt.Errorf("compactor: MinMergeWidth %d must be at least 2", o.MinMergeWidth)
	case o.MaxSources < o.MinMergeWidth:
		return fmt.Errorf("compactor: MaxSources %d is below MinMergeWidth %d", o.MaxSources, o.MinMergeWidth)
	case !(o.SizeRatio >= 1) || math.IsInf(o.SizeRatio, 1): // !(>=) also rejects NaN
		return fmt.Errorf("compactor: SizeRatio %v must be a finite number >= 1", o.SizeRatio)
	case o.MaxRuns < 1:
		return fmt.Errorf("compactor: MaxRuns %d must be at least 1", o.MaxRuns)
	}
	return nil
}

// Reason says why Pick chose a job; for logs and metrics.
type Reason uint8

const (
	// ReasonL0: L0 reached L0Trigger SSTs.
	ReasonL0 Reason = iota + 1
	// ReasonSimilar: at least MinMergeWidth adjacent runs of similar size.
	ReasonSimilar
	// ReasonMaxRuns: more than MaxRuns runs.
	ReasonMaxRuns
)

func (r Reason) String() string {
	switch r {
	case ReasonL0:
		return "l0"
	case ReasonSimilar:
		return "similar"
	case ReasonMaxRuns:
		return "maxruns"
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// Job is one compaction: merge its inputs into one new run.
type Job struct {
	// L0 lists the L0 SSTs to merge, newest first as in the manifest: always
	// the oldest ones (a suffix of m.L0), so the L0 SSTs left behind, newer,
	// keep shadowing them.
	L0 []ulid.ULID
	// Runs lists the ids of the runs to merge, newest first: always adjacent
	// in m.Runs, so merging them reorders no data by age.
	Runs []uint64
	// OutputRun is the id of the new run, fresh (not used by any run or job
	// in flight); Apply raises NextRunID past it.
	OutputRun uint64
	// Bottom is true iff the output will be the last (oldest) run: only then
	// may tombstones and expired or filtered rows be dropped outright instead
	// of being written as tombstones (DESIGN.md §7).
	Bottom bool
	// InputBytes is the total size of the input SSTs, an upper bound of the
	// output's size.
	InputBytes uint64
	// Reason is why Pick chose this job.
	Reason Reason
}

func (j Job) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v compaction", j.Reason)
	if len(j.L0) > 0 {
		fmt.Fprintf(&b, " l0=%v", j.L0)
	}
	if len(j.Runs) > 0 {
		fmt.Fprintf(&b, " runs=%v", j.Runs)
	}
	fmt.Fprintf(&b, " (%d bytes) -> run %d", j.InputBytes, j.OutputRun)
	if j.Bottom {
		b.WriteString(" (bottom)")
	}
	return b.String()
}

// Pick returns the compactions to start now on m, given the jobs already
// running (started on m or an earlier manifest, not yet applied): none of
// them overlaps another or a running job, so all may run in parallel. It
// fills unset options with defaults; they must then pass Validate. It neither
// modifies m nor keeps references into it.
//
// The plan, in this order:
//
//  1. L0: if m.L0 has at least L0Trigger SSTs and no running job holds any of
//     them (S2), merge its oldest min(len(m.L0), MaxSources) SSTs into a new
//     run at the front. An L0 job never takes runs too: it then never waits
//     for a run merge in flight, stays small and quick (it is what write
//     backpressure waits on), and its output joins the size tiering like any
//     run on the next Pick. Merging it into the newest runs at once would
//     save one rewrite of L0 data only when those runs happen to be its size.
//  2. Similar runs: scanning from the newest run, take the longest window of
//     adjacent, free runs whose sizes are within SizeRatio of each other (at
//     most MaxSources); if it has MinMergeWidth runs or more, merge it into
//     one run at its position and continue after it, else slide by one.
//  3. MaxRuns: while more than MaxRuns runs would remain once the run merges
//     in flight and planned are done, merge max(MinMergeWidth, excess+1)
//     adjacent free runs (at most MaxSources, fewer if no longer stretch is
//     free, at least 2): the window whose sizes are closest (least
//     largest/smallest), the oldest such window on a tie. Closest, because
//     that is the merge size tiering would do next anyway, and the output
//     keeps the tiers geometric. Always merging the oldest runs would
//     rewrite the biggest run, about all the data, each time the run count
//     creeps past MaxRuns: appending 100k (1M) equal L0 SSTs, that costs a
//     write amplification of 13.6 (86) instead of 7.8 (9.9) at SizeRatio 2,
//     and 8.0 (15) instead of 8.0 (10.9) at 4. On a tie, the oldest window,
//     because a merge that includes the last run is a bottom merge, the only
//     one that drops tombstones. The L0 job in flight or planned, if any, is
//     not counted: the runs may exceed MaxRuns by one until the next Pick.
//
// Run sizes are the sum of their SSTs' sizes.
func Pick(m *manifest.Manifest, o SchedulerOptions, running []Job) []Job {
	o.EnsureDefaults()
	p := newPicker(m, o, running)
	p.pickL0()
	p.pickSimilar()
	p.pickMaxRuns()
	return p.jobs
}

// picker holds the state of one Pick call.
type picker struct {
	m        *manifest.Manifest
	o        SchedulerOptions
	busyL0   map[ulid.ULID]bool
	busyRun  map[uint64]bool
	runSizes []uint64 // by position in m.Runs
	// merging counts the runs that the run merges in flight and planned will
	// remove from m.Runs: a merge of n present runs removes n-1.
	merging int
	nextID  uint64
	jobs    []Job
}

func newPicker(m *manifest.Manifest, o SchedulerOptions, running []Job) *picker {
	p := &picker{
		m:       m,
		o:       o,
		busyL0:  make(map[ulid.ULID]bool),
		busyRun: make(map[uint64]bool),
		nextID:  m.NextRunID,
	}
	present := make(map[uint64]bool, len(m.Runs))
	for _, r := range m.Runs {
		present[r.ID] = true
		var size uint64
		for _, s := range r.SSTs {
			size += s.Size
		}
		p.runSizes = append(p.runSizes, size)
	}
	for _, j := range running {
		for _, id := range j.L0 {
			p.busyL0[id] = true
		}
		n := 0
		for _, id := range j.Runs {
			p.busyRun[id] = true
			if present[id] {
				n++
			}
		}
		if n > 1 {
			p.merging += n - 1
		}
		if j.OutputRun >= p.nextID {
			p.nextID = j.OutputRun + 1
		}
	}
	return p
}

func (p *picker) pickL0() {
	l0 := p.m.L0
	if len(l0) < p.o.L0Trigger {
		return
	}
	for _, s := range l0 {
		if p.busyL0[s.ID] {
			return // S2: one L0 job at a time
		}
	}
	in := l0[len(l0)-min(len(l0), p.o.MaxSources):]
	j := Job{
		L0:        make([]ulid.ULID, len(in)),
		OutputRun: p.newRunID(),
		Bottom:    len(p.m.Runs) == 0,
		Reason:    ReasonL0,
	}
	for i, s := range in {
		j.L0[i] = s.ID
		j.InputBytes += s.Size
		p.busyL0[s.ID] = true
	}
	p.jobs = append(p.jobs, j)
}

func (p *picker) pickSimilar() {
	n := len(p.m.Runs)
	for i := 0; i < n; {
		if p.busy(i) {
			i++
			continue
		}
		lo, hi := p.runSizes[i], p.runSizes[i]
		end := i + 1
		for end < n && end-i < p.o.MaxSources && !p.busy(end) {
			s := p.runSizes[end]
			nlo, nhi := min(lo, s), max(hi, s)
			if float64(nhi) > p.o.SizeRatio*float64(nlo) {
				break
			}
			lo, hi = nlo, nhi
			end++
		}
		if end-i >= max(p.o.MinMergeWidth, 2) {
			p.addRunJob(i, end, ReasonSimilar)
			i = end
		} else {
			i++
		}
	}
}

func (p *picker) pickMaxRuns() {
	for {
		excess := len(p.m.Runs) - p.merging - p.o.MaxRuns
		if excess <= 0 {
			return
		}
		start, end := p.closestWindow(min(max(p.o.MinMergeWidth, excess+1, 2), p.o.MaxSources))
		if end-start < 2 {
			return
		}
		p.addRunJob(start, end, ReasonMaxRuns)
	}
}

// closestWindow returns the widest window m.Runs[start:end] of free adjacent
// runs up to width whose sizes are closest (least largest/smallest), the
// oldest one on a tie.
func (p *picker) closestWindow(width int) (start, end int) {
	var bestLo, bestHi uint64 // the best window's sizes, smallest at least 1
	n := len(p.m.Runs)
	for i := n - 1; i >= 0; i-- { // oldest first: later windows must be strictly better
		lo, hi := uint64(math.MaxUint64), uint64(0)
		e := i
		for e < n && e-i < width && !p.busy(e) {
			lo, hi = min(lo, p.runSizes[e]), max(hi, p.runSizes[e])
			e++
		}
		if e-i < end-start || e-i < 2 {
			continue
		}
		lo = max(lo, 1)
		// hi/lo < bestHi/bestLo, in exact 128-bit arithmetic so that equal
		// ratios tie.
		h1, l1 := bits.Mul64(hi, bestLo)
		h2, l2 := bits.Mul64(bestHi, lo)
		if e-i > end-start || h1 < h2 || h1 == h2 && l1 < l2 {
			start, end, bestLo, bestHi = i, e, lo, hi
		}
	}
	return start, end
}

// addRunJob plans the merge of m.Runs[start:end].
func (p *picker) addRunJob(start, end int, why Reason) {
	j := Job{
		Runs:      make([]uint64, 0, end-start),
		OutputRun: p.newRunID(),
		Bottom:    end == len(p.m.Runs),
		Reason:    why,
	}
	for i := start; i < end; i++ {
		id := p.m.Runs[i].ID
		j.Runs = append(j.Runs, id)
		j.InputBytes += p.runSizes[i]
		p.busyRun[id] = true
	}
	p.merging += end - start - 1
	p.jobs = append(p.jobs, j)
}

func (p *picker) busy(i int) bool { return p.busyRun[p.m.Runs[i].ID] }

func (p *picker) newRunID() uint64 {
	id := p.nextID
	p.nextID++
	return id
}

// ErrStaleJob means a finished job no longer applies to the manifest: an
// input is gone or has moved, or its output would land out of age order.
// The job must be abandoned; its output SSTs are then unreferenced and
// garbage collection deletes them.
var ErrStaleJob = errors.New("compactor: job no longer applies to the manifest")

// Apply publishes finished job j on m, in place: it removes j's L0 SSTs and
// replaces j's runs by the run {ID: j.OutputRun, SSTs: outputs} at their
// position (the front for a job without runs, see S1), or by nothing if
// outputs is empty, and raises m.NextRunID past j.OutputRun. m may have more
// L0 SSTs than when j was picked. If j no longer applies (S5) Apply returns an
// error wrapping ErrStaleJob and leaves m unchanged.
//
// Apply keeps outputs (not a copy) in m. It does not check them: the Store
// validates the whole manifest before writing it.
func Apply(m *manifest.Manifest, j Job, outputs []manifest.SST) error {
	stale := func(format string, args ...any) error {
		return fmt.Errorf("%w: %v: "+format, append([]any{ErrStaleJob, j}, args...)...)
	}
	if len(j.L0) == 0 && len(j.Runs) == 0 {
		return fmt.Errorf("compactor: %v: job has no inputs", j)
	}
	if j.OutputRun == math.MaxUint64 {
		return fmt.Errorf("compactor: %v: output run id out of range", j)
	}

	// S1: the L0 inputs are exactly the oldest len(j.L0) SSTs.
	keepL0 := len(m.L0) - len(j.L0)
	if keepL0 < 0 {
		return stale("l0 has only %d ssts", len(m.L0))
	}
	inputs := make(map[ulid.ULID]bool, len(j.L0))
	for _, id := range j.L0 {
		inputs[id] = true
	}
	for _, s := range m.L0[keepL0:] {
		if !inputs[s.ID] {
			return stale("l0 sst %s is among the %d oldest but not an input", s.ID, len(j.L0))
		}
		delete(inputs, s.ID)
	}

	// S1: the runs are present, adjacent and in order.
	pos := 0
	if len(j.Runs) > 0 {
		pos = -1
		for i, r := range m.Runs {
			if r.ID == j.Runs[0] {
				pos = i
				break
			}
		}
		if pos < 0 {
			return stale("run %d is gone", j.Runs[0])
		}
		for k, id := range j.Runs {
			if pos+k >= len(m.Runs) || m.Runs[pos+k].ID != id {
				return stale("runs %v are no longer adjacent", j.Runs)
			}
		}
		if len(j.L0) > 0 && pos != 0 {
			return stale("a job merging l0 must take the newest run, run %d is newer", m.Runs[0].ID)
		}
	}
	end := pos + len(j.Runs)
	// S4.
	if j.Bottom && end != len(m.Runs) {
		return stale("bottom output would not be the last run, run %d is older", m.Runs[end].ID)
	}
	// S3.
	for i, r := range m.Runs {
		if (i < pos || i >= end) && r.ID == j.OutputRun {
			return stale("output run id %d is in use", j.OutputRun)
		}
	}

	m.L0 = m.L0[:keepL0]
	runs := make([]manifest.Run, 0, len(m.Runs)-len(j.Runs)+1)
	runs = append(runs, m.Runs[:pos]...)
	if len(outputs) > 0 {
		runs = append(runs, manifest.Run{ID: j.OutputRun, SSTs: outputs})
	}
	runs = append(runs, m.Runs[end:]...)
	m.Runs = runs
	m.NextRunID = max(m.NextRunID, j.OutputRun+1)
	return nil
}
