//go:build !mpi

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackendMPIUnbuilt: --backend mpi in a build without -tags mpi says
// how to get it and where the docs are, in one line, rather than "unknown
// backend"; a name that is no backend at all is still unknown.
func TestBackendMPIUnbuilt(t *testing.T) {
	for _, c := range []struct {
		args       []string
		want, lack string
	}{
		{[]string{"--backend", "mpi", "-p", "2"}, "needs a build with -tags mpi … docs/mpi.md", "unknown backend"},
		{[]string{"--backend", "mpi", "--algo", "native"}, "needs a build with -tags mpi … docs/mpi.md", "unknown backend"},
		{[]string{"scenario", "--backend", "mpi", "x.yaml"}, "needs a build with -tags mpi … docs/mpi.md", "unknown backend"},
		{[]string{"--backend", "nccl"}, `unknown backend "nccl"`, "tags"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		line := stderr.String()
		if code != exitUsage || stdout.Len() != 0 || strings.Count(line, "\n") != 1 || strings.Contains(line, c.lack) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line without %q", c.args, code, line, c.lack)
			continue
		}
		rest := line
		for _, piece := range strings.Split(c.want, " … ") {
			i := strings.Index(rest, piece)
			if i < 0 {
				t.Errorf("%v: stderr %q lacks %q", c.args, line, piece)
				break
			}
			rest = rest[i+len(piece):]
		}
	}
}

// TestPlotSaysWhereItWrote: plot with no -o writes hccl-test.png in the
// working directory and says so on stderr, in one line naming the file;
// with -o it says nothing.
func TestPlotSaysWhereItWrote(t *testing.T) {
	in, err := filepath.Abs("../../results/testdata/compare/concatenated.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"plot", in}, &stdout, &stderr); code != exitOK {
		t.Fatalf("plot: exit %d: %s", code, stderr.String())
	}
	want := filepath.Join(dir, "hccl-test.png")
	if _, err := os.Stat(want); err != nil {
		t.Fatal(err)
	}
	if line := stderr.String(); strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "hccl-test plot: wrote "+want+" ") {
		t.Errorf("stderr %q: want one line saying it wrote %s", line, want)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
	stderr.Reset()
	if code := run([]string{"plot", "-o", "named.svg", in}, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
		t.Errorf("plot -o named.svg: exit %d, stderr %q; want 0 and nothing", code, stderr.String())
	}
}

// TestReadmeLaunchLines: every mpirun or srun line of the README's
// examples runs as written: the program by its path (./hccl-test, where
// go build leaves it, not on PATH), and the README says how mpirun runs as
// root (Open MPI refuses root without --allow-run-as-root).
func TestReadmeLaunchLines(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	inBlock, lines := false, 0
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
			continue
		}
		f := strings.Fields(l)
		if !inBlock || len(f) == 0 || (f[0] != "mpirun" && f[0] != "srun" && f[0] != "mpiexec") {
			continue
		}
		lines++
		for _, w := range f {
			if strings.HasSuffix(w, "hccl-test") && !strings.HasPrefix(w, "./") && !strings.HasPrefix(w, "/") {
				t.Errorf("README: %q runs %s from PATH, where go build does not put it: write ./hccl-test", l, w)
			}
		}
	}
	if lines == 0 {
		t.Fatal("README has no mpirun or srun example")
	}
	if !strings.Contains(string(text), "mpirun --allow-run-as-root --oversubscribe -np 4 ./hccl-test") {
		t.Error("README does not show the mpirun line that runs as root in a container")
	}
}
