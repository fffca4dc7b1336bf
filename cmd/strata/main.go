// Command strata is the one Strata binary: the server, the standalone
// compactor and the inspection tools are its subcommands. It only parses
// arguments and wires packages together; no logic lives here.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/stratakv/strata/resp"
)

type command struct {
	name    string
	summary string
	run     func(args []string) int // nil: not implemented yet, see pending
	pending string                  // the issue that brings it
}

// commands is filled in init, because help refers to the table itself.
var commands []command

func init() {
	commands = []command{
		{name: "server", summary: "serve RESP (Redis protocol) over a bucket", run: runServer},
		{name: "compactor", summary: "run the compactor and garbage collector against a bucket", run: runCompactor},
		{name: "inspect", summary: "print manifests, WAL objects and SSTs of a bucket; verify checksums", run: runInspect},
		{name: "version", summary: "print the version", run: runVersion},
		{name: "help", summary: "list the subcommands", run: func([]string) int { usage(os.Stdout); return 0 }},
	}
}

func main() {
	resp.Version = version()
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	os.Exit(dispatch(os.Args[1], os.Args[2:]))
}

func dispatch(name string, args []string) int {
	if name == "-h" || name == "--help" {
		name = "help"
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		if c.run == nil {
			fmt.Fprintf(os.Stderr, "strata %s: not implemented yet (%s)\n", name, c.pending)
			return 2
		}
		return c.run(args)
	}
	fmt.Fprintf(os.Stderr, "strata: unknown command %q\n", name)
	usage(os.Stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: strata <command> [arguments]\n\ncommands:")
	for _, c := range commands {
		note := ""
		if c.run == nil {
			note = " (not implemented yet)"
		}
		fmt.Fprintf(w, "  %-10s %s%s\n", c.name, c.summary, note)
	}
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func runVersion([]string) int {
	fmt.Println("strata", version())
	return 0
}
