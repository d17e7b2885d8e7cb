package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// badInputTable is the chapter that holds the table of refused input,
// relative to the repository's root.
const badInputTable = "docs/bad-input.md"

// TestBadInputTable runs every row of the table of refused input in
// docs/bad-input.md, and of the smaller tables of the other chapters
// (docs/sim.md has one), and checks that the command exits 2 before
// starting anything, with exactly the one line the table gives (pieces
// separated by … must appear in order; they stand for machine-dependent
// text). Commands run in the repository's root, as a reader would run
// them, so that they can name its files; a subcommand's line starts with
// its name ("hccl-test compare: "). README, the front page, holds no row:
// a row added there is reported, so that it moves to the table's home.
func TestBadInputTable(t *testing.T) {
	bin := buildBinary(t)
	table, err := os.ReadFile(filepath.Join("../..", badInputTable))
	if err != nil {
		t.Fatal(err)
	}
	rows := badInputRows(t, string(table))
	if len(rows) < 20 {
		t.Fatalf("found %d rows in %s's bad-input table, want at least 20", len(rows), badInputTable)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if in := badInputRows(t, string(readme)); len(in) > 0 {
		t.Errorf("README has %d rows of refused input (the first: %q); they belong in %s", len(in), in[0].command, badInputTable)
	}
	chapters, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chapters {
		if filepath.Base(ch) == filepath.Base(badInputTable) {
			continue
		}
		text, err := os.ReadFile(ch)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, badInputRows(t, string(text))...)
	}
	for _, row := range rows {
		t.Run(row.command, func(t *testing.T) {
			env, args := splitCommand(t, row.command)
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), env...)
			cmd.Dir = "../.."
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != exitUsage {
				t.Fatalf("got %v, want exit %d; stderr %q", err, exitUsage, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout not empty: %q", stdout.String())
			}
			line := stderr.String()
			prefix := programName + ": "
			if len(args) > 0 && slices.Contains([]string{"compare", "plot", "convert", "scenario", "algorithms", "links", "fit", "predict"}, args[0]) {
				prefix = programName + " " + args[0] + ": "
			}
			if strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, prefix) {
				t.Fatalf("stderr %q: want one line starting %q", line, prefix)
			}
			rest := line
			for _, piece := range strings.Split(row.message, "…") {
				i := strings.Index(rest, strings.TrimSpace(piece))
				if i < 0 {
					t.Fatalf("stderr %q lacks %q (the table says %q)", line, strings.TrimSpace(piece), row.message)
				}
				rest = rest[i+len(strings.TrimSpace(piece)):]
			}
		})
	}
}

type badInputRow struct{ command, message string }

// badInputRows reads the tables of text whose rows start with
// "| `hccl-test" or "| `VAR=".
func badInputRows(t *testing.T, text string) []badInputRow {
	t.Helper()
	var rows []badInputRow
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") || !strings.Contains(line, "hccl-test") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
		if len(cells) != 4 {
			continue
		}
		cmd := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if !strings.Contains(cmd, "hccl-test") || strings.Contains(cmd, "mpirun") || strings.HasPrefix(cmd, "go ") {
			continue
		}
		msg := strings.TrimSpace(strings.ReplaceAll(cells[2], "\x00", "|"))
		rows = append(rows, badInputRow{command: strings.ReplaceAll(cmd, "\x00", "|"), message: msg})
	}
	return rows
}

// splitCommand splits "VAR=value hccl-test ARGS" into environment and
// arguments; single quotes group.
func splitCommand(t *testing.T, s string) (env, args []string) {
	t.Helper()
	var words []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				words = append(words, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		words = append(words, cur.String())
	}
	for i, w := range words {
		if w == "hccl-test" {
			return words[:i], words[i+1:]
		}
	}
	t.Fatalf("no hccl-test in %q", s)
	return nil, nil
}
