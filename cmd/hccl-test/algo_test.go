package main

import (
	"strings"
	"testing"
)

// TestAlgoChoice covers how the algorithm is chosen: HCCL_ALGO as a
// default, --algo over it, native refused without MPI, and the model's
// prediction shown with --stats.
func TestAlgoChoice(t *testing.T) {
	bin := buildBinary(t)
	small := []string{"-p", "3", "-b", "1K", "-e", "4K", "-f", "4", "-n", "2", "-w", "1", "--link-bw", "10GB/s"}

	t.Run("HCCL_ALGO sets the default", func(t *testing.T) {
		t.Setenv("HCCL_ALGO", "level0:NA;level1:ring")
		stdout, stderr, code := runBinary(t, bin, append([]string{"--op", "allreduce,broadcast"}, small...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if rows := algoColumn(stdout); len(rows) != 4 || strings.Count(strings.Join(rows, " "), "ring") != 4 {
			t.Errorf("algorithms %q, want ring on all 4 rows:\n%s", rows, stdout)
		}
	})
	t.Run("--algo wins over HCCL_ALGO", func(t *testing.T) {
		t.Setenv("HCCL_ALGO", "level0:NA;level1:ring")
		stdout, stderr, code := runBinary(t, bin, append([]string{"--op", "allreduce", "--algo", "rd"}, small...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if rows := algoColumn(stdout); len(rows) != 2 || rows[0] != "rd" || rows[1] != "rd" {
			t.Errorf("algorithms %q, want rd", rows)
		}
	})
	for _, tc := range []struct{ env, want string }{
		{"level0:NA;level1:NHR", "NHR"},
		{"allreduce=level1:pairwise", "pairwise"},
	} {
		t.Run("bad HCCL_ALGO "+tc.env, func(t *testing.T) {
			t.Setenv("HCCL_ALGO", tc.env)
			stdout, stderr, code := runBinary(t, bin, small...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
				!strings.Contains(stderr, "HCCL_ALGO") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line naming HCCL_ALGO and %q", code, stderr, tc.want)
			}
		})
	}
	t.Run("native needs mpi", func(t *testing.T) {
		_, stderr, code := runBinary(t, bin, append([]string{"--algo", "native"}, small...)...)
		if code != 2 || !strings.Contains(stderr, "--backend mpi") {
			t.Errorf("exit %d, stderr %q: want exit 2 naming --backend mpi", code, stderr)
		}
	})
	t.Run("--stats shows the model", func(t *testing.T) {
		stdout, stderr, code := runBinary(t, bin, append([]string{"--op", "allreduce", "--stats"}, small...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "# model alpha") || !strings.Contains(stdout, "model") {
			t.Errorf("no model line:\n%s", stdout)
		}
		for _, l := range dataRows(stdout) {
			if f := strings.Fields(l); f[len(f)-1] == "-" {
				t.Errorf("row without a prediction: %q", l)
			}
		}
	})
}

// dataRows returns the table's data lines.
func dataRows(table string) []string {
	var out []string
	for _, l := range strings.Split(table, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// algoColumn returns the algo field of every data row.
func algoColumn(table string) []string {
	var out []string
	for _, l := range dataRows(table) {
		if f := strings.Fields(l); len(f) > 5 {
			out = append(out, f[5])
		}
	}
	return out
}
