// Command chaos runs Strata's hardening campaigns against real strata
// processes: each one drives a bounded workload while it breaks something
// (kills the server, fails object-store calls, starts a second writer, sends
// bad input), checks what clients were told against what the store holds,
// and prints one summary line:
//
//	crash: 50 passed, 0 failed; cycles=50 writes_checked=123456 lost=0
//
// Usage:
//
//	go run ./integration/chaos <campaign> [flags]   # one campaign
//	go run ./integration/chaos list                 # the campaigns
//
// Each campaign's defaults are the full run the issue asks for; -short gives
// the version CI runs (the package's tests run those). The exit status is 1
// when any check failed.
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

// A campaign is one hardening program.
type campaign struct {
	name  string
	about string
	// run parses the campaign's flags from args and runs it, printing
	// progress to log. It returns an error only when the campaign could not
	// run at all (a missing binary, a port it could not bind); failed checks
	// go in the Result.
	run func(ctx context.Context, args []string, log io.Writer) (Result, error)
}

var campaigns = map[string]campaign{}

// register adds a campaign; each campaign's file calls it from init.
func register(c campaign) {
	if _, dup := campaigns[c.name]; dup {
		panic("chaos: campaign registered twice: " + c.name)
	}
	campaigns[c.name] = c
}

// Result is what a campaign found: checks passed and failed, the failures'
// descriptions, and figures (name=value pairs, in the order added).
type Result struct {
	Passed, Failed int
	Failures       []string
	figures        []string
}

// Check records one check: passed when ok, else a failure described by
// format and args.
func (r *Result) Check(ok bool, format string, args ...any) {
	if ok {
		r.Passed++
		return
	}
	r.Failed++
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// Figure records a figure for the summary line.
func (r *Result) Figure(name string, value any) {
	r.figures = append(r.figures, fmt.Sprintf("%s=%v", name, value))
}

// Summary is the campaign's one summary line.
func (r *Result) Summary(name string) string {
	s := fmt.Sprintf("%s: %d passed, %d failed", name, r.Passed, r.Failed)
	if len(r.figures) > 0 {
		s += "; " + strings.Join(r.figures, " ")
	}
	return s
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "list" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := campaigns[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "chaos: no campaign %q\n", args[0])
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer removeBuild()
	res, err := c.run(ctx, args[1:], stderr)
	if err != nil {
		fmt.Fprintf(stderr, "chaos %s: %v\n", c.name, err)
		return 1
	}
	for _, f := range res.Failures {
		fmt.Fprintf(stderr, "FAIL: %s\n", f)
	}
	fmt.Fprintln(stdout, res.Summary(c.name))
	if res.Failed > 0 {
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: chaos <campaign> [flags]   (-short for the CI version, -h for a campaign's flags)")
	names := make([]string, 0, len(campaigns))
	for n := range campaigns {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, campaigns[n].about)
	}
}

// newFlags returns a flag set for a campaign, with the -short flag every
// campaign takes, errors returned rather than exiting.
func newFlags(name string, log io.Writer) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("chaos "+name, flag.ContinueOnError)
	fs.SetOutput(log)
	short := fs.Bool("short", false, "the short version CI runs")
	return fs, short
}
