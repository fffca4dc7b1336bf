// Command stratabench runs Strata's system benchmarks over RESP against real
// processes (strata server, and redis-server as the peer measured in the
// same run), prints each result as a table, and draws it as a PNG chart:
//
//	go run ./cmd/stratabench list                # the experiments
//	go run ./cmd/stratabench <experiment> [flags] # one of them
//	go run ./cmd/stratabench all [-short]         # every one, in order
//
// Run it from the bench module (cd bench). Tables and charts go to -out
// (default results/), one <experiment>.md with the tables and one PNG per
// chart; README.md's results section is copied from there. -short runs a
// small version of each experiment (a smoke test; its numbers mean little).
//
// The machine is shared and noisy: every experiment that compares reports
// ratios against a peer measured in the same run, never absolute numbers
// alone.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// An experiment produces tables (and charts of them).
type experiment struct {
	name  string
	about string
	run   func(ctx context.Context, env *Env, args []string) error
}

var experiments []experiment

// register adds an experiment; each experiment's file calls it from init.
// They run in registration order under "all"; file names decide it.
func register(e experiment) {
	if slices.ContainsFunc(experiments, func(x experiment) bool { return x.name == e.name }) {
		panic("stratabench: experiment registered twice: " + e.name)
	}
	experiments = append(experiments, e)
}

// Env is what every experiment gets: where to write, how big to run, and
// the log.
type Env struct {
	Out   string // directory for <experiment>.md and charts
	Short bool
	Log   io.Writer
	// Report collects the current experiment's tables and charts.
	Report *Report
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 0 || args[0] == "list" || args[0] == "-h" || args[0] == "--help" {
		usage(os.Stdout)
		return 2 * btoi(len(args) == 0)
	}
	name := args[0]
	fs := flag.NewFlagSet("stratabench", flag.ContinueOnError)
	out := fs.String("out", "results", "directory for the tables (<experiment>.md) and charts (PNG)")
	short := fs.Bool("short", false, "a small, quick version of each experiment")
	common, rest := splitCommonFlags(args[1:])
	if err := fs.Parse(common); err != nil {
		return 2
	}
	var todo []experiment
	for _, e := range experiments {
		if name == "all" || e.name == name {
			todo = append(todo, e)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(os.Stderr, "stratabench: no experiment %q\n", name)
		usage(os.Stderr)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "stratabench:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer cleanupAtExit()
	failed := 0
	for _, e := range todo {
		env := &Env{Out: *out, Short: *short, Log: os.Stderr, Report: newReport(e.name, e.about)}
		fmt.Fprintf(os.Stderr, "==> %s: %s\n", e.name, e.about)
		err := e.run(ctx, env, rest)
		dir := *out
		if err != nil {
			// A failed run (a bad flag, -h, an interrupted experiment) prints
			// what it has but leaves the last good results in place.
			dir = ""
		}
		if werr := env.Report.Write(dir, os.Stdout); werr != nil && err == nil {
			err = werr
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "stratabench %s: %v\n", e.name, err)
			failed++
		}
	}
	return btoi(failed > 0)
}

// splitCommonFlags separates -out and -short, wherever they are, from the
// experiment's own flags, which keep their order: "latency -delays 20ms
// -out d" and "latency -out d -delays 20ms" mean the same. Arguments after
// "--" all go to the experiment.
func splitCommonFlags(args []string) (common, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return common, append(rest, args[i+1:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			rest = append(rest, a)
		case name == "short":
			common = append(common, a)
		case name == "out":
			common = append(common, a)
			if !hasValue && i+1 < len(args) {
				i++
				common = append(common, args[i])
			}
		default:
			rest = append(rest, a)
		}
	}
	return common, rest
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: stratabench <experiment|all> [-out DIR] [-short] [experiment flags]")
	for _, e := range experiments {
		fmt.Fprintf(w, "  %-10s %s\n", e.name, e.about)
	}
}
