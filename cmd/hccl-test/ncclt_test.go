package main

import (
	"strings"
	"testing"
)

// TestNCCLTestsRunControls runs what nccl-tests 2.19 users type:
// NCCL_TESTS_MIN_BW far above and far below any machine's bandwidth (the
// footer's nccl-tests line says FAILED or OK, and FAILED exits 3 with one
// line on stderr), NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY (each alltoallv
// row followed by its per-rank block) and -T 0 (no timeout, printed as
// such).
func TestNCCLTestsRunControls(t *testing.T) {
	bin := buildBinary(t)
	base := []string{"-p", "2", "-b", "1K", "-e", "4K", "-n", "2", "-w", "1", "--link-bw", "10GB/s"}
	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		stdout []string
		stderr string // "" for none
	}{
		{"min bw above the average", []string{"NCCL_TESTS_MIN_BW=1000000"}, nil, exitWrong,
			[]string{"# Avg bus bandwidth    : ", " FAILED\n"}, "is below 0.9 x NCCL_TESTS_MIN_BW=1e+06: FAILED"},
		{"min bw below the average", []string{"NCCL_TESTS_MIN_BW=0.000001"}, nil, exitOK,
			[]string{"# Avg bus bandwidth    : ", " OK\n"}, ""},
		{"min bw unset", nil, nil, exitOK, []string{"# Avg bus bandwidth    : ", "# avg bus bandwidth (rows shown): "}, ""},
		{"alltoallv summary", []string{"NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1"}, []string{"--op", "alltoallv"}, exitOK,
			[]string{"\n# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=generated nranks=2 total_bytes=", "\n#   rank=0 send_bytes=", "\n#   rank=1 send_bytes="}, ""},
		{"no timeout", nil, []string{"-T", "0"}, exitOK, []string{"timeout none (-T 0: "}, ""},
		{"split mod", []string{"NCCL_TESTS_SPLIT=MOD 2"}, []string{"-p", "4"}, exitOK, []string{"# groups tp=2 dp=2 ", "\n     dp/2 "}, ""},
		{"split mask", []string{"NCCL_TESTS_SPLIT_MASK=0x0"}, nil, exitOK, []string{"\n        1024 "}, ""},
		{"split div 1", []string{"NCCL_TESTS_SPLIT=DIV 1"}, nil, exitOK, []string{"\n     tp/1 "}, ""},
		{"--group wins", []string{"NCCL_TESTS_SPLIT=MOD 2"}, []string{"--groups", "tp=2", "--group", "tp"}, exitOK, []string{"# groups tp=2 ", "\n     tp/2 "}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runBinaryEnv(t, bin, tc.env, append(append([]string{}, base...), tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s\nstdout: %s", code, tc.code, stderr, stdout)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			switch lines := strings.Count(stderr, "\n"); {
			case tc.stderr == "" && stderr != "":
				t.Errorf("unexpected stderr %q", stderr)
			case tc.stderr != "" && (lines != 1 || !strings.Contains(stderr, tc.stderr)):
				t.Errorf("stderr %q, want one line with %q", stderr, tc.stderr)
			}
		})
	}
}
