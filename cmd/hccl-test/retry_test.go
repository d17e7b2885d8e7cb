package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestParseHCCLRetry reads HCCL's two variables with HCCL's ranges and
// defaults.
func TestParseHCCLRetry(t *testing.T) {
	tests := []struct {
		enable, params string
		want           hcclRetry // source not compared
		err            string
	}{
		{"", "MaxCnt:9", hcclRetry{max: 1, hold: 5 * time.Second, interval: time.Second}, ""},
		{"L0:0, L1:0, L2:0", "", hcclRetry{max: 1, hold: 5 * time.Second, interval: time.Second}, ""},
		{"L0:0,L1:1,L2:0", "", hcclRetry{enabled: true, max: 1, hold: 5 * time.Second, interval: time.Second}, ""},
		{"l2:1", "MaxCnt:3, HoldTime:0, IntervalTime:250", hcclRetry{enabled: true, max: 3, interval: 250 * time.Millisecond}, ""},
		{"L1:2", "", hcclRetry{}, "HCCL_OP_RETRY_ENABLE"},
		{"L3:1", "", hcclRetry{}, "HCCL_OP_RETRY_ENABLE"},
		{"on", "", hcclRetry{}, "HCCL_OP_RETRY_ENABLE"},
		{"L1:1", "MaxCnt:0", hcclRetry{}, "MaxCnt 0 out of range"},
		{"L1:1", "MaxCnt:11", hcclRetry{}, "MaxCnt 11 out of range"},
		{"L1:1", "HoldTime:60001", hcclRetry{}, "HoldTime 60001 out of range"},
		{"L1:1", "Retries:2", hcclRetry{}, `unknown parameter "Retries"`},
		{"L1:1", "MaxCnt=2", hcclRetry{}, "not NAME:number"},
	}
	for _, tt := range tests {
		t.Run(tt.enable+"/"+tt.params, func(t *testing.T) {
			env := map[string]string{"HCCL_OP_RETRY_ENABLE": tt.enable, "HCCL_OP_RETRY_PARAMS": tt.params}
			got, err := parseHCCLRetry(func(k string) string { return env[k] })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			got.source = ""
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestRetryFlags: the environment gives the defaults, the flags win.
func TestRetryFlags(t *testing.T) {
	t.Setenv("HCCL_OP_RETRY_ENABLE", "L0:0,L1:1,L2:0")
	t.Setenv("HCCL_OP_RETRY_PARAMS", "MaxCnt:4,HoldTime:20,IntervalTime:30")
	p, _, err := parseFlags(nil, io.Discard)
	if err != nil || p.Retry != 4 || p.RetryHold != 20*time.Millisecond || p.RetryInterval != 30*time.Millisecond ||
		!strings.Contains(p.RetrySource, "HCCL_OP_RETRY_ENABLE") {
		t.Fatalf("from the environment: %d %v %v %q, %v", p.Retry, p.RetryHold, p.RetryInterval, p.RetrySource, err)
	}
	p, _, err = parseFlags([]string{"--retry", "0", "--retry-hold", "1s"}, io.Discard)
	if err != nil || p.Retry != 0 || p.RetryHold != time.Second || p.RetryInterval != 30*time.Millisecond {
		t.Fatalf("flags over the environment: %d %v %v, %v", p.Retry, p.RetryHold, p.RetryInterval, err)
	}
}

// TestRetryRun runs the binary with a dropped send and re-execution on:
// exit 0, every row correct, the retry column and the footer's total.
func TestRetryRun(t *testing.T) {
	bin := buildBinary(t)
	for _, backend := range []string{"shm", "tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, bin, "--backend", backend, "-p", "3", "--op", "allreduce,allgather",
				"-b", "1K", "-e", "64K", "-f", "8", "-n", "5", "-w", "1", "--link-bw", "10GB/s", "--placement", "both",
				"--algo", "ring", "--inject", "fail=op:30@rank=1; fail=op:60@rank=2", "--retry", "2")
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			if !strings.Contains(stdout, "# retry: an op that fails on a transport error is run again up to 2 times") ||
				!strings.Contains(stdout, "  retry") || !strings.Contains(stdout, "# re-runs: 2 ops failed") ||
				!strings.Contains(stdout, "# wrong elements: 0 OK") {
				t.Errorf("output lacks the retry header, column, total or a clean check:\n%s", stdout)
			}
		})
	}
}
