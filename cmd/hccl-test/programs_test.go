package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgramOf: the names of nccl-tests' and hccl_test's programs choose
// the collective and the tool; a name in their form that neither has, or
// whose collective is not implemented, is refused; any other name is
// hccl-test.
func TestProgramOf(t *testing.T) {
	for _, c := range []struct {
		argv0, tool, op, err string
	}{
		{"/usr/bin/all_reduce_perf", "nccl-tests", "allreduce", ""},
		{"./build/all_gather_perf", "nccl-tests", "allgather", ""},
		{"reduce_scatter_perf", "nccl-tests", "reducescatter", ""},
		{"sendrecv_perf", "nccl-tests", "sendrecv", ""},
		{"gather_perf", "nccl-tests", "gather", ""},
		{"bin/all_reduce_test", "hccl_test", "allreduce", ""},
		{"alltoall_test", "hccl_test", "alltoall", ""},
		{"scatter_test", "hccl_test", "scatter", ""},
		{"hypercube_perf", "", "", "hypercube_perf: nccl-tests' hypercube is not implemented here yet"},
		{"alltoallv_perf", "nccl-tests", "alltoallv", ""},
		{"alltoallvc_test", "hccl_test", "alltoallv", ""},
		{"reduce_scatterv_test", "hccl_test", "reducescatterv", ""},
		{"all_gatherv_test", "hccl_test", "allgatherv", ""},
		{"sendrecv_test", "", "", "sendrecv_test: not a program of hccl_test"}, // hccl_test has no sendrecv
		{"foo_perf", "", "", "foo_perf: not a program of nccl-tests"},
		{"hccl-test", "", "", ""},
		{"/opt/x/hccl-test", "", "", ""},
		{"my-bench", "", "", ""},
		{"hccl-test.test", "", "", ""},
		{"_perf", "", "", ""}, // no program part: not in the form
		{"perf", "", "", ""},
	} {
		pr, err := programOf(c.argv0)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one with %q", c.argv0, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.argv0, err)
		case c.tool == "" && pr != nil:
			t.Errorf("%s: program %+v, want hccl-test itself", c.argv0, pr)
		case c.tool != "" && (pr == nil || pr.tool != c.tool || pr.op != c.op || pr.defaults["op"] != c.op):
			t.Errorf("%s: program %+v, want %s's %s", c.argv0, pr, c.tool, c.op)
		}
	}
}

// TestProgramLinks makes the links in a temporary directory with
// `hccl-test links DIR`, runs the programs through them and through a hard
// link, and checks each tool's defaults in the header; a name of the
// tools' form that is unknown is refused, any other runs as hccl-test.
func TestProgramLinks(t *testing.T) {
	bin := buildBinary(t)
	exe, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stdout, stderr, code := runBinary(t, bin, "links", dir)
	if code != 0 {
		t.Fatalf("links: exit %d: %s", code, stderr)
	}
	names := programNames("")
	if got := strings.Count(stdout, "\n"); got != len(names) || len(names) != 21 {
		t.Fatalf("links printed %d lines for %d names, want 21:\n%s", got, len(names), stdout)
	}
	for _, name := range names {
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil || target != exe {
			t.Fatalf("%s: link to %q, %v; want one to %s", name, target, err, exe)
		}
		if !strings.Contains(stdout, filepath.Join(dir, name)+" -> "+exe+"\n") {
			t.Errorf("links did not say it made %s:\n%s", name, stdout)
		}
	}
	// Its help names every program, within the help's width.
	help, _, code := runBinary(t, bin, "links", "--help")
	for _, name := range names {
		if code != 0 || !strings.Contains(help, " "+name) {
			t.Errorf("links --help (exit %d) lacks %s:\n%s", code, name, help)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if len(l) > helpWidth {
			t.Errorf("links --help: a line of %d columns: %q", len(l), l)
		}
	}
	// Again: every link is there already, and kept.
	if stdout, stderr, code := runBinary(t, bin, "links", dir); code != 0 || strings.Count(stdout, "(already there)") != len(names) {
		t.Errorf("links again: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	link := func(name string) string { return filepath.Join(dir, name) }
	hard := filepath.Join(t.TempDir(), "broadcast_test")
	if err := os.Link(bin, hard); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "my-bench")
	if err := os.Symlink(bin, other); err != nil {
		t.Fatal(err)
	}
	small := []string{"-b", "1K", "-e", "1K", "-n", "2", "--link-bw", "10GB/s"}
	for _, c := range []struct {
		name string
		prog string
		args []string
		want []string
	}{
		// nccl-tests: one rank per process, both placements, -a 1, -w 1, 32M.
		{"nccl defaults", link("all_reduce_perf"), []string{"--dry-run"},
			[]string{"ranks 1 ", "warmup 1 ", "(-a 1)", "ops: allreduce (2 rows)", "placements: 2", "32MiB (33554432..33554432 B"}},
		{"nccl additive step", link("all_reduce_perf"), []string{"--dry-run", "-b", "8", "-e", "3M"},
			[]string{"8B 1048584B 2097160B (8..3145728 B by step 1048576 B (3 sizes))"}},
		{"nccl -f wins", link("all_gather_perf"), []string{"--dry-run", "-b", "8", "-e", "64", "-f", "2"},
			[]string{"ops: allgather", "by factor 2 (4 sizes)"}},
		{"nccl -g", link("reduce_scatter_perf"), append([]string{"-g", "2"}, small...),
			[]string{"# backend shm  ranks 2 ", "placement both", "iters 2  warmup 1", "(-a 1)", "# op reducescatter", "out-of-place", "in-place"}},
		{"nccl flags win", link("all_reduce_perf"), append([]string{"-g", "2", "-w", "3", "-a", "3", "--placement", "in"}, small...),
			[]string{"ranks 2 ", "placement in ", "warmup 3", "(-a 3)"}},
		// hccl_test: 64M, -n 20, -w 10, out-of-place, -p the ranks.
		{"hccl defaults", link("all_gather_test"), []string{"--dry-run"},
			[]string{"ranks 8 ", "iters 20  warmup 10", "ops: allgather (1 row)", "placements: 1", "64MiB (67108864..67108864 B"}},
		{"hccl step", link("all_reduce_test"), []string{"--dry-run", "-b", "8K", "-e", "64M"},
			[]string{"by step 6710067 B (11 sizes)"}},
		{"hccl run", link("reduce_test"), append([]string{"-p", "2"}, small...),
			[]string{"ranks 2 ", "placement out ", "warmup 10", "# op reduce "}},
		{"hard link", hard, []string{"--dry-run", "-p", "2"}, []string{"ops: broadcast", "warmup 10"}},
		// Any other name is hccl-test, with its defaults.
		{"other name", other, []string{"--dry-run"}, []string{"ranks 8 ", "warmup 5 ", "(-a 3)", "ops: allreduce (1 row)", "32MiB"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, c.prog, c.args...)
			if code != 0 {
				t.Fatalf("%s %v: exit %d: %s", filepath.Base(c.prog), c.args, code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("%s %v: output lacks %q:\n%s", filepath.Base(c.prog), c.args, w, stdout)
				}
			}
		})
	}

	// Names in the tools' form that do not run here: one line, exit 2,
	// nothing started.
	for _, name := range []string{"foo_perf", "hypercube_perf", "gather_test"} {
		p := filepath.Join(t.TempDir(), name)
		if err := os.Symlink(bin, p); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runBinary(t, p, "-p", "2")
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, name+": ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", name, code, stdout, stderr)
		}
	}
}

// TestProgramOverTCP: the processes a program started over tcp run under
// its name, so they take the same defaults and the ranks agree.
func TestProgramOverTCP(t *testing.T) {
	bin := buildBinary(t)
	p := filepath.Join(t.TempDir(), "all_reduce_perf")
	if err := os.Symlink(bin, p); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBinary(t, p, "--backend", "tcp", "-p", "2", "-b", "1K", "-e", "1K", "-n", "2", "--link-bw", "10GB/s")
	if code != 0 || !strings.Contains(stdout, "warmup 1") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
}

// TestLinksRefuses: links refuses a DIR that is not a directory and a
// file of a program's name that is not a link to this program, making
// nothing.
func TestLinksRefuses(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "reduce_perf"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "scatter_test")
	if err := os.Symlink("/bin/true", elsewhere); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"links"}, "want one argument"},
		{[]string{"links", dir, dir}, "want one argument"},
		{[]string{"links", notDir}, "is not a directory"},
		{[]string{"links", filepath.Join(dir, "none")}, "no such file"},
		{[]string{"links", dir}, "reduce_perf exists and is not a link to"},
	} {
		stdout, stderr, code := runBinary(t, bin, c.args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.HasPrefix(stderr, "hccl-test links: ") || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, stdout, stderr, c.want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 3 {
		t.Errorf("links made files though it refused: %v %v", entries, err)
	}
	os.Remove(filepath.Join(dir, "reduce_perf"))
	if _, stderr, code := runBinary(t, bin, "links", dir); code != exitUsage || !strings.Contains(stderr, "scatter_test exists and is not a link to") {
		t.Errorf("a link to another program: exit %d: %s", code, stderr)
	}
}
