package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestThreadFlags: nccl-tests' -t and -g give the ranks per process: the
// world in one process (shm, sim), or each tcp process's share of it.
func TestThreadFlags(t *testing.T) {
	tests := []struct {
		args       string
		ranks, per int
	}{
		{"", 8, 0},
		{"-g 1", 1, 0},
		{"-t 2 -g 3", 6, 0},
		{"--nthreads 2 --ngpus 2 -p 4", 4, 0},
		{"-p 1 -t 1 -g 1 --backend shm", 1, 0},
		{"--backend sim -t 4", 4, 0},
		{"--backend tcp -g 1", 1, 1},
		{"--backend tcp -t 2", 2, 2},
		{"--backend tcp -p 3 -t 2 -g 2", 12, 4},
		{"--backend tcp -p 3", 3, 0},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			p, _, err := parseFlags(strings.Fields(tc.args), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if p.Ranks != tc.ranks || p.PerProcess != tc.per {
				t.Errorf("ranks %d, per process %d; want %d, %d", p.Ranks, p.PerProcess, tc.ranks, tc.per)
			}
		})
	}
}

// TestThreadsOverTCP: -t x -g ranks in every rank process, started by
// hccl-test itself (-p) and by the real launchers, every row correct.
func TestThreadsOverTCP(t *testing.T) {
	bin := buildBinary(t)
	dtypes := []string{"fp32"}
	a := args(small, []string{"--op", "allreduce,alltoall,broadcast", "-t", "2", "-g", "1"})
	t.Run("hccl-test -p 2", func(t *testing.T) {
		p := start(t, "hccl-test -p 2 -t 2", cleanEnv(), bin, args(a, []string{"-p", "2"})...)
		if code := p.wait(t, 90*time.Second); code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", code, p.errOut.String())
		}
		checkTable(t, p.out.String(), 4, 3*7, dtypes)
		noLeftovers(t, bin)
	})
	for _, mc := range mpiCommands {
		t.Run(mc.name, func(t *testing.T) {
			path := findLauncher(t, mc.binary, mc.pkg, mc.marks...)
			c := mc.cmd(path, 2, bin, a)
			p := start(t, mc.binary, cleanEnv("TMPDIR="+privateTemp(t)), c[0], c[1:]...)
			if code := p.wait(t, 120*time.Second); code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", code, p.errOut.String())
			}
			checkTable(t, p.out.String(), 4, 3*7, dtypes)
			noLeftovers(t, bin)
		})
	}
}

// TestThreadsMemory: -t x -g ranks in a tcp process cost one process, not
// one each, in the memory estimate.
func TestThreadsMemory(t *testing.T) {
	procBytes := func(args string) int64 {
		t.Helper()
		p, _, err := parseFlags(strings.Fields(args), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range p.Memory().Parts {
			if part.Name == "processes and rows" {
				return part.Bytes
			}
		}
		t.Fatalf("%s: no processes part in %+v", args, p.Memory())
		return 0
	}
	base := "--backend tcp -b 1K -e 1K --link-bw 1GB/s "
	eight, two := procBytes(base+"-p 8"), procBytes(base+"-p 2 -t 4")
	if two*3 > eight {
		t.Errorf("2 processes of 4 ranks estimated at %d bytes, 8 processes at %d: want about a quarter", two, eight)
	}
}
