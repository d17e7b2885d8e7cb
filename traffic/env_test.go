package traffic

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestReadEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vars    map[string]string
		spec    string
		scale   float64
		set     bool
		summary bool
	}{
		{"nothing set: nccl-tests' generated pattern", nil, "spread:spread=1,bytes=0", 1, false, false},
		{"spread", map[string]string{EnvSpread: "0.0"}, "spread:spread=0,bytes=0", 1, true, false},
		{"file", map[string]string{EnvMatrixFile: "m.txt"}, "file:m.txt", 1, true, false},
		{"file and scale", map[string]string{EnvMatrixFile: "m.txt", EnvMatrixScale: "2.5"}, "file:m.txt", 2.5, true, false},
		{"summary on", map[string]string{EnvPrintSummary: "1"}, "spread:spread=1,bytes=0", 1, false, true},
		{"summary 2 is on, as atoi != 0", map[string]string{EnvPrintSummary: "2"}, "spread:spread=1,bytes=0", 1, false, true},
		{"summary off", map[string]string{EnvPrintSummary: "0"}, "spread:spread=1,bytes=0", 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := ReadEnv(lookup(tc.vars))
			if err != nil {
				t.Fatal(err)
			}
			if env.Spec.String() != tc.spec || env.Spec.Scale != tc.scale || env.Set != tc.set || env.PrintSummary != tc.summary {
				t.Errorf("got %s scale %v set %v summary %v", env.Spec, env.Spec.Scale, env.Set, env.PrintSummary)
			}
		})
	}
}

func TestReadEnvRefuses(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{EnvMatrixFile: ""}, `NCCL_TESTS_ALLTOALLV_MATRIX_FILE="": names no file`},
		{map[string]string{EnvMatrixScale: "2"}, `NCCL_TESTS_ALLTOALLV_MATRIX_SCALE="2": scales a matrix file, but NCCL_TESTS_ALLTOALLV_MATRIX_FILE is not set`},
		{map[string]string{EnvMatrixFile: "m", EnvMatrixScale: "-1"}, "want a number from 0 to 1e+12"},
		{map[string]string{EnvMatrixFile: "m", EnvMatrixScale: "NaN"}, "not a finite number"},
		{map[string]string{EnvMatrixFile: "m", EnvMatrixScale: "inf"}, "not a finite number"},
		{map[string]string{EnvMatrixFile: "m", EnvMatrixScale: "2x"}, "not a number"},
		{map[string]string{EnvMatrixFile: "m", EnvMatrixScale: ""}, "not a number"},
		{map[string]string{EnvSpread: "1.5"}, `NCCL_TESTS_ALLTOALLV_SPREAD="1.5": want a number from 0 to 1`},
		{map[string]string{EnvSpread: "-0.5"}, "want a number from 0 to 1"},
		{map[string]string{EnvSpread: "nan"}, "not a finite number"},
		{map[string]string{EnvSpread: "half"}, "not a number"},
		{map[string]string{EnvSpread: "0.5", EnvMatrixFile: "m"}, "which NCCL_TESTS_ALLTOALLV_MATRIX_FILE replaces"},
		{map[string]string{EnvPrintSummary: "yes"}, `NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY="yes": not a whole number`},
		{map[string]string{EnvPrintSummary: ""}, "not a whole number"},
		{map[string]string{EnvPrintSummary: "1e99"}, "not a whole number"},
		{map[string]string{EnvPrintSummary: "99999999999999999999"}, "want 0 or 1"},
	} {
		_, err := ReadEnv(lookup(tc.vars))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", tc.vars, err, tc.want)
		}
	}
}

func TestWriteRankSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.txt")
	writeMatrix(t, path, rows(3, 0, 1000, 0, 0, 0, 2000, 500, 0, 0))
	env, err := ReadEnv(lookup(map[string]string{EnvMatrixFile: path, EnvMatrixScale: "1"}))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(env.Spec, 2)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := g.Matrix(0, 0)
	var buf bytes.Buffer
	if err := g.WriteRankSummary(&buf, m, 0, 1e-6); err != nil {
		t.Fatal(err)
	}
	// Rank 0 sends 1000 to rank 1 (aligned to 992) in 1 us: 0.99 GB/s,
	// half of it on the bus at 2 ranks.
	want := "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=matrix nranks=2 matrix_dim=3 scale=1.000 time_usec=1.00\n" +
		"#   rank=0 send_bytes=992 recv_bytes=0 alg_bw=0.99 bus_bw=0.50\n" +
		"#   rank=1 send_bytes=0 recv_bytes=992 alg_bw=0.99 bus_bw=0.50\n"
	if buf.String() != want {
		t.Errorf("got\n%swant\n%s", buf.String(), want)
	}
	g = gen(t, "spread", 4)
	m, _ = g.Matrix(0, 400)
	buf.Reset()
	if err := g.WriteRankSummary(&buf, m, 400, 2e-6); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); first != "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=generated nranks=4 total_bytes=384 spread=1.000 time_usec=2.00" {
		t.Errorf("spread header %q", first)
	}
}
