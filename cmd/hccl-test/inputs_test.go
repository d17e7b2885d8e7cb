package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inputHang is how long TestInputsFromPipes waits for a reader of an
// endless pipe to give up before it calls the read a hang.
const inputHang = 3 * time.Minute

// TestInputsFromPipes hands the subcommands named pipes fed more than
// their limit and a pipe on /dev/stdin that never ends: each is refused
// with exit 2 and one line naming the file and the limit, in seconds.
func TestInputsFromPipes(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		name    string
		args    func(fifo string) []string
		wantErr string
	}{
		{"scenario", func(f string) []string { return []string{"scenario", f} },
			": more than the limit of 1 MiB for this file"},
		{"plot", func(f string) []string { return []string{"plot", "-o", filepath.Join(filepath.Dir(f), "p.png"), f} },
			": more than the limit of 64 MiB for this file"},
		{"compare", func(f string) []string { return []string{"compare", f, f + ".other"} },
			": more than the limit of 64 MiB for this file"},
		{"compare, the third of three files", func(f string) []string {
			good := "../../results/testdata/compare/concatenated.csv"
			return []string{"compare", good, good, f}
		}, ": more than the limit of 64 MiB for this file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "in")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan struct{})
			go func() { // one line after another, without end
				defer close(done)
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				defer w.Close()
				line := []byte(strings.Repeat("# hostile input\n", 256))
				for {
					if _, err := w.Write(line); err != nil {
						return // the reader gave up
					}
				}
			}()
			// A reader without a limit would never end: the wait for it is
			// bounded by a hang guard, not by how fast this host reads
			// 64 MiB. The program runs as built, without the race
			// detector, which made the read take minutes on a loaded host.
			ctx, cancel := context.WithTimeout(context.Background(), inputHang)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args(fifo)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("still reading an endless pipe %v later", inputHang)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), fifo+tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and one line containing %q", code, stderr.String(), exitUsage, fifo+tc.wantErr)
			}
			select {
			case <-done:
			case <-time.After(inputHang):
				t.Error("the writer still blocks")
			}
		})
	}

	// /dev/stdin, a pipe from a writer without end.
	cmd := exec.Command(bin, "scenario", "/dev/stdin")
	cmd.Stdin = endless{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage ||
		!strings.Contains(stderr.String(), "/dev/stdin: more than the limit of 1 MiB") {
		t.Errorf("scenario /dev/stdin: %v, stderr %q", err, stderr.String())
	}
}

// endless is a reader of spaces without end.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestCompareGate checks that --threshold 0 gates (any significant change
// for the worse fails) instead of turning the gate off, that a change too
// few runs cannot decide is no pass, and the --min-busbw gate.
func TestCompareGate(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, ns float64) string {
		var b strings.Builder
		for i := range 10 {
			fmt.Fprintf(&b, "BenchmarkAllReduce/size=1KiB 20 %g ns/op\n", ns*(1+0.001*float64(i%3)))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, slow := write("old.txt", 1000), write("slow.txt", 1020)
	for _, tc := range []struct {
		threshold string
		want      int
	}{{"0", exitRegressed}, {"0%", exitRegressed}, {"1%", exitRegressed}, {"5%", exitOK}, {"0.5", exitOK}} {
		t.Run(tc.threshold, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"compare", "--threshold", tc.threshold, old, slow}, &stdout, &stderr); code != tc.want {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.want, stderr.String())
			}
		})
	}
	var stdout bytes.Buffer
	if code := run([]string{"compare", old, slow}, &stdout, io.Discard); code != exitOK {
		t.Errorf("without --threshold: exit %d, want %d", code, exitOK)
	}

	// Three measurements a side can never be significant at 0.05: an 8x
	// slowdown gets its own exit code and the runs that would decide it,
	// never a pass; six a side decide it: a regression.
	few := func(name string, ns float64, runs int) string {
		p := filepath.Join(dir, name)
		var b strings.Builder
		for i := range runs {
			fmt.Fprintf(&b, "BenchmarkAllReduce/size=1KiB 20 %g ns/op %g busbw-GB/s\n", ns*(1+1e-4*float64(i)), 8000/ns)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		args   []string
		want   int
		saying string
	}{
		{"8x slower, 3 runs", []string{"--threshold", "5%", few("o3.txt", 1000, 3), few("n3.txt", 8000, 3)}, exitUndecided,
			"1 row got worse by more than 5% with too few measurements to decide: first AllReduce/size=1KiB (sec/op +700.0%, 3 and 3 measurements); the U test can reach --alpha 0.05 with 4 runs a side (--runs 4)"},
		{"8x slower, 3 runs, alpha 0.001", []string{"--threshold", "5%", "--alpha", "0.001", few("o3.txt", 1000, 3), few("n3.txt", 8000, 3)}, exitUndecided,
			"with 7 runs a side (--runs 7)"},
		{"8x slower, 6 runs", []string{"--threshold", "5%", few("o6.txt", 1000, 6), few("n6.txt", 8000, 6)}, exitRegressed,
			"1 row got worse by more than 5%: first AllReduce/size=1KiB (sec/op +700.0%)"},
		{"unchanged, 3 runs", []string{"--threshold", "5%", few("o3.txt", 1000, 3), few("same3.txt", 1000, 3)}, exitOK, ""},
		{"busbw 8 above --min-busbw 7.5GB/s", []string{"--min-busbw", "7.5GB/s", few("o3.txt", 1000, 3), few("same3.txt", 1000, 3)}, exitOK, ""},
		{"busbw 1 above --min-busbw 0.5", []string{"--min-busbw", "0.5", few("o3.txt", 1000, 3), few("n3.txt", 8000, 3)}, exitOK, ""},
		{"busbw 1 below --min-busbw 1.5", []string{"--min-busbw", "1.5", few("o3.txt", 1000, 3), few("n3.txt", 8000, 3)}, exitRegressed,
			"1 of 1 rows of " + filepath.Join(dir, "n3.txt") + " have a bus bandwidth below --min-busbw 1.5: first AllReduce/size=1KiB (1 GB/s, median of 3)"},
		{"busbw below --min-busbw and 3 runs 8x slower: the regression's code", []string{"--threshold", "5%", "--min-busbw", "1.5",
			few("o3.txt", 1000, 3), few("n3.txt", 8000, 3)}, exitRegressed, "too few measurements to decide"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(append([]string{"compare"}, tc.args...), io.Discard, &stderr)
			if code != tc.want || !strings.Contains(stderr.String(), tc.saying) || tc.saying == "" && stderr.Len() > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d saying %q", code, stderr.String(), tc.want, tc.saying)
			}
		})
	}
}
