package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratakv/strata/blob"
)

// spaceFigures is the bucket's size at the end of the run.
type spaceFigures struct {
	bucket   int64 // every file of the server's directory
	sst      int64 // sst/ (live and not yet collected)
	wal      int64
	manifest int64
	liveSST  float64 // SSTs the current manifest references (INFO lsm_sst_bytes)
	ssts     string
	runs     string
	peakRSS  int64 // VmHWM: the whole run's peak
	gcWaited time.Duration
	gcDone   bool // sst/ holds only live SSTs
}

// waitGC waits, up to -gc-wait, until sst/ holds little more than the
// SSTs the manifest references: GC deletes a replaced SST only MinAge
// (10 min) after it was written and again after it was replaced.
func (r *ltmRun) waitGC(ctx context.Context) error {
	r.rss.setPhase("gc")
	start := time.Now()
	sstDir := filepath.Join(r.srv.Dir, "data", blob.SSTDir)
	for {
		info, err := r.srv.Info()
		if err != nil {
			return err
		}
		if float64(treeBytes(sstDir)) <= 1.01*infoFloat(info, "lsm_sst_bytes") {
			r.space.gcDone = true
			break
		}
		if time.Since(start) >= r.cfg.gcWait {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(15 * time.Second):
		}
	}
	r.space.gcWaited = time.Since(start)
	fmt.Fprintf(r.env.Log, "ltm: GC done=%v after %v\n", r.space.gcDone, r.space.gcWaited.Round(time.Second))
	return nil
}

// measureSpace measures the bucket after the reads, the longest compaction and
// GC have had to settle.
func (r *ltmRun) measureSpace() error {
	info, err := r.srv.Info()
	if err != nil {
		return err
	}
	s := spaceFigures{
		gcWaited: r.space.gcWaited,
		gcDone:   r.space.gcDone,
		bucket:   r.srv.DirBytes(),
		liveSST:  infoFloat(info, "lsm_sst_bytes"),
		ssts:     info["lsm_ssts"],
		runs:     info["lsm_sorted_runs"],
		peakRSS:  r.srv.PeakRSS(),
	}
	data := filepath.Join(r.srv.Dir, "data")
	s.sst, s.wal, s.manifest = treeBytes(filepath.Join(data, blob.SSTDir)), treeBytes(filepath.Join(data, blob.WALDir)),
		treeBytes(filepath.Join(data, blob.ManifestDir))
	r.space = s
	return nil
}

// treeBytes is the size of the files under dir.
func treeBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// rssCell is a phase's peak RSS; a phase shorter than the sampling
// interval has none.
func rssCell(b int64) string {
	if b == 0 {
		return "-"
	}
	return mb(float64(b))
}

// msf is a duration in milliseconds, for charts.
func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mb(b float64) string { return fmt.Sprintf("%.0f", b/(1<<20)) }

// report writes the tables and charts.
func (r *ltmRun) report() error {
	rep := r.env.Report
	rep.Table(r.loadTable())
	rep.Table(r.readTable())
	rep.Table(r.spaceTable())
	if err := r.charts(); err != nil {
		return err
	}
	var over []string
	if r.space.peakRSS > rssAim {
		over = append(over, fmt.Sprintf("peak RSS %s MB is over the 1 GB aim", mb(float64(r.space.peakRSS))))
	}
	for _, p := range r.phases {
		if !p.peer && strings.HasPrefix(p.name, "GET hot") && p.lat.Quantile(0.99) > 2*time.Millisecond {
			miss := fmt.Sprintf("p99 of cached GETs on %d connections %s ms is over the 2 ms aim", p.conns, ms(p.lat.Quantile(0.99)))
			if peer := r.peerPhase(p); peer != nil {
				miss += fmt.Sprintf(" (redis-server's, same client and connections: %s ms)", ms(peer.lat.Quantile(0.99)))
			}
			over = append(over, miss)
		}
	}
	if len(over) > 0 {
		rep.Text("Aims missed: %s.", strings.Join(over, "; "))
	}
	return nil
}

func (r *ltmRun) loadTable() *Table {
	cfg, res, li, si := r.cfg, r.loadRes, r.loadInfo, r.settledInfo
	secs := res.Elapsed.Seconds()
	t := &Table{
		Title:   "Load",
		Columns: []string{"figure", "value"},
		Note: fmt.Sprintf("strata server --block-cache %s --appendfsync everysec, local-dir bucket, in-process compaction; "+
			"%d connections × pipeline %d of SET k:%%010d with %d-byte incompressible values. "+
			"Latency is per pipeline of %d SETs. Settled: L0 below the compaction trigger and the server under 5%% CPU for 10 s.",
			cfg.blockCache, cfg.loadConns, cfg.pipeline, cfg.value, cfg.pipeline),
	}
	t.AddRow("keys × value", fmt.Sprintf("%d × %d B", cfg.keys, cfg.value))
	t.AddRow("logical GB (keys + values)", fmt.Sprintf("%.2f", float64(cfg.logicalBytes())/1e9))
	t.AddRow("load time s", fmt.Sprintf("%.1f", secs))
	t.AddRow("MB/s", fmt.Sprintf("%.1f", float64(cfg.logicalBytes())/1e6/secs))
	t.AddRow("keys/s", fmt.Sprintf("%.0f", float64(cfg.keys)/secs))
	t.AddRow("pipeline p50 / p99 ms", ms(res.Latency.Quantile(0.5))+" / "+ms(res.Latency.Quantile(0.99)))
	t.AddRow("write stalls (memtable) / slowdowns (L0)", li["lsm_write_stalls"]+" / "+li["lsm_write_slowdowns"])
	t.AddRow("write stall seconds", li["lsm_write_stall_seconds"])
	t.AddRow("L0 SSTs / sorted runs at end of load", li["lsm_l0_ssts"]+" / "+li["lsm_sorted_runs"])
	t.AddRow("compactions during load", li["compactions"])
	t.AddRow("settle time s", fmt.Sprintf("%.0f (settled: %v)", r.settleTime.Seconds(), r.settled))
	t.AddRow("L0 SSTs / sorted runs settled", si["lsm_l0_ssts"]+" / "+si["lsm_sorted_runs"])
	t.AddRow("compaction written GB settled (write amp.)", fmt.Sprintf("%.2f (%.2f)",
		infoFloat(si, "compaction_written_bytes")/1e9, (infoFloat(si, "compaction_written_bytes")+infoFloat(si, "lsm_flush_bytes"))/float64(cfg.logicalBytes())))
	t.AddRow("peak RSS MB during load", mb(float64(r.rss.peak("load"))))
	return t
}

// peerPhase is redis-server's run of strata's phase p, if there is one.
func (r *ltmRun) peerPhase(p readPhase) *readPhase {
	for i := range r.phases {
		if q := &r.phases[i]; q.peer && q.name == p.name && q.conns == p.conns {
			return q
		}
	}
	return nil
}

func (r *ltmRun) readTable() *Table {
	t := &Table{
		Title: "Reads",
		Columns: []string{"phase", "conns", "cmd/s", "keys/s", "p50 ms", "p99 ms", "p999 ms",
			"block cache hit %", "objstore GETs/cmd", "peak RSS MB"},
		Note: fmt.Sprintf("%v per phase (SCAN: once over the whole keyspace, one connection), pipeline 1, every value's "+
			"length checked (a miss fails the run). Zipfian s=1.1 over all keys, hot keys scattered; the hot set is "+
			"%d consecutive keys (a quarter of the block cache), read once before its phase. Latency per command; "+
			"block cache hit %% counts data blocks (index and filter blocks are not counted); objstore GETs = objstore_get_range + objstore_get deltas. The redis-server rows are the peer: "+
			"redis-server 7 (no AOF) holding just the hot set, read by the same client with the same "+
			"connections and duration right after strata's hot phases.", r.cfg.duration, r.cfg.hotKeys()),
	}
	for _, p := range r.phases {
		if p.peer {
			t.AddRow(p.name+", redis-server", p.conns, fmt.Sprintf("%.0f", p.callsPerSec()), fmt.Sprintf("%.0f", p.keysPerSec()),
				ms(p.lat.Quantile(0.5)), ms(p.lat.Quantile(0.99)), ms(p.lat.Quantile(0.999)), "-", "-", "-")
			continue
		}
		t.AddRow(p.name, p.conns, fmt.Sprintf("%.0f", p.callsPerSec()), fmt.Sprintf("%.0f", p.keysPerSec()),
			ms(p.lat.Quantile(0.5)), ms(p.lat.Quantile(0.99)), ms(p.lat.Quantile(0.999)),
			fmt.Sprintf("%.1f", 100*p.hitRatio()), fmt.Sprintf("%.3f", p.objGets/float64(max(1, p.calls))), rssCell(p.rssPeak))
	}
	return t
}

func (r *ltmRun) spaceTable() *Table {
	s, logical := r.space, float64(r.cfg.logicalBytes())
	t := &Table{
		Title:   "Space and memory",
		Columns: []string{"figure", "MB", "× logical"},
		Note: fmt.Sprintf("Measured after the reads and %.0f s of waiting for GC (done: %v; sst/ within 1%% of the live SSTs). "+
			"GC deletes a replaced SST only 10 min after it was written and 10 min after it was replaced "+
			"(compactor.GCOptions.MinAge); until then sst/ also holds what compaction replaced. "+
			"Live SSTs (lsm_sst_bytes) is what the bucket comes down to.", s.gcWaited.Seconds(), s.gcDone),
	}
	row := func(name string, b float64) { t.AddRow(name, mb(b), fmt.Sprintf("%.2f", b/logical)) }
	row("logical (keys + values)", logical)
	row("bucket (whole data dir)", float64(s.bucket))
	row("  sst/", float64(s.sst))
	row("  wal/", float64(s.wal))
	row("  manifest/", float64(s.manifest))
	row(fmt.Sprintf("live SSTs (%s SSTs, %s runs)", s.ssts, s.runs), s.liveSST)
	t.AddRow("peak RSS (VmHWM) of the whole run, aim 1024 MB", mb(float64(s.peakRSS)), "")
	return t
}

func (r *ltmRun) charts() error {
	rep := r.env.Report
	var load, all Series
	load.Name, all.Name = "strata RSS", "strata RSS"
	r.rss.mu.Lock()
	for _, x := range r.rss.samples {
		if x.phase == "load" {
			load.X, load.Y = append(load.X, x.loadedGB), append(load.Y, float64(x.rss)/(1<<20))
		}
		all.X, all.Y = append(all.X, x.at.Seconds()), append(all.Y, float64(x.rss)/(1<<20))
	}
	r.rss.mu.Unlock()
	if err := rep.LineChart("rss-load", "Server RSS vs data loaded", "GB loaded (keys + values)", "RSS MB", false, load); err != nil {
		return err
	}
	if err := rep.LineChart("rss-time", "Server RSS over the whole run (load, settle, reads)", "seconds", "RSS MB", false, all); err != nil {
		return err
	}
	// Single-key GETs and range reads get a chart each: an MGET of 100 keys
	// takes a hundred times a GET, and would flatten the GET bars to nothing.
	if err := r.latencyChart("latency-get", "GET latency by phase", true); err != nil {
		return err
	}
	return r.latencyChart("latency-range", "Range read latency (MGET of 100 keys, SCAN COUNT 1000)", false)
}

// latencyChart draws p50 and p99 per command of the GET phases (gets) or
// of the others.
func (r *ltmRun) latencyChart(slug, title string, gets bool) error {
	p50 := Series{Name: "p50"}
	p99 := Series{Name: "p99"}
	for _, p := range r.phases {
		if strings.HasPrefix(p.name, "GET ") != gets {
			continue
		}
		f := strings.Fields(p.name)
		label := fmt.Sprintf("%s %s ×%d", f[0], f[1], p.conns)
		if p.peer {
			label += " redis"
		}
		p50.Labels, p50.Y = append(p50.Labels, label), append(p50.Y, msf(p.lat.Quantile(0.5)))
		p99.Labels, p99.Y = append(p99.Labels, label), append(p99.Y, msf(p.lat.Quantile(0.99)))
	}
	return r.env.Report.BarChart(slug, title+" (per command)", "ms", p50, p99)
}
