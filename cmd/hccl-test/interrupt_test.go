package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterrupt sends SIGINT to a sweep once it has printed two rows: the
// rows measured so far stay in the table and in the CSV file, the footer
// says the run was interrupted, the exit code is 130, and no rank process
// is left behind.
func TestInterrupt(t *testing.T) {
	bin := buildBinary(t)
	for _, backend := range []string{"shm", "tcp"} {
		t.Run(backend, func(t *testing.T) {
			csvPath := filepath.Join(t.TempDir(), "rows.csv")
			cmd := exec.Command(bin, "--backend", backend, "-p", "3", "-b", "1K", "-e", "256M", "-f", "2",
				"-n", "200", "-w", "1", "--link-bw", "1GB/s", "--csv", csvPath)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			defer func() {
				_ = cmd.Process.Kill()
				<-done
			}()

			var table strings.Builder
			rows := 0
			sc := bufio.NewScanner(stdout)
			read := make(chan struct{})
			go func() {
				defer close(read)
				for sc.Scan() {
					line := sc.Text()
					table.WriteString(line + "\n")
					if !strings.HasPrefix(line, "#") && strings.TrimSpace(line) != "" {
						rows++
						if rows == 2 {
							_ = cmd.Process.Signal(syscall.SIGINT)
						}
					}
				}
			}()
			go func() { <-read; _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("not finished 2 minutes after starting; stdout so far:\n%s", table.String())
			}

			if code := cmd.ProcessState.ExitCode(); code != exitSignal {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitSignal, stderr.String())
			}
			out := table.String()
			if rows < 2 || !strings.Contains(out, "# stopped early after") || !strings.Contains(out, "interrupted") {
				t.Errorf("want at least 2 rows and a footer saying the run was interrupted:\n%s", out)
			}
			if got := strings.Count(stderr.String(), "interrupted after"); got != 1 {
				t.Errorf("stderr says %d times that the run was interrupted, want once (rank 0):\n%s", got, stderr.String())
			}
			if recs := readCSVFile(t, csvPath); len(recs)-1 != rows {
				t.Errorf("CSV holds %d rows, the table %d", len(recs)-1, rows)
			}
			if left := processesOf(t, bin); len(left) > 0 {
				t.Errorf("rank processes left behind: %v", left)
			}
		})
	}
}

// processesOf returns the pids of running processes started from the
// executable bin, waiting up to 5 seconds for them to go.
func processesOf(t *testing.T, bin string) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var pids []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == bin {
				pids = append(pids, e.Name())
			}
		}
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(50 * time.Millisecond)
	}
}
