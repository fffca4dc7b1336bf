package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

func init() {
	register(experiment{
		name:  "engine",
		about: "the storage engine against Pebble on the same disk (scripts/bench.sh)",
		run:   runEngine,
	})
}

// runEngine runs scripts/bench.sh, the Go benchmarks of the bench package
// (strata's lsm and Pebble, both durable, on the same disk), and puts the
// table it prints in the report.
func runEngine(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("engine", flag.ContinueOnError)
	mode := fs.String("mode", "default", "scripts/bench.sh mode: quick, default or official (-short: quick)")
	filter := fs.String("filter", ".", "only benchmarks matching this regexp")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if env.Short && !flagSet(fs, "mode") {
		*mode = "quick"
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "bench.sh"), *mode, *filter)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, env.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scripts/bench.sh %s: %w", *mode, err)
	}
	env.Report.Text("scripts/bench.sh %s: Strata's engine (lsm over the durable local-disk bucket) against Pebble "+
		"(fsynced WAL) on the same disk; ratio = strata/pebble.\n\n```\n%s```", *mode, strings.TrimLeft(out.String(), "\n"))
	return nil
}

// moduleRoot is the main module's directory (the bench module replaces it
// with ../).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/stratakv/strata").Output()
	if err != nil {
		return "", fmt.Errorf("finding the strata module: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
