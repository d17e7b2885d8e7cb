package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hccl-test/hccl-test/internal/memguard"
)

// stoppedRE finds, in the one line a stopped run prints, after how many
// rows it stopped.
var stoppedRE = regexp.MustCompile(`^hccl-test: (?:interrupted|interrupted while writing the output|stopped) after (\d+) rows`)

// stopRun is one run of the binary for the stop tests: its stdout is the
// write end of a pipe whose read end the test holds.
type stopRun struct {
	cmd              *exec.Cmd
	stdout           *os.File // the read end
	stderr           bytes.Buffer
	csvPath, jsonOut string
}

// startStopRun starts bin with args plus a --csv and a --json file, stdout
// on a pipe of pipeSize bytes (0: the system's) that the caller reads.
func startStopRun(t *testing.T, bin string, pipeSize int, args ...string) *stopRun {
	t.Helper()
	dir := t.TempDir()
	r := &stopRun{csvPath: filepath.Join(dir, "rows.csv"), jsonOut: filepath.Join(dir, "rows.json")}
	rd, wr, err := os.Pipe()
	must(t, err)
	if pipeSize > 0 {
		if _, err := unix.FcntlInt(wr.Fd(), unix.F_SETPIPE_SZ, pipeSize); err != nil {
			t.Skip(err)
		}
	}
	r.cmd = exec.Command(bin, append(args, "--csv", r.csvPath, "--json", r.jsonOut)...)
	r.cmd.Stdout, r.cmd.Stderr = wr, &r.stderr
	must(t, r.cmd.Start())
	wr.Close()
	r.stdout = rd
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		rd.Close()
	})
	return r
}

// wait waits for the run to end, at most limit, and returns its exit code.
func (r *stopRun) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = r.cmd.Process.Kill()
		<-done
		t.Fatalf("not ended within %v; stderr: %s", limit, r.stderr.String())
	}
	return r.cmd.ProcessState.ExitCode()
}

// check checks what every stopped run promises: one line on stderr saying
// why, matching want, and every row it says were measured in the CSV and
// JSON files. It returns that count.
func (r *stopRun) check(t *testing.T, want string) int {
	t.Helper()
	line := r.stderr.String()
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, want) {
		t.Fatalf("stderr %q: want one line with %q", line, want)
	}
	m := stoppedRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("stderr %q does not say after how many rows the run stopped", line)
	}
	rows, _ := strconv.Atoi(m[1])
	if recs := readCSVFile(t, r.csvPath); len(recs)-1 != rows {
		t.Errorf("the CSV holds %d rows, the line says %d were measured", len(recs)-1, rows)
	}
	b, err := os.ReadFile(r.jsonOut)
	must(t, err)
	if n := strings.Count(string(b), "\n"); n != rows {
		t.Errorf("the JSON file holds %d lines, the line says %d rows were measured", n, rows)
	}
	return rows
}

// isRow reports whether a line of the table is a row.
func isRow(line string) bool { return !strings.HasPrefix(line, "#") && strings.TrimSpace(line) != "" }

// TestStopCauses: whatever stops a sweep (a reader closing stdout, each
// of SIGINT, SIGTERM, SIGHUP and SIGPIPE while buffers are faulted in,
// mid-sweep or while the outputs are written), every row measured is in
// the CSV and JSON files, one line on stderr says why, and the exit code
// says which (128 + the signal; 141 for a closed pipe), on shm and sim.
func TestStopCauses(t *testing.T) {
	bin := buildBinary(t)
	worlds := map[string][]string{
		"shm": {"--backend", "shm", "-p", "2"},
		"sim": {"--backend", "sim", "-p", "4"},
	}
	sweep := func(maxBytes string) []string {
		return []string{"-b", "1K", "-e", maxBytes, "-f", "2", "-n", "50", "-w", "1", "--link-bw", "10GB/s"}
	}
	long := sweep("64M")

	for _, backend := range []string{"shm", "sim"} {
		t.Run("closed pipe/"+backend, func(t *testing.T) {
			r := startStopRun(t, bin, 0, append(worlds[backend], long...)...)
			sc := bufio.NewScanner(r.stdout)
			seen := 0
			for seen < 3 && sc.Scan() {
				if isRow(sc.Text()) {
					seen++
				}
			}
			r.stdout.Close() // as head does once it has its lines
			if code := r.wait(t, 2*time.Minute); code != 128+int(syscall.SIGPIPE) {
				t.Fatalf("exit %d, want %d; stderr %q", code, 128+int(syscall.SIGPIPE), r.stderr.String())
			}
			if rows := r.check(t, "stdout: write: broken pipe (its reader closed it)"); rows < seen {
				t.Errorf("the line says %d rows, the table showed %d", rows, seen)
			}
		})
	}

	tests := []struct {
		backend string
		sig     syscall.Signal
		phase   string // "prepare", "mid-sweep", "footer"
	}{
		{"shm", syscall.SIGINT, "mid-sweep"}, {"shm", syscall.SIGTERM, "mid-sweep"},
		{"shm", syscall.SIGHUP, "mid-sweep"}, {"shm", syscall.SIGPIPE, "mid-sweep"},
		{"sim", syscall.SIGINT, "mid-sweep"}, {"sim", syscall.SIGTERM, "mid-sweep"},
		{"sim", syscall.SIGHUP, "mid-sweep"}, {"sim", syscall.SIGPIPE, "mid-sweep"},
		{"shm", syscall.SIGHUP, "prepare"}, {"shm", syscall.SIGTERM, "prepare"},
		{"sim", syscall.SIGINT, "prepare"}, {"sim", syscall.SIGPIPE, "prepare"},
		{"shm", syscall.SIGHUP, "footer"}, {"shm", syscall.SIGINT, "footer"},
		{"sim", syscall.SIGTERM, "footer"}, {"sim", syscall.SIGPIPE, "footer"},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s/%s/%s", unix.SignalName(tc.sig), tc.phase, tc.backend)
		t.Run(name, func(t *testing.T) {
			args := append(append([]string{}, worlds[tc.backend]...), long...)
			switch tc.phase {
			case "prepare":
				args = append(append([]string{}, worlds[tc.backend]...), sweep("128M")...)
			case "footer":
				args = append(append([]string{}, worlds[tc.backend]...), append(sweep("64K"), "-d", "all")...)
			}
			var r *stopRun
			switch tc.phase {
			case "prepare":
				// The signal comes while the buffers of 128 MiB a rank are
				// faulted in (the process has grown past 100 MiB), before
				// the cost model of --algo auto is calibrated.
				args = append(args, "--algo", "auto")
				r = startStopRun(t, bin, 0, args...)
				waitResident(t, r.cmd.Process.Pid, 100<<20)
				_ = r.cmd.Process.Signal(tc.sig)
				go func() { _, _ = bufio.NewReader(r.stdout).WriteTo(new(bytes.Buffer)) }()
			case "mid-sweep":
				r = startStopRun(t, bin, 0, args...)
				go func() {
					sc := bufio.NewScanner(r.stdout)
					for rows := 0; sc.Scan(); {
						if isRow(sc.Text()) {
							if rows++; rows == 2 {
								_ = r.cmd.Process.Signal(tc.sig)
							}
						}
					}
				}()
			case "footer":
				// A sweep whose table is larger than a page, into a stdout
				// of one page that nobody reads: once the CSV holds every
				// row (as many as a run with a reader writes), the run is
				// writing its outputs, held up by stdout.
				want := countRows(t, bin, args)
				r = startStopRun(t, bin, 4096, args...)
				deadline := time.Now().Add(time.Minute)
				for {
					b, _ := os.ReadFile(r.csvPath)
					if strings.Count(string(b), "\n") == 1+want {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the CSV holds %q a minute after the start", b)
					}
					time.Sleep(20 * time.Millisecond)
				}
				_ = r.cmd.Process.Signal(tc.sig)
			}
			if code := r.wait(t, 2*time.Minute); code != 128+int(tc.sig) {
				t.Fatalf("exit %d, want %d; stderr %q", code, 128+int(tc.sig), r.stderr.String())
			}
			rows := r.check(t, "("+unix.SignalName(tc.sig)+")")
			if tc.phase == "footer" && !strings.Contains(r.stderr.String(), "not written: stdout: ") {
				t.Errorf("stopped while writing the outputs, after %d rows; the line does not say what stdout did not take", rows)
			}
		})
	}
}

// waitResident waits until process pid's resident memory passes bytes.
func waitResident(t *testing.T, pid int, bytes int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
				if kb, _ := strconv.ParseInt(f[1], 10, 64); kb<<10 > bytes {
					return
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("process %d did not grow past %d bytes within a minute", pid, bytes)
}

// countRows returns how many rows a run of bin with args writes to its
// CSV when nothing stops it.
func countRows(t *testing.T, bin string, args []string) int {
	t.Helper()
	csvPath := filepath.Join(t.TempDir(), "all.csv")
	if _, stderr, code := runBinary(t, bin, append(args, "--csv", csvPath)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return len(readCSVFile(t, csvPath)) - 1
}

// TestGuardLineReachesStderr: when the memory guard ends a run that did
// not end once cancelled, its line reaches stderr and the rows written
// reach their files, before the process exits 1.
func TestGuardLineReachesStderr(t *testing.T) {
	if os.Getenv("HCCL_TEST_GUARD_HELPER") != "" {
		set := newOutputSet(os.Stdout, os.Stderr)
		w, err := set.create("--csv x", os.Getenv("HCCL_TEST_GUARD_HELPER"))
		must(t, err)
		fmt.Fprintf(w, "row 1\nrow 2\n")
		fmt.Fprintf(set.stdout, "row 1\nrow 2\n")
		guardStuck(set)(&memguard.Exceeded{Resident: 3 << 30, Estimate: 1 << 30, Limit: 2 << 30, Start: 1 << 20})
		t.Fatal("guardStuck returned")
	}
	csvPath := filepath.Join(t.TempDir(), "x.csv")
	cmd := exec.Command(os.Args[0], "-test.run=^TestGuardLineReachesStderr$")
	cmd.Env = append(os.Environ(), "HCCL_TEST_GUARD_HELPER="+csvPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("exit %d, want %d; stderr %q", code, exitFailed, stderr.String())
	}
	if line := stderr.String(); strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "hccl-test: resident memory 3.0GiB passed the limit") {
		t.Errorf("stderr %q: want the guard's one line", line)
	}
	if b, _ := os.ReadFile(csvPath); string(b) != "row 1\nrow 2\n" {
		t.Errorf("the CSV holds %q, want both rows", b)
	}
	if !strings.HasPrefix(stdout.String(), "row 1\nrow 2\n") {
		t.Errorf("stdout holds %q, want both rows", stdout.String())
	}
}

// TestOutputFIFOGivenUp: an output FIFO that nobody opens for reading is
// given up outputIdle after the sweep ends, with one line and exit 1,
// rather than waited on for ever. The bound is the product's 10 s,
// shortened here.
func TestOutputFIFOGivenUp(t *testing.T) {
	defer func(d time.Duration) { outputIdle = d }(outputIdle)
	outputIdle = 500 * time.Millisecond
	fifo := filepath.Join(t.TempDir(), "fifo")
	must(t, unix.Mkfifo(fifo, 0o600))
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		done <- run([]string{"-p", "2", "-b", "1K", "-e", "4K", "-n", "1", "-w", "0", "--link-bw", "10GB/s", "--csv", fifo}, &stdout, &stderr)
	}()
	var code int
	select {
	case code = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("still waiting for a reader of the --csv FIFO after 2 minutes")
	}
	if d := time.Since(start); d < outputIdle {
		t.Errorf("given up after %v, before the idle time of %v", d, outputIdle)
	}
	line := stderr.String()
	if code != exitFailed || strings.Count(line, "\n") != 1 ||
		!strings.Contains(line, "a named pipe that nobody opened for reading within 500ms (4 lines not written)") {
		t.Errorf("exit %d, stderr %q: want exit 1 and one line giving up on the FIFO", code, line)
	}
	if rows := tableRows(t, stdout.String()); len(rows) != 3 {
		t.Errorf("the table holds %d rows, want 3", len(rows))
	}
}
