package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/bench"
)

// TestSimBinary runs the simulated sweep of the README on two servers and
// checks that every row is correct and the header says the times are
// virtual.
func TestSimBinary(t *testing.T) {
	bin := buildBinary(t)
	stdout, stderr, code := runBinary(t, bin, "--backend", "sim", "-p", "8", "--topology", "servers=2,per-server=4",
		"--link-bw", "intra=hccs,inter=roce", "-b", "1K", "-e", "64M", "-f", "64")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	for _, s := range []string{
		"# backend sim  ranks 8",
		"# simulated: 2 servers x 4 ranks, intra 56 GB/s + 2 us, inter 25 GB/s + 10 us, gap 1 us, reduce 10 GB/s, copy 15 GB/s; times are virtual\n",
		"# wrong elements: 0 OK",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	rows := tableRows(t, stdout)
	for _, m := range rows {
		if m[11] != "0" {
			t.Errorf("row %q has wrong elements", m[0])
		}
	}
	if len(rows) != 3 {
		t.Errorf("got %d rows, want 3 (1K, 64K, 4M)", len(rows))
	}
}

// TestSimFlags: the sim's own flags (backends/sim reads them; its
// TestDefineFlags checks their values) reach the plan's World.Own on sim,
// a refusal of their values is the command's, and --link-bw auto on sim
// is the simulated link (backends.Modeled).
func TestSimFlags(t *testing.T) {
	tests := []struct {
		args    []string
		link    float64
		own     bool
		payload bool
		err     string
	}{
		{args: []string{"--backend", "sim"}, link: 25, own: true, payload: true},
		{args: []string{"--backend", "sim", "--sim-alpha", "1.5us", "--sim-reduce", "40GB/s", "--link-bw", "hccs"}, link: 56, own: true, payload: true},
		{args: []string{"--backend", "sim", "--topology", "servers=2", "--sim-alpha", "intra=1us,inter=5us"}, link: 25, own: true, payload: true},
		{args: []string{"--backend", "sim", "--sim-data=false"}, link: 25, own: true},
		{args: []string{"--backend", "shm"}, link: 0, payload: true},
		{args: []string{"--backend", "sim", "--sim-alpha", "fast"}, err: `--sim-alpha "fast": "fast" is not a duration`},
		{args: []string{"--backend", "sim", "--sim-gap", "0"}, err: `--sim-gap "0": 0s: want a positive duration`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			p, _, err := parseFlags(tc.args, io.Discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.LinkGBps != tc.link || (p.Own != nil) != tc.own || p.NoPayload == tc.payload {
				t.Errorf("got link %v, own %#v, no payload %v; want link %v, own %v, payload %v", p.LinkGBps, p.Own, p.NoPayload, tc.link, tc.own, tc.payload)
			}
			if tc.link > 0 && p.LinkSource == bench.LinkAuto {
				t.Errorf("--link-bw auto left to measure on sim")
			}
		})
	}
}

// TestSimNoPayloadBinary: --sim-data=false runs 1024 ranks of 1 GiB
// allreduce, 2 TiB of buffers with payload, which the memory guard would
// refuse with them, with an unchecked row marked as simulated; off sim
// the flag is refused. How fast is BenchmarkSimScale16k's to say: the
// wall time here is logged, not bounded (a loaded machine took 2m13s for
// what takes 16 s alone).
func TestSimNoPayloadBinary(t *testing.T) {
	bin := buildBinary(t)
	start := time.Now()
	stdout, stderr, code := runBinary(t, bin, "--backend", "sim", "--sim-data=false", "-p", "1024", "--topology", "per-server=8",
		"--link-bw", "intra=hccs,inter=roce", "-b", "1G", "-e", "1G", "-n", "2", "-w", "0")
	t.Logf("1024 ranks x 1 GiB without payload: %v wall", time.Since(start))
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	for _, s := range []string{
		"# backend sim  ranks 1024",
		"check off",
		"times are virtual; no payload: results are not checked\n",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	rows := tableRows(t, stdout)
	for _, m := range rows {
		if m[11] != "N/A" {
			t.Errorf("row %q is checked", m[0])
		}
	}
	if len(rows) != 1 {
		t.Errorf("got %d rows, want 1", len(rows))
	}

	_, stderr, code = runBinary(t, bin, "--sim-data=false", "-p", "2")
	if code != 2 || !strings.Contains(stderr, "--sim-data=false: only --backend sim") {
		t.Errorf("--sim-data=false on shm: exit %d, stderr %q; want exit 2 and a refusal", code, stderr)
	}
}
