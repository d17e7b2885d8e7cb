package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/hccl-test/hccl-test/internal/flagdoc"
)

// Widths of a help screen.
const (
	// helpWidth is the width of every help screen when stdout is not a
	// terminal (a pipe, a file, a test).
	helpWidth = 80
	// minHelpWidth and maxHelpWidth bound the terminal's width that help
	// wraps to: a narrower screen is read with its lines wrapped by the
	// terminal; a wider one would make lines too long to read.
	minHelpWidth, maxHelpWidth = 40, 120
	// maxFlagColumn is where the text of a flag starts at most: a longer
	// left column puts the text on the lines below it.
	maxFlagColumn = 34
)

// screenWidth is the width help screens wrap to: the terminal's when
// stdout is one (main sets it, terminalWidth), else helpWidth.
var screenWidth = helpWidth

// terminalWidth is the width help wraps to on f: its columns, within
// minHelpWidth and maxHelpWidth, when f is a terminal; helpWidth when it is
// not (or says no width).
func terminalWidth(f *os.File) int {
	if f == nil || !term.IsTerminal(int(f.Fd())) {
		return helpWidth
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return helpWidth
	}
	return min(max(w, minHelpWidth), maxHelpWidth)
}

// flagSection is one section of a command's flags: its heading in --help
// and its own flag set, which defines the section's flags, each with its
// help, in the order --help lists them. A command's flag set joins its
// sections (joinSections), and its --help prints them section by section
// (writeFlagHelp): the flags a section defines are the flags --help shows
// under it.
type flagSection struct {
	title string
	*pflag.FlagSet
}

// newFlagSection starts a section of flags headed title in --help.
func newFlagSection(title string) *flagSection {
	fs := pflag.NewFlagSet(title, pflag.ContinueOnError)
	fs.SortFlags = false
	return &flagSection{title: title, FlagSet: fs}
}

// joinSections makes the flag set of the command name from its sections:
// each flag is the section's own (a value set by parsing one is set in the
// other), in the sections' order, `_` and `-` alike in long names.
func joinSections(name string, sections ...*flagSection) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	fs.SortFlags = false
	for _, s := range sections {
		fs.AddFlagSet(s.FlagSet)
	}
	return fs
}

// arg says what the flag name of fs takes, as --help's left column shows it
// after the name (flagdoc.Arg, which a backend's own flags use too): "LIST",
// "SIZE", "0|1"; one that starts with "=" is joined to the name, as
// --sim-data=false. A flag without one shows its type (none for a switch).
func arg(fs *pflag.FlagSet, name, what string) { flagdoc.Arg(fs, name, what) }

// helpOther is the heading of flags that no section defines.
const helpOther = "Other"

// helpRow is one row of a two-column list in help: a flag, a variable, a
// command.
type helpRow struct {
	title string // the heading of a list that starts at this row, "" for none
	left  string // "  -d, --datatype LIST"
	text  string // what it is; wrapped to the screen
}

// writeFlagHelp writes the flags of fs in sections (none: one list, in the
// order fs defines them), each flag once, with its usage wrapped to width
// and its default, if not zero, at the end. A flag of fs that no section
// defines comes last, under "Other".
func writeFlagHelp(w io.Writer, width int, fs *pflag.FlagSet, sections ...*flagSection) {
	var rows []helpRow
	placed := map[string]bool{}
	for _, s := range sections {
		title := s.title
		s.VisitAll(func(f *pflag.Flag) {
			placed[f.Name] = true
			rows = append(rows, helpRow{title: title, left: flagLeft(f), text: flagUsage(f)})
			title = ""
		})
	}
	title := helpOther
	if sections == nil {
		title = ""
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if placed[f.Name] {
			return
		}
		rows = append(rows, helpRow{title: title, left: flagLeft(f), text: flagUsage(f)})
		title = ""
	})
	writeRows(w, width, maxFlagColumn, rows)
}

// writeRows writes rows as two columns within width: the left column as
// wide as its widest entry, up to maxCol and half the width (a longer
// entry puts its text on the lines below it), the text wrapped beside it.
func writeRows(w io.Writer, width, maxCol int, rows []helpRow) {
	col := 0
	for _, r := range rows {
		col = max(col, cols(r.left)+2)
	}
	col = min(col, maxCol, width/2)
	for i, r := range rows {
		if r.title != "" {
			if i > 0 {
				fmt.Fprintln(w)
			}
			for _, l := range wrapUsage(r.title+":", width) {
				fmt.Fprintln(w, l)
			}
		}
		lines := wrapUsage(r.text, width-col)
		if cols(r.left)+2 > col || len(lines) == 0 {
			fmt.Fprintln(w, r.left)
		} else {
			fmt.Fprintf(w, "%-*s%s\n", col, r.left, lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%*s%s\n", col, "", l)
		}
	}
}

// flagLeft is the left column of f: its short form, its name and what it
// takes (arg). Without arg, a flag that is not a switch shows its type.
func flagLeft(f *pflag.Flag) string {
	s := "      --"
	if f.Shorthand != "" {
		s = "  -" + f.Shorthand + ", --"
	}
	s += f.Name
	var what string
	if a, ok := flagdoc.ArgOf(f); ok {
		what = a
	} else if f.Value.Type() != "bool" {
		what, _ = pflag.UnquoteUsage(f)
	}
	switch {
	case what == "":
	case strings.HasPrefix(what, "="):
		s += what
	default:
		s += " " + what
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
// as it is when it fits. A word longer than width is a line of its own.
func wrapUsage(text string, width int) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if cols(line) <= width {
			out = append(out, line)
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		cur := ""
		for _, word := range strings.Fields(line) {
			switch {
			case cur == "":
				cur = indent + word
			case cols(cur)+1+cols(word) <= width:
				cur += " " + word
			default:
				out = append(out, cur)
				cur = indent + word
			}
		}
		out = append(out, cur)
	}
	return out
}

// cols is the number of columns s takes: one per rune.
func cols(s string) int { return utf8.RuneCountInString(s) }

// writeText writes text, the prose of a help screen, wrapped to width.
// Its paragraphs are separated by blank lines. A line that starts at the
// margin and ends with ":" is a heading, kept. In a paragraph of indented
// lines, a line "  NAME  what it is" (two spaces inside) starts a row of a
// two-column list, which lines indented further continue, written as
// writeRows writes them with a left column of at most maxCol; other
// indented lines (examples, commands) are kept as they are. Every other
// paragraph is joined and wrapped.
func writeText(w io.Writer, width, maxCol int, text string) {
	for i, para := range strings.Split(text, "\n\n") {
		if i > 0 {
			fmt.Fprintln(w)
		}
		lines := strings.Split(strings.Trim(para, "\n"), "\n")
		for len(lines) > 0 && !strings.HasPrefix(lines[0], " ") && strings.HasSuffix(lines[0], ":") {
			for _, l := range wrapUsage(lines[0], width) {
				fmt.Fprintln(w, l)
			}
			lines = lines[1:]
		}
		switch {
		case len(lines) == 0:
		case !strings.HasPrefix(lines[0], " "):
			for _, l := range wrapUsage(strings.Join(lines, " "), width) {
				fmt.Fprintln(w, l)
			}
		case isListRow(lines[0]):
			var rows []helpRow
			for _, l := range lines {
				if isListRow(l) {
					left, text, _ := strings.Cut(strings.TrimPrefix(l, "  "), "  ")
					rows = append(rows, helpRow{left: "  " + left, text: strings.TrimSpace(text)})
				} else if len(rows) > 0 {
					rows[len(rows)-1].text += " " + strings.TrimSpace(l)
				}
			}
			writeRows(w, width, maxCol, rows)
		default:
			for _, l := range lines {
				for _, part := range wrapExample(l, width) {
					fmt.Fprintln(w, part)
				}
			}
		}
	}
}

// wrapExample breaks an indented line of help that is not prose, an
// example, to width: a comment ("  # ...") as prose, each line a comment;
// a command at spaces, each line but the last ending with " \" as a shell
// continues a command, and the lines after the first indented further.
func wrapExample(l string, width int) []string {
	if cols(l) <= width {
		return []string{l}
	}
	indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
	if text, ok := strings.CutPrefix(l, indent+"# "); ok {
		lines := wrapUsage(text, width-cols(indent)-2)
		for i := range lines {
			lines[i] = indent + "# " + lines[i]
		}
		return lines
	}
	var out []string
	cur := ""
	for _, word := range strings.Fields(l) {
		switch {
		case cur == "":
			cur = indent + word
		case cols(cur)+1+cols(word)+2 <= width:
			cur += " " + word
		default:
			out = append(out, cur+" \\")
			cur = indent + "    " + word
		}
	}
	return append(out, cur)
}

// isListRow reports whether l starts a row of a two-column list in writeText:
// indented by two spaces, with two spaces after its first column.
func isListRow(l string) bool {
	rest, ok := strings.CutPrefix(l, "  ")
	if !ok || strings.HasPrefix(rest, " ") {
		return false
	}
	_, text, ok := strings.Cut(rest, "  ")
	return ok && strings.TrimSpace(text) != ""
}

// writeUsage writes the usage line of a help screen, and a blank line,
// wrapped to screenWidth.
func writeUsage(w io.Writer, usage string) {
	for i, l := range wrapUsage("Usage: "+usage, screenWidth-7) {
		if i > 0 {
			l = "       " + l
		}
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
}

// writeCommandHelp writes the --help screen of the command name (its entry
// in commands gives the usage line): about, its flags fs under "Flags:"
// (none: no such heading), then after; about and after as writeText takes
// them, everything within screenWidth.
func writeCommandHelp(w io.Writer, name, about string, fs *pflag.FlagSet, after string) {
	writeUsage(w, usageOf(name))
	writeText(w, screenWidth, maxFlagColumn, about)
	if fs != nil {
		fmt.Fprint(w, "\nFlags:\n")
		writeFlagHelp(w, screenWidth, fs)
	}
	if after != "" {
		fmt.Fprintln(w)
		writeText(w, screenWidth, maxFlagColumn, after)
	}
}
