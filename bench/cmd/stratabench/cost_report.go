package main

import (
	"fmt"
	"slices"
	"time"
)

// S3 Standard list prices (us-east-1) per request, and the month they are
// counted over.
const (
	s3PutPrice      = 0.005 / 1000  // PUT, COPY, POST, LIST
	s3GetPrice      = 0.0004 / 1000 // GET, HEAD and the rest; DELETE is free
	secondsPerMonth = 30 * 24 * 3600
	costWorkload    = 10_000 // writes/s and reads/s of the priced workload
)

// requestClasses groups objstore operations the way S3 bills them.
func (r costRun) requestClasses() (put, list, get, del float64) {
	return r.perMillion("objstore_upload"), r.perMillion("objstore_iter"),
		r.perMillion("objstore_get") + r.perMillion("objstore_get_range") + r.perMillion("objstore_exists") + r.perMillion("objstore_attributes"),
		r.perMillion("objstore_delete")
}

func reportCost(env *Env, cfg *costConfig, writes, reads []costRun) error {
	t := &Table{Title: "Object-store requests per 1M durable writes at steady load",
		Columns: []string{"setting", "target w/s", "served w/s", "p50 ms", "p99 ms", "WAL PUTs/s", "batches per PUT",
			"PUTs per 1M", "of which WAL", "GET+HEAD per 1M", "LIST per 1M", "DELETE per 1M"}}
	for _, r := range writes {
		put, list, get, del := r.requestClasses()
		t.AddRow(r.setting, r.target, r.res.Throughput(), ms(r.res.Latency.Quantile(0.5)), ms(r.res.Latency.Quantile(0.99)),
			r.perSecond("wal_objects"), r.before.Delta(r.after, "wal_batches")/max(r.before.Delta(r.after, "wal_objects"), 1),
			put, r.perMillion("wal_objects"), get, list, del)
	}
	t.Note = fmt.Sprintf("Open-loop SETs of %d B (appendfsync always) at a fixed rate spread over %d pipelining connections, "+
		"%v per row, uniform over 10M keys, one server per flush interval; every bucket call delayed %v (STRATA_FAULTS). "+
		"Latency from each command's scheduled send time. Requests from INFO objstore_* deltas: WAL, memtable flushes, "+
		"manifests, and the in-process compactor's and GC's requests. GET+HEAD includes the engine's and compactor's "+
		"manifest probes (a few per second whatever the load).", cfg.setValue, cfg.writeConns, cfg.duration, cfg.storeLatency)
	env.Report.Table(t)
	t = &Table{Title: "Object-store requests per 1M point reads at steady load",
		Columns: []string{"setting", "target r/s", "served r/s", "p50 ms", "p99 ms", "GET+HEAD per 1M", "PUTs per 1M",
			"LIST per 1M", "block cache hit %"}}
	for _, r := range reads {
		put, list, get, _ := r.requestClasses()
		hits, misses := r.before.Delta(r.after, "block_cache_hits"), r.before.Delta(r.after, "block_cache_misses")
		t.AddRow(r.setting, r.target, r.res.Throughput(), ms(r.res.Latency.Quantile(0.5)), ms(r.res.Latency.Quantile(0.99)),
			get, put, list, fmt.Sprintf("%.1f", 100*hits/max(hits+misses, 1)))
	}
	t.Note = fmt.Sprintf("Open-loop uniform random GETs over %d keys × %d B (loaded, saved to SSTs and compacted beforehand), "+
		"%d connections, --block-cache %s, every bucket call delayed %v; one server per setting, its rates in order "+
		"(so the disk cache fills during the first). In-process compaction and GC on.",
		cfg.keys, cfg.readValue, cfg.readConns, cfg.blockCache, cfg.storeLatency)
	env.Report.Table(t)
	reportMonthlyCost(env, cfg, writes, reads)
	return walPutsChart(env, cfg, writes)
}

// highestSustained is the run of setting with the highest target the
// server sustained, or, if none, the one that served the most.
func highestSustained(runs []costRun, setting string) costRun {
	var best costRun
	for _, r := range runs {
		if r.setting != setting {
			continue
		}
		if best.res == nil || r.sustained() && (!best.sustained() || r.target > best.target) ||
			!best.sustained() && r.res.Throughput() > best.res.Throughput() {
			best = r
		}
	}
	return best
}

// settings lists the runs' settings in order of first appearance.
func settings(runs []costRun) []string {
	var out []string
	for _, r := range runs {
		if !slices.Contains(out, r.setting) {
			out = append(out, r.setting)
		}
	}
	return out
}

func reportMonthlyCost(env *Env, cfg *costConfig, writes, reads []costRun) {
	t := &Table{Title: fmt.Sprintf("Monthly S3 request cost of %d writes/s + %d reads/s", costWorkload, costWorkload),
		Columns: []string{"writes", "reads", "measured at w/s, r/s", "WAL PUTs/s", "other PUTs/s", "LIST/s", "GET+HEAD/s",
			"PUT+LIST $/month", "GET $/month", "total $/month", "WAL PUT share"}}
	for _, ws := range settings(writes) {
		w := highestSustained(writes, ws)
		for _, rs := range settings(reads) {
			r := highestSustained(reads, rs)
			wput, wlist, wget, _ := w.requestClasses()
			rput, rlist, rget, _ := r.requestClasses()
			// WAL PUTs are bounded by the flush rate, not the write rate:
			// kept at the measured rate. Everything else scales per op.
			wal := w.perSecond("wal_objects")
			other := (wput-w.perMillion("wal_objects"))*costWorkload/1e6 + rput*costWorkload/1e6
			list := (wlist + rlist) * costWorkload / 1e6
			get := (wget + rget) * costWorkload / 1e6
			putCost := (wal + other + list) * secondsPerMonth * s3PutPrice
			getCost := get * secondsPerMonth * s3GetPrice
			t.AddRow(ws, rs, fmt.Sprintf("%.0f, %.0f", w.res.Throughput(), r.res.Throughput()), wal, other, list, get,
				dollars(putCost), dollars(getCost), dollars(putCost+getCost),
				fmt.Sprintf("%.0f%%", 100*wal*secondsPerMonth*s3PutPrice/(putCost+getCost)))
		}
	}
	t.Note = fmt.Sprintf("S3 Standard list prices: PUT, COPY, POST, LIST $0.005 per 1,000; GET, HEAD and others $0.0004 "+
		"per 1,000; DELETE free; a 30-day month. Extrapolated from the runs at the highest rate the server sustained "+
		"(served ≥ 95%% of target; else the most it served), shown in the third column: WAL PUTs/s are kept at the "+
		"measured rate, since the flush interval and the PUT time bound them, not the write rate (the first table shows "+
		"them flat across rates); every other request is scaled per write and per read to %d/s, which overstates the "+
		"time-driven ones (manifest probes, GC listings) when the measurement ran slower. Storage ($/GB-month) and "+
		"transfer are not counted. For scale: one PUT per write would cost $%.0f a month in PUTs alone.",
		costWorkload, float64(costWorkload)*secondsPerMonth*s3PutPrice)
	env.Report.Table(t)
}

func dollars(v float64) string { return fmt.Sprintf("$%.0f", v) }

// walPutsChart draws WAL PUTs/s against the write rate served, one line
// per flush interval: flat lines are the point.
func walPutsChart(env *Env, cfg *costConfig, writes []costRun) error {
	var series []Series
	for _, s := range settings(writes) {
		line := Series{Name: s}
		for _, r := range writes {
			if r.setting == s {
				line.X = append(line.X, r.res.Throughput())
				line.Y = append(line.Y, r.perSecond("wal_objects"))
			}
		}
		series = append(series, line)
	}
	title := fmt.Sprintf("WAL PUTs/s vs durable writes/s (store latency %v)", cfg.storeLatency.Round(time.Millisecond))
	return env.Report.LineChart("wal-puts", title, "writes/s served", "WAL PUTs/s", false, series...)
}
