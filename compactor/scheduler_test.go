package compactor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/stratakv/strata/lsm/sst"
	"github.com/stratakv/strata/manifest"
)

// Test helpers are prefixed sched so they cannot collide with the tests of
// the rest of the package.

// schedID makes a readable SST id: kind 'L' for L0, 'R' for run SSTs, 'O'
// for compaction outputs, then a number.
func schedID(kind byte, n int) ulid.ULID {
	return ulid.ULID{kind, byte(n >> 16), byte(n >> 8), byte(n)}
}

func schedLabel(id ulid.ULID) string {
	return fmt.Sprintf("%c%d", id[0], int(id[1])<<16|int(id[2])<<8|int(id[3]))
}

func schedSST(id ulid.ULID, size, minSeq, maxSeq uint64) manifest.SST {
	return manifest.SST{ID: id, Size: size, Stats: sst.Stats{
		Smallest: []byte("a"), Largest: []byte("z"), MinSeq: minSeq, MaxSeq: maxSeq, Entries: 1,
	}}
}

// schedManifest builds a valid manifest: l0 L0 SSTs (L0 SST k, newest first,
// has id schedID('L', k)) above one run per entry of runSizes, newest first,
// each a single SST of that size. Runs[i] has id len(runSizes)-i, so the
// oldest run is 1 and NextRunID is len(runSizes)+1. Seqs grow from the
// oldest run to the newest L0 SST.
func schedManifest(l0 int, runSizes []uint64) *manifest.Manifest {
	m := &manifest.Manifest{NextRunID: uint64(len(runSizes)) + 1}
	seq := uint64(0)
	m.Runs = make([]manifest.Run, len(runSizes))
	for i := len(runSizes) - 1; i >= 0; i-- {
		seq++
		m.Runs[i] = manifest.Run{
			ID:   uint64(len(runSizes) - i),
			SSTs: []manifest.SST{schedSST(schedID('R', i), runSizes[i], seq, seq)},
		}
	}
	m.L0 = make([]manifest.SST, l0)
	for k := l0 - 1; k >= 0; k-- {
		seq++
		m.L0[k] = schedSST(schedID('L', k), 10, seq, seq)
	}
	m.LastSeq = seq
	return m
}

// schedGeo returns n run sizes growing by 5× per run from first: no two
// adjacent runs are similar at the default SizeRatio, and all windows of a
// given width are equally dissimilar.
func schedGeo(first uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = first
		first *= 5
	}
	return s
}

var schedRunningRE = regexp.MustCompile(`^(L0|R)\[(\d+):(\d+)\](?:->(\d+))?$`)

// schedRunning parses "L0[a:b]" (m.L0[a:b]; positions past the end name SSTs
// no longer in m) or "R[a:b]" (m.Runs[a:b]), optionally followed by
// "->out", into a running job.
func schedRunning(t *testing.T, m *manifest.Manifest, spec string) Job {
	t.Helper()
	g := schedRunningRE.FindStringSubmatch(spec)
	if g == nil {
		t.Fatalf("bad running job %q", spec)
	}
	a, _ := strconv.Atoi(g[2])
	b, _ := strconv.Atoi(g[3])
	j := Job{OutputRun: 1000}
	if g[4] != "" {
		out, _ := strconv.Atoi(g[4])
		j.OutputRun = uint64(out)
	}
	for k := a; k < b; k++ {
		if g[1] == "L0" {
			j.L0 = append(j.L0, schedID('L', k))
		} else {
			j.Runs = append(j.Runs, m.Runs[k].ID)
		}
	}
	return j
}

// schedFormat renders jobs by position in m: "l0 L0[4:8] -> 9 bottom",
// "similar R[0:4] -> 10", joined by "; ".
func schedFormat(m *manifest.Manifest, jobs []Job) string {
	var out []string
	for _, j := range jobs {
		s := j.Reason.String()
		if len(j.L0) > 0 {
			s += " " + schedSpan("L0", j.L0, func(id ulid.ULID) int {
				return slices.IndexFunc(m.L0, func(x manifest.SST) bool { return x.ID == id })
			})
		}
		if len(j.Runs) > 0 {
			s += " " + schedSpan("R", j.Runs, func(id uint64) int {
				return slices.IndexFunc(m.Runs, func(r manifest.Run) bool { return r.ID == id })
			})
		}
		s += fmt.Sprintf(" -> %d", j.OutputRun)
		if j.Bottom {
			s += " bottom"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// schedSpan renders ids as name[a:b] if they sit at consecutive positions,
// else lists the positions.
func schedSpan[T any](name string, ids []T, pos func(T) int) string {
	var ps []string
	contiguous := true
	for i, id := range ids {
		p := pos(id)
		ps = append(ps, strconv.Itoa(p))
		if p < 0 || p != pos(ids[0])+i {
			contiguous = false
		}
	}
	if contiguous {
		return fmt.Sprintf("%s[%d:%d]", name, pos(ids[0]), pos(ids[0])+len(ids))
	}
	return fmt.Sprintf("%s{%s}", name, strings.Join(ps, ","))
}

func TestPick(t *testing.T) {
	ones := func(n int) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	cat := func(a, b []uint64) []uint64 { return append(slices.Clone(a), b...) }
	cases := []struct {
		name    string
		o       SchedulerOptions
		l0      int
		runs    []uint64
		running []string
		want    string
	}{
		{name: "empty manifest", want: ""},
		{name: "l0 below trigger", l0: 3, runs: []uint64{100}, want: ""},
		{name: "l0 at trigger, no runs: bottom", l0: 4, want: "l0 L0[0:4] -> 1 bottom"},
		{name: "l0 at trigger above runs", l0: 4, runs: []uint64{100}, want: "l0 L0[0:4] -> 2"},
		{name: "l0 above trigger takes all", l0: 7, runs: []uint64{100}, want: "l0 L0[0:7] -> 2"},
		{name: "l0 capped by MaxSources takes the oldest", l0: 40, want: "l0 L0[8:40] -> 1 bottom"},
		{name: "l0 custom trigger", o: SchedulerOptions{L0Trigger: 2}, l0: 2, want: "l0 L0[0:2] -> 1 bottom"},
		{name: "l0 held by a running job: one l0 job at a time", l0: 12, running: []string{"L0[8:12]->5"}, want: ""},
		{name: "running l0 job already applied", l0: 4, runs: []uint64{10}, running: []string{"L0[4:8]->7"},
			want: "l0 L0[0:4] -> 8"},
		{name: "l0 job not bottom while runs are being merged", l0: 4, runs: ones(4), running: []string{"R[0:4]->9"},
			want: "l0 L0[0:4] -> 10"},
		{name: "four similar runs merge at the bottom", runs: []uint64{10, 10, 10, 10}, want: "similar R[0:4] -> 5 bottom"},
		{name: "three similar runs wait", runs: []uint64{10, 10, 10}, want: ""},
		{name: "dissimilar runs do not merge", runs: []uint64{10, 50, 250, 1250, 6250}, want: ""},
		{name: "similar window between dissimilar runs", runs: []uint64{1, 10, 12, 15, 20, 100},
			want: "similar R[1:5] -> 7"},
		{name: "size ratio bound is inclusive", runs: []uint64{10, 40, 40, 10}, want: "similar R[0:4] -> 5 bottom"},
		{name: "size ratio bound exceeded", runs: []uint64{10, 41, 10, 10}, want: ""},
		{name: "ratio applies to the whole window, not pairwise", runs: []uint64{10, 30, 45, 60}, want: ""},
		{name: "a tier joins the next run up to SizeRatio bigger", runs: []uint64{10, 10, 10, 40, 200},
			want: "similar R[0:4] -> 6"},
		{name: "longest window from the newest", runs: []uint64{10, 10, 10, 10, 10, 50}, want: "similar R[0:5] -> 7"},
		{name: "two windows in one pick", runs: []uint64{1, 1, 1, 1, 10, 10, 10, 10},
			want: "similar R[0:4] -> 9; similar R[4:8] -> 10 bottom"},
		{name: "MaxSources caps a window", o: SchedulerOptions{MaxSources: 4}, runs: ones(6),
			want: "similar R[0:4] -> 7"},
		{name: "custom MinMergeWidth", o: SchedulerOptions{MinMergeWidth: 2}, runs: []uint64{10, 10, 100},
			want: "similar R[0:2] -> 4"},
		{name: "custom SizeRatio", o: SchedulerOptions{SizeRatio: 2}, runs: []uint64{10, 10, 10, 40}, want: ""},
		{name: "custom SizeRatio, similar", o: SchedulerOptions{SizeRatio: 2}, runs: []uint64{10, 20, 20, 10},
			want: "similar R[0:4] -> 5 bottom"},
		{name: "empty runs are similar", runs: []uint64{0, 0, 0, 0}, want: "similar R[0:4] -> 5 bottom"},
		{name: "running merge excludes its runs", runs: ones(8), running: []string{"R[0:4]->20"},
			want: "similar R[4:8] -> 21 bottom"},
		{name: "a window stops at a busy run", runs: ones(7), running: []string{"R[3:5]"}, want: ""},
		{name: "more than MaxRuns equally dissimilar runs: merge the oldest", runs: schedGeo(1, 17),
			want: "maxruns R[13:17] -> 18 bottom"},
		{name: "more than MaxRuns runs: merge the closest in size",
			runs: []uint64{1, 5, 25, 125, 200, 320, 512, 820, 4100, 20500, 102500, 512500, 2562500, 12812500, 64062500, 320312500, 1601562500},
			want: "maxruns R[3:7] -> 18"},
		{name: "closest window on a tie: the oldest", runs: []uint64{1, 5, 25, 100, 150, 225, 410, 615, 4100, 20500, 102500, 512500, 2562500, 12812500, 64062500, 320312500, 1601562500},
			want: "maxruns R[4:8] -> 18"},
		{name: "MaxRuns excess sets the width", runs: schedGeo(1, 25), want: "maxruns R[15:25] -> 26 bottom"},
		{name: "MaxRuns width capped by MaxSources", o: SchedulerOptions{MaxSources: 6}, runs: schedGeo(1, 25),
			want: "maxruns R[19:25] -> 26 bottom; maxruns R[14:19] -> 27"},
		{name: "MaxRuns counts merges in flight", runs: schedGeo(1, 17), running: []string{"R[15:17]->30"}, want: ""},
		{name: "MaxRuns skips busy oldest runs", runs: schedGeo(1, 18), running: []string{"R[16:18]->30"},
			want: "maxruns R[12:16] -> 31"},
		{name: "MaxRuns counts similar merges planned", runs: cat(ones(4), schedGeo(10, 13)),
			want: "similar R[0:4] -> 18"},
		{name: "MaxRuns below MinMergeWidth", o: SchedulerOptions{MaxRuns: 1}, runs: []uint64{1, 100},
			want: "maxruns R[0:2] -> 3 bottom"},
		{name: "MaxRuns never merges a single run", runs: schedGeo(1, 18), running: []string{"R[0:16]->40"},
			want: ""},
		{name: "l0, similar and maxruns together", l0: 5, runs: cat(ones(4), schedGeo(10, 16)),
			want: "l0 L0[0:5] -> 21; similar R[0:4] -> 22; maxruns R[16:20] -> 23 bottom"},
		{name: "output ids skip running jobs' ids", l0: 6, runs: []uint64{10, 10, 10, 10}, running: []string{"L0[2:6]->40"},
			want: "similar R[0:4] -> 41 bottom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := schedManifest(c.l0, c.runs)
			var running []Job
			for _, s := range c.running {
				running = append(running, schedRunning(t, m, s))
			}
			before := m.Clone()
			jobs := Pick(m, c.o, running)
			if got := schedFormat(m, jobs); got != c.want {
				t.Errorf("Pick:\n got %q\nwant %q", got, c.want)
			}
			if !reflect.DeepEqual(m, before) {
				t.Error("Pick modified the manifest")
			}
			o := c.o
			o.EnsureDefaults()
			schedCheckPlan(t, m, o, running, jobs)
		})
	}
}

// schedCheckPlan checks the rules every plan keeps, whatever the manifest:
// inputs as Pick documents them, no overlap, fresh output ids, Bottom.
func schedCheckPlan(t *testing.T, m *manifest.Manifest, o SchedulerOptions, running, jobs []Job) {
	t.Helper()
	usedL0 := map[ulid.ULID]bool{}
	usedRun := map[uint64]bool{}
	usedOut := map[uint64]bool{}
	l0Busy := false
	for _, j := range running {
		for _, id := range j.L0 {
			usedL0[id] = true
			if slices.ContainsFunc(m.L0, func(s manifest.SST) bool { return s.ID == id }) {
				l0Busy = true
			}
		}
		for _, id := range j.Runs {
			usedRun[id] = true
		}
		usedOut[j.OutputRun] = true
	}
	for _, r := range m.Runs {
		usedOut[r.ID] = true
	}
	fail := func(j Job, format string, args ...any) {
		t.Helper()
		t.Fatalf("job %v: %s\nplan: %s", j, fmt.Sprintf(format, args...), schedFormat(m, jobs))
	}
	for _, j := range jobs {
		if (len(j.L0) > 0) == (len(j.Runs) > 0) {
			fail(j, "takes both or neither l0 ssts and runs")
		}
		if j.OutputRun < m.NextRunID || usedOut[j.OutputRun] {
			fail(j, "output run id not fresh")
		}
		usedOut[j.OutputRun] = true
		var bytes uint64
		if len(j.L0) > 0 {
			if j.Reason != ReasonL0 || l0Busy {
				fail(j, "unexpected l0 job")
			}
			l0Busy = true
			n := min(len(m.L0), o.MaxSources)
			if len(m.L0) < o.L0Trigger || len(j.L0) != n {
				fail(j, "takes %d of %d l0 ssts", len(j.L0), len(m.L0))
			}
			for i, id := range j.L0 {
				s := m.L0[len(m.L0)-n+i]
				if s.ID != id {
					fail(j, "l0 inputs are not the oldest ssts in order")
				}
				if usedL0[id] {
					fail(j, "l0 sst %s already taken", id)
				}
				usedL0[id] = true
				bytes += s.Size
			}
			if j.Bottom != (len(m.Runs) == 0) {
				fail(j, "bottom %v with %d runs", j.Bottom, len(m.Runs))
			}
		} else {
			if len(j.Runs) < 2 || len(j.Runs) > o.MaxSources {
				fail(j, "merges %d runs", len(j.Runs))
			}
			pos := slices.IndexFunc(m.Runs, func(r manifest.Run) bool { return r.ID == j.Runs[0] })
			if pos < 0 || pos+len(j.Runs) > len(m.Runs) {
				fail(j, "runs not in the manifest")
			}
			lo, hi := uint64(math.MaxUint64), uint64(0)
			for k, id := range j.Runs {
				r := m.Runs[pos+k]
				if r.ID != id {
					fail(j, "runs not adjacent")
				}
				if usedRun[id] {
					fail(j, "run %d already taken", id)
				}
				usedRun[id] = true
				var size uint64
				for _, s := range r.SSTs {
					size += s.Size
				}
				lo, hi = min(lo, size), max(hi, size)
				bytes += size
			}
			switch j.Reason {
			case ReasonSimilar:
				if len(j.Runs) < o.MinMergeWidth || float64(hi) > o.SizeRatio*float64(lo) {
					fail(j, "runs not similar: %d runs, sizes %d..%d", len(j.Runs), lo, hi)
				}
			case ReasonMaxRuns:
			default:
				fail(j, "unexpected reason")
			}
			if j.Bottom != (pos+len(j.Runs) == len(m.Runs)) {
				fail(j, "bottom %v at runs[%d:%d] of %d", j.Bottom, pos, pos+len(j.Runs), len(m.Runs))
			}
		}
		if j.InputBytes != bytes {
			fail(j, "input bytes %d, want %d", j.InputBytes, bytes)
		}
	}
}

func TestSchedulerOptions(t *testing.T) {
	var o SchedulerOptions
	o.EnsureDefaults()
	want := SchedulerOptions{L0Trigger: 4, MaxSources: 32, MinMergeWidth: 4, SizeRatio: 4, MaxRuns: 16}
	if o != want {
		t.Fatalf("defaults %+v, want %+v", o, want)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	set := SchedulerOptions{L0Trigger: 1, MaxSources: 2, MinMergeWidth: 2, SizeRatio: 1, MaxRuns: 1}
	o = set
	o.EnsureDefaults()
	if o != set {
		t.Fatalf("EnsureDefaults changed set fields: %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("smallest options invalid: %v", err)
	}
	bad := []func(*SchedulerOptions){
		func(o *SchedulerOptions) { o.L0Trigger = -1 },
		func(o *SchedulerOptions) { o.MinMergeWidth = 1 },
		func(o *SchedulerOptions) { o.MaxSources = 3 },
		func(o *SchedulerOptions) { o.SizeRatio = 0.5 },
		func(o *SchedulerOptions) { o.SizeRatio = math.NaN() },
		func(o *SchedulerOptions) { o.SizeRatio = math.Inf(1) },
		func(o *SchedulerOptions) { o.MaxRuns = -1 },
	}
	for i, f := range bad {
		o := want
		f(&o)
		if err := o.Validate(); err == nil || !strings.HasPrefix(err.Error(), "compactor: ") {
			t.Errorf("bad options %d (%+v): Validate = %v", i, o, err)
		}
	}
}

func TestApply(t *testing.T) {
	// The base manifest: L0 L0..L5 (newest first) above runs 5,4,3,2,1.
	base := func() *manifest.Manifest { return schedManifest(6, []uint64{10, 20, 30, 40, 50}) }
	l0 := func(a, b int) []ulid.ULID {
		var ids []ulid.ULID
		for k := a; k < b; k++ {
			ids = append(ids, schedID('L', k))
		}
		return ids
	}
	out := []manifest.SST{schedSST(schedID('O', 1), 100, 0, 0)}
	cases := []struct {
		name    string
		prepend int // L0 SSTs the writer adds between Pick and Apply
		job     Job
		outputs []manifest.SST
		want    string // the manifest after, or "stale" or "error"
	}{
		{name: "l0 job", job: Job{L0: l0(2, 6), OutputRun: 6}, outputs: out,
			want: "l0=L0,L1 runs=6,5,4,3,2,1 next=7"},
		{name: "l0 job after the writer added l0 ssts", prepend: 3, job: Job{L0: l0(2, 6), OutputRun: 6}, outputs: out,
			want: "l0=L102,L101,L100,L0,L1 runs=6,5,4,3,2,1 next=7"},
		{name: "l0 job taking all of l0", job: Job{L0: l0(0, 6), OutputRun: 9}, outputs: out,
			want: "l0= runs=9,5,4,3,2,1 next=10"},
		{name: "l0 job with empty output", job: Job{L0: l0(0, 6), OutputRun: 6},
			want: "l0= runs=5,4,3,2,1 next=7"},
		{name: "l0 input gone", job: Job{L0: []ulid.ULID{schedID('L', 4), schedID('L', 5), schedID('L', 9)}, OutputRun: 6},
			outputs: out, want: "stale"},
		{name: "l0 inputs not the oldest", job: Job{L0: l0(1, 5), OutputRun: 6}, outputs: out, want: "stale"},
		{name: "more l0 inputs than l0 ssts", job: Job{L0: l0(0, 7), OutputRun: 6}, outputs: out, want: "stale"},
		{name: "duplicate l0 input", job: Job{L0: append(l0(3, 6), schedID('L', 5)), OutputRun: 6}, outputs: out,
			want: "stale"},
		{name: "bottom l0 job above runs", job: Job{L0: l0(2, 6), OutputRun: 6, Bottom: true}, outputs: out,
			want: "stale"},
		{name: "run job in the middle keeps positions", job: Job{Runs: []uint64{4, 3}, OutputRun: 6}, outputs: out,
			want: "l0=L0,L1,L2,L3,L4,L5 runs=5,6,2,1 next=7"},
		{name: "run job with newest run", job: Job{Runs: []uint64{5, 4}, OutputRun: 6}, outputs: out,
			want: "l0=L0,L1,L2,L3,L4,L5 runs=6,3,2,1 next=7"},
		{name: "bottom run job", job: Job{Runs: []uint64{2, 1}, OutputRun: 6, Bottom: true}, outputs: out,
			want: "l0=L0,L1,L2,L3,L4,L5 runs=5,4,3,6 next=7"},
		{name: "bottom run job after new l0", prepend: 1, job: Job{Runs: []uint64{3, 2, 1}, OutputRun: 6, Bottom: true},
			outputs: out, want: "l0=L100,L0,L1,L2,L3,L4,L5 runs=5,4,6 next=7"},
		{name: "run job with empty output drops the run", job: Job{Runs: []uint64{4, 3}, OutputRun: 6},
			want: "l0=L0,L1,L2,L3,L4,L5 runs=5,2,1 next=7"},
		{name: "bottom job whose runs are not the last", job: Job{Runs: []uint64{3, 2}, OutputRun: 6, Bottom: true},
			outputs: out, want: "stale"},
		{name: "runs not adjacent", job: Job{Runs: []uint64{4, 2}, OutputRun: 6}, outputs: out, want: "stale"},
		{name: "runs out of order", job: Job{Runs: []uint64{3, 4}, OutputRun: 6}, outputs: out, want: "stale"},
		{name: "runs past the end", job: Job{Runs: []uint64{1, 0}, OutputRun: 6}, outputs: out, want: "stale"},
		{name: "run gone", job: Job{Runs: []uint64{9}, OutputRun: 6}, outputs: out, want: "stale"},
		{name: "output id in use", job: Job{Runs: []uint64{5, 4}, OutputRun: 3}, outputs: out, want: "stale"},
		{name: "output id of an input", job: Job{Runs: []uint64{4, 3}, OutputRun: 4}, outputs: out,
			want: "l0=L0,L1,L2,L3,L4,L5 runs=5,4,2,1 next=6"},
		{name: "output id below NextRunID keeps NextRunID", job: Job{Runs: []uint64{4, 3}, OutputRun: 0}, outputs: out,
			want: "l0=L0,L1,L2,L3,L4,L5 runs=5,0,2,1 next=6"},
		{name: "output id far above NextRunID", job: Job{Runs: []uint64{4, 3}, OutputRun: 40}, outputs: out,
			want: "l0=L0,L1,L2,L3,L4,L5 runs=5,40,2,1 next=41"},
		{name: "l0 with the newest runs", job: Job{L0: l0(3, 6), Runs: []uint64{5, 4}, OutputRun: 6}, outputs: out,
			want: "l0=L0,L1,L2 runs=6,3,2,1 next=7"},
		{name: "l0 with runs that are not the newest", job: Job{L0: l0(3, 6), Runs: []uint64{4, 3}, OutputRun: 6},
			outputs: out, want: "stale"},
		{name: "no inputs", job: Job{OutputRun: 6}, outputs: out, want: "error"},
		{name: "output id overflows", job: Job{Runs: []uint64{1}, OutputRun: math.MaxUint64}, outputs: out, want: "error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			for k := range c.prepend {
				m.LastSeq++
				m.L0 = slices.Insert(m.L0, 0, schedSST(schedID('L', 100+k), 10, m.LastSeq, m.LastSeq))
			}
			before := m.Clone()
			err := Apply(m, c.job, c.outputs)
			switch {
			case c.want == "stale" || c.want == "error":
				if err == nil {
					t.Fatalf("Apply succeeded: %s", schedDescribe(m))
				}
				if errors.Is(err, ErrStaleJob) != (c.want == "stale") {
					t.Fatalf("Apply: %v, want %s", err, c.want)
				}
				if !reflect.DeepEqual(m, before) {
					t.Fatal("failed Apply modified the manifest")
				}
				return
			case err != nil:
				t.Fatalf("Apply: %v", err)
			}
			if got := schedDescribe(m); got != c.want {
				t.Fatalf("after Apply:\n got %s\nwant %s", got, c.want)
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("manifest invalid after Apply: %v", err)
			}
			if i := slices.IndexFunc(m.Runs, func(r manifest.Run) bool { return r.ID == c.job.OutputRun }); len(c.outputs) > 0 &&
				(i < 0 || !reflect.DeepEqual(m.Runs[i].SSTs, c.outputs)) {
				t.Fatal("output run does not hold the outputs")
			}
			// Fields the compactor does not own stay as they were.
			m.L0, m.Runs, m.NextRunID = before.L0, before.Runs, before.NextRunID
			if !reflect.DeepEqual(m, before) {
				t.Fatal("Apply changed fields it does not own")
			}
		})
	}
}

// schedDescribe renders the shape of m: "l0=L0,L1 runs=6,5 next=7".
func schedDescribe(m *manifest.Manifest) string {
	var l0, runs []string
	for _, s := range m.L0 {
		l0 = append(l0, schedLabel(s.ID))
	}
	for _, r := range m.Runs {
		runs = append(runs, strconv.FormatUint(r.ID, 10))
	}
	return fmt.Sprintf("l0=%s runs=%s next=%d", strings.Join(l0, ","), strings.Join(runs, ","), m.NextRunID)
}

// TestApplyOrderOfConcurrentJobs: an L0 job and a merge of the newest runs
// picked together land in age order whichever finishes first.
func TestApplyOrderOfConcurrentJobs(t *testing.T) {
	for _, l0First := range []bool{true, false} {
		m := schedManifest(4, []uint64{10, 10, 10, 10})
		jobs := Pick(m, SchedulerOptions{}, nil)
		if got, want := schedFormat(m, jobs), "l0 L0[0:4] -> 5; similar R[0:4] -> 6 bottom"; got != want {
			t.Fatalf("Pick: %q, want %q", got, want)
		}
		if !l0First {
			jobs[0], jobs[1] = jobs[1], jobs[0]
		}
		for i, j := range jobs {
			// The writer flushes more L0 SSTs meanwhile.
			m.LastSeq++
			m.L0 = slices.Insert(m.L0, 0, schedSST(schedID('L', 100+i), 10, m.LastSeq, m.LastSeq))
			if err := Apply(m, j, []manifest.SST{schedSST(schedID('O', i), 40, 0, 0)}); err != nil {
				t.Fatalf("Apply %v: %v", j, err)
			}
		}
		if got, want := schedDescribe(m), "l0=L101,L100 runs=5,6 next=7"; got != want {
			t.Fatalf("l0 first %v: got %s, want %s", l0First, got, want)
		}
	}
}

// schedSim simulates a compactor against a writer: the writer adds L0 SSTs
// with increasing seqs, the compactor picks jobs and applies them, in order
// (sync) or late and out of order (async), and every manifest is checked.
type schedSim struct {
	t       *testing.T
	r       *rand.Rand
	o       SchedulerOptions
	m       *manifest.Manifest
	running []Job
	nextSST int
	// entries is the number of L0 SSTs ever added, minus those in empty
	// outputs: the sum of Entries over m, if Apply loses or doubles nothing.
	entries  uint64
	ingested uint64 // bytes added to L0
	written  uint64 // bytes written by compactions
	maxRuns  int
	// outSize gives a job's output size from the sizes of its sources (L0
	// SSTs and runs). Default: 50% to 100% of their sum, and 1 in 50 jobs
	// writes no output at all.
	outSize func(sources []uint64) uint64
}

func newSchedSim(t *testing.T, r *rand.Rand, o SchedulerOptions) *schedSim {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Fatalf("options %+v: %v", o, err)
	}
	return &schedSim{t: t, r: r, o: o, m: &manifest.Manifest{}}
}

func (s *schedSim) addL0(size uint64) {
	n := 1 + s.r.Uint64N(4) // rows, hence seqs, in this SST
	first := s.m.LastSeq + 1
	s.m.LastSeq += n
	s.nextSST++
	sst := schedSST(schedID('L', s.nextSST), size, first, s.m.LastSeq)
	s.m.L0 = slices.Insert(s.m.L0, 0, sst)
	s.entries++
	s.ingested += size
	s.check()
}

func (s *schedSim) pick() {
	jobs := Pick(s.m, s.o, s.running)
	schedCheckPlan(s.t, s.m, s.o, s.running, jobs)
	s.running = append(s.running, jobs...)
}

// finish runs and applies running job i on a clone of m, as Store.Update
// would.
func (s *schedSim) finish(i int) {
	j := s.running[i]
	s.running = slices.Delete(s.running, i, i+1)
	var in []manifest.SST
	var sources []uint64
	for _, id := range j.L0 {
		k := slices.IndexFunc(s.m.L0, func(x manifest.SST) bool { return x.ID == id })
		if k < 0 {
			s.t.Fatalf("job %v: l0 input %s gone", j, id)
		}
		in = append(in, s.m.L0[k])
		sources = append(sources, s.m.L0[k].Size)
	}
	for _, id := range j.Runs {
		k := slices.IndexFunc(s.m.Runs, func(r manifest.Run) bool { return r.ID == id })
		if k < 0 {
			s.t.Fatalf("job %v: run %d gone", j, id)
		}
		in = append(in, s.m.Runs[k].SSTs...)
		var size uint64
		for _, x := range s.m.Runs[k].SSTs {
			size += x.Size
		}
		sources = append(sources, size)
	}
	minSeq, maxSeq := uint64(math.MaxUint64), uint64(0)
	var entries, size uint64
	for _, x := range in {
		minSeq, maxSeq = min(minSeq, x.Stats.MinSeq), max(maxSeq, x.Stats.MaxSeq)
		entries += x.Stats.Entries
		size += x.Size
	}
	empty := false
	if s.outSize != nil {
		size = s.outSize(sources)
	} else {
		size = size * (50 + s.r.Uint64N(51)) / 100
		empty = s.r.IntN(50) == 0
	}
	var outputs []manifest.SST
	if !empty {
		// 1 to 3 SSTs over disjoint key ranges; the first counts the entries
		// and the bytes that do not divide evenly.
		ranges := [][2]string{{"a", "h"}, {"i", "p"}, {"q", "z"}}
		n := 1 + s.r.IntN(3)
		for k := range n {
			s.nextSST++
			x := schedSST(schedID('O', s.nextSST), size/uint64(n), minSeq, maxSeq)
			x.Stats.Smallest, x.Stats.Largest = []byte(ranges[k][0]), []byte(ranges[k][1])
			x.Stats.Entries = 0
			if k == 0 {
				x.Stats.Entries = entries
				x.Size += size % uint64(n)
			}
			outputs = append(outputs, x)
		}
	} else {
		s.entries -= entries
	}
	s.written += size
	c := s.m.Clone()
	if err := Apply(c, j, outputs); err != nil {
		s.t.Fatalf("Apply %v: %v\nmanifest %s", j, err, schedDescribe(s.m))
	}
	s.m = c
	s.check()
}

// finishAll applies every running job in random order.
func (s *schedSim) finishAll() {
	for len(s.running) > 0 {
		s.finish(s.r.IntN(len(s.running)))
	}
}

// check verifies the invariants every manifest keeps: Validate, age order
// (each L0 SST newer than the next, the oldest L0 SST newer than the newest
// run, each run newer than the next, by seq range), and no lost rows.
func (s *schedSim) check() {
	s.t.Helper()
	m := s.m
	if err := m.Validate(); err != nil {
		s.t.Fatalf("%v\nmanifest %s", err, schedDescribe(m))
	}
	type span struct {
		name     string
		min, max uint64
	}
	var spans []span
	var entries uint64
	for _, x := range m.L0 {
		spans = append(spans, span{schedLabel(x.ID), x.Stats.MinSeq, x.Stats.MaxSeq})
		entries += x.Stats.Entries
	}
	for _, r := range m.Runs {
		if len(r.SSTs) == 0 {
			s.t.Fatalf("run %d is empty", r.ID)
		}
		sp := span{fmt.Sprintf("run %d", r.ID), math.MaxUint64, 0}
		for _, x := range r.SSTs {
			sp.min, sp.max = min(sp.min, x.Stats.MinSeq), max(sp.max, x.Stats.MaxSeq)
			entries += x.Stats.Entries
		}
		spans = append(spans, sp)
	}
	for i := 1; i < len(spans); i++ {
		if spans[i-1].min <= spans[i].max {
			s.t.Fatalf("age order broken: %s seqs %d..%d not newer than %s seqs %d..%d\nmanifest %s",
				spans[i-1].name, spans[i-1].min, spans[i-1].max, spans[i].name, spans[i].min, spans[i].max, schedDescribe(m))
		}
	}
	if entries != s.entries {
		s.t.Fatalf("manifest holds %d entries, want %d", entries, s.entries)
	}
	s.maxRuns = max(s.maxRuns, len(m.Runs))
}

// drain finishes everything and compacts until Pick has nothing to do, then
// checks that nothing is left that Pick should have done.
func (s *schedSim) drain() {
	s.finishAll()
	for i := 0; ; i++ {
		if i == 1000 {
			s.t.Fatalf("compaction does not settle: %s", schedDescribe(s.m))
		}
		s.pick()
		if len(s.running) == 0 {
			break
		}
		s.finishAll()
	}
	m, o := s.m, s.o
	if len(m.L0) >= o.L0Trigger {
		s.t.Fatalf("settled with %d l0 ssts", len(m.L0))
	}
	if len(m.Runs) > o.MaxRuns {
		s.t.Fatalf("settled with %d runs", len(m.Runs))
	}
	// No MinMergeWidth adjacent runs are similar: any longer similar window
	// would contain such a one.
	for i := 0; i+o.MinMergeWidth <= len(m.Runs); i++ {
		lo, hi := uint64(math.MaxUint64), uint64(0)
		for _, r := range m.Runs[i : i+o.MinMergeWidth] {
			var size uint64
			for _, x := range r.SSTs {
				size += x.Size
			}
			lo, hi = min(lo, size), max(hi, size)
		}
		if float64(hi) <= o.SizeRatio*float64(lo) {
			s.t.Fatalf("settled with similar runs at %d: %s", i, schedDescribe(m))
		}
	}
}

func schedRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func schedRandOptions(r *rand.Rand) SchedulerOptions {
	o := SchedulerOptions{
		L0Trigger:     1 + r.IntN(8),
		MinMergeWidth: 2 + r.IntN(5),
		SizeRatio:     1 + 3*r.Float64(),
		MaxRuns:       1 + r.IntN(20),
	}
	// Large enough to take all of L0 at once in the sync simulation.
	o.MaxSources = max(o.MinMergeWidth, o.L0Trigger+3) + r.IntN(8)
	return o
}

// TestPickApplySync picks and applies everything at each step: L0 stays
// below L0Trigger and runs stay within MaxRuns+1 (an L0 job adds one run
// after the MaxRuns check).
func TestPickApplySync(t *testing.T) {
	r := schedRand(t)
	for range 20 {
		s := newSchedSim(t, r, schedRandOptions(r))
		for step := range 1500 {
			for range r.IntN(4) {
				s.addL0(1 + r.Uint64N(100))
			}
			s.pick()
			s.finishAll()
			if len(s.m.L0) >= s.o.L0Trigger || len(s.m.Runs) > s.o.MaxRuns+1 {
				t.Fatalf("options %+v step %d: %d l0 ssts, %d runs", s.o, step, len(s.m.L0), len(s.m.Runs))
			}
			if step%300 == 299 {
				s.drain()
			}
		}
	}
}

// TestPickApplyAsync lets jobs run long and finish in any order while the
// writer keeps adding L0 SSTs, so Apply always meets a manifest with more L0
// SSTs, and often other jobs' outputs, than its job was picked on.
func TestPickApplyAsync(t *testing.T) {
	r := schedRand(t)
	for range 20 {
		s := newSchedSim(t, r, schedRandOptions(r))
		for step := range 1500 {
			for range r.IntN(4) {
				s.addL0(1 + r.Uint64N(100))
			}
			for i := len(s.running) - 1; i >= 0; i-- {
				if r.IntN(3) == 0 {
					s.finish(i)
				}
			}
			if r.IntN(2) == 0 {
				s.pick()
			}
			if step%300 == 299 {
				s.drain()
			}
		}
		s.drain()
	}
}

// TestWriteAmplification logs what the tiering costs at SizeRatio 2 and 4
// (the numbers quoted at SchedulerOptions.SizeRatio), on equal L0 SSTs of 64
// bytes, appended (every output as big as its inputs) or overwriting a key
// space worth 500 L0 SSTs (a merge keeps the union of its sources' keys, each
// source a uniform random sample), and bounds them loosely.
func TestWriteAmplification(t *testing.T) {
	const size, steps = 64, 10000
	const space = 500 * size
	workloads := []struct {
		name    string
		outSize func([]uint64) uint64
	}{
		{"append", func(src []uint64) uint64 {
			var sum uint64
			for _, s := range src {
				sum += s
			}
			return sum
		}},
		{"overwrite", func(src []uint64) uint64 {
			absent := 1.0
			for _, s := range src {
				absent *= 1 - min(float64(s)/space, 1)
			}
			return uint64(math.Round(space * (1 - absent)))
		}},
	}
	for _, w := range workloads {
		for _, ratio := range []float64{2, 4} {
			s := newSchedSim(t, rand.New(rand.NewPCG(1, 2)), SchedulerOptions{SizeRatio: ratio})
			s.outSize = w.outSize
			var runs, bytes float64
			for range steps {
				s.addL0(size)
				s.pick()
				s.finishAll()
				runs += float64(len(s.m.Runs))
				for _, x := range s.m.AllSSTs() {
					bytes += float64(x.Size)
				}
			}
			amp := float64(s.written) / float64(s.ingested)
			msg := fmt.Sprintf("%s, SizeRatio %v: write amplification %.2f, mean runs %.1f, max runs %d",
				w.name, ratio, amp, runs/steps, s.maxRuns)
			if w.name == "overwrite" {
				msg += fmt.Sprintf(", space amplification %.2f", bytes/steps/space)
			}
			t.Log(msg)
			if amp > 10 || s.maxRuns > s.o.MaxRuns+1 {
				t.Errorf("%s, SizeRatio %v: write amplification %.2f, max %d runs", w.name, ratio, amp, s.maxRuns)
			}
		}
	}
}
