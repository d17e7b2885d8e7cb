package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"
)

// helpWidth is the widest line --help prints.
const helpWidth = 100

// helpSection is one part of --help: a heading and its flags in order, each
// written "name PLACEHOLDER" (the placeholder is what the flag takes, as
// the left column shows it; none for a switch; one that starts with "="
// is joined to the name, as --sim-data=false).
type helpSection struct {
	title string
	flags []string
}

// helpSections lays out the main command's --help, grouped as a user
// thinks of the flags. A flag defined in parseFlags but missing here is
// still printed, under "Other", and TestHelpLayout fails until it has a
// section.
var helpSections = []helpSection{
	{"Sweep", []string{"op LIST", "datatype LIST", "redop LIST", "minbytes SIZE", "maxbytes SIZE",
		"stepfactor X", "stepbytes SIZE", "iters N", "benchtime DURATION", "warmup-iters N", "check N", "root RANK",
		"placement out|in|both", "cache warm|cold", "runs N", "run-cycles N"}},
	{"Measurement (nccl-tests' -a -m -z -C -u)", []string{"average 0-3", "agg-iters N", "blocking 0-3",
		"report-cputime 0|1", "unalign N"}},
	{"Backend and launch", []string{"backend NAME", "ranks N", "nthreads N", "ngpus N", "timeout DURATION",
		"connect-timeout DURATION", "master HOST:PORT", "bind ADDR|IFACE", "topology SPEC",
		"link-bw RATE|PRESET|auto"}},
	{"Algorithms", []string{"algo NAME[,NAME...]"}},
	{"Faults", []string{"inject SPEC", "seed N", "retry N", "retry-hold DURATION",
		"retry-interval DURATION"}},
	{"Domains", []string{"groups SPEC", "group LIST", "fusion N[,N...]", "overlap DURATION|auto"}},
	{"Outputs", []string{"stats", "csv FILE", "json FILE", "bench FILE", "dry-run", "version", "help",
		"report-timestamps 0|1", "memory 0|1", "per-iter-timing 0|1", "output-file FILE"}},
	{"nccl-tests' flags with no meaning here (refused, docs/nccl-tests.md)", []string{"cudagraph N", "local-register N",
		"device-implementation N", "device-cta-count N", "stream-null N", "cta-policy N", "per-iter-skip N"}},
	{"hccl_test's flags for Ascend NPUs (refused, docs/nccl-tests.md)", []string{"nslb N", "onlydevicetime 0|1",
		"zero-copy 0|1", "symmetric-memory 0|1", "accelerator NAME"}},
	{"Sim (--backend sim)", []string{"sim-alpha DURATION|SPEC", "sim-reduce RATE", "sim-copy RATE",
		"sim-gap DURATION", "sim-pull", "sim-data=false"}},
}

// helpOther is the heading of flags that no section names.
const helpOther = "Other"

// helpEntry is one flag as --help shows it.
type helpEntry struct {
	left  string // "  -d, --datatype LIST"
	flag  *pflag.Flag
	title string // the section's heading, on the section's first entry only
}

// writeFlagHelp writes the flags of fs in sections (nil: one list, in the
// order fs defines them), each flag once, with its usage wrapped to
// helpWidth columns and its default, if not zero, at the end.
func writeFlagHelp(w io.Writer, fs *pflag.FlagSet, sections []helpSection) {
	var entries []helpEntry
	placed := map[string]bool{}
	for _, s := range sections {
		title := s.title
		for _, spec := range s.flags {
			name, placeholder, _ := strings.Cut(spec, " ")
			name, eq, hasEq := strings.Cut(name, "=")
			if hasEq {
				placeholder = "=" + eq
			}
			f := fs.Lookup(name)
			if f == nil || placed[name] {
				continue
			}
			placed[name] = true
			entries = append(entries, helpEntry{left: flagLeft(f, placeholder), flag: f, title: title})
			title = ""
		}
	}
	title := helpOther
	if sections == nil {
		title = ""
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if placed[f.Name] {
			return
		}
		entries = append(entries, helpEntry{left: flagLeft(f, ""), flag: f, title: title})
		title = ""
	})
	col := 0
	for _, e := range entries {
		col = max(col, cols(e.left)+2)
	}
	col = min(col, 34)
	for i, e := range entries {
		if e.title != "" {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s:\n", e.title)
		}
		lines := wrapUsage(flagUsage(e.flag), helpWidth-col)
		if cols(e.left)+2 > col {
			fmt.Fprintln(w, e.left)
		} else {
			fmt.Fprintf(w, "%-*s%s\n", col, e.left, lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%*s%s\n", col, "", l)
		}
	}
}

// flagLeft is the left column of f: its short form, its name and what it
// takes. Without a placeholder, a flag that is not a switch shows its type.
func flagLeft(f *pflag.Flag, placeholder string) string {
	s := "      --"
	if f.Shorthand != "" {
		s = "  -" + f.Shorthand + ", --"
	}
	s += f.Name
	if placeholder == "" && f.Value.Type() != "bool" {
		placeholder, _ = pflag.UnquoteUsage(f)
	}
	switch {
	case placeholder == "":
	case strings.HasPrefix(placeholder, "="):
		s += placeholder
	default:
		s += " " + placeholder
	}
	return s
}

// flagUsage is f's usage with its default, as the user would type it, when
// the default is not zero (nothing, 0, false).
func flagUsage(f *pflag.Flag) string {
	_, usage := pflag.UnquoteUsage(f)
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
		return usage
	}
	return usage + " (default " + f.DefValue + ")"
}

// wrapUsage breaks text into lines of at most width columns at spaces. A
// line the usage itself ends (a table such as --inject's grammar) is kept
// as it is when it fits.
func wrapUsage(text string, width int) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if cols(line) <= width {
			out = append(out, line)
			continue
		}
		cur := ""
		for _, word := range strings.Fields(line) {
			switch {
			case cur == "":
				cur = word
			case cols(cur)+1+cols(word) <= width:
				cur += " " + word
			default:
				out = append(out, cur)
				cur = word
			}
		}
		out = append(out, cur)
	}
	return out
}

// cols is the number of columns s takes: one per rune.
func cols(s string) int { return utf8.RuneCountInString(s) }
