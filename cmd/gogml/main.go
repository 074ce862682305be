// Command gogml plans, runs and measures ggml-style graphs.
//
//	gogml plan GRAPH.json [-o PLAN.json] [-stats] [-svg MAP.svg] [-strategy ggml|optimized]
//	gogml run [flags]        run the small llama-style decoder (the main job)
//	gogml membench [flags]   measure every buffer type's memory
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"plan":       {"plan a graph file's memory as ggml would (plan/v1 JSON, stats, SVG map)", runPlan},
		"run":        {"run the small llama-style decoder on a backend", runRun},
		"membench":   {"measure allocation, fill, transfer and copy speed of every buffer type", runMembench},
		"gguf":       {"inspect a GGUF file (info) or write the built-in decoder as one (write-demo)", runGGUF},
		"rpc-server": {"serve gogml backends to ggml/llama.cpp over ggml's RPC protocol", runRPCServer},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gogml <command> [flags]\n\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'gogml <command> -h' for a command's flags.")
}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gogml: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		// A package's error that already starts with the command's name
		// ("membench: ...") is not prefixed twice.
		prefix := "gogml " + args[0] + ": "
		if strings.HasPrefix(err.Error(), args[0]+": ") {
			prefix = "gogml "
		}
		fmt.Fprintf(stderr, "%s%v\n", prefix, err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError marks a command line the command cannot parse (a bad flag, a
// missing or extra argument): gogml exits 2 for it, as for an unknown
// command, and 1 for errors while running.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErr wraps err as a usageError; flag.ErrHelp stays as it is.
func usageErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err}
}
