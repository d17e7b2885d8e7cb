package main

// End-to-end tests of a rank that stops in the middle of a sweep
// (SIGSTOP, SIGTERM, or a hold of --inject on the backends whose ranks
// are not processes): at whatever point of a row it stops, the run ends
// within the op's time limit plus a second, with one line naming the rank
// and the op, and keeps the rows measured before.

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopLimit is the -T of the runs below: short, so that the spread of
// stops runs in a minute, and long enough for any op of the sweep on a
// loaded host.
const stopLimit = 3 * time.Second

// stopSweep is the sweep a rank is stopped in: 13 rows of at least 200
// iterations and 300 ms each, so that on a quiet host too the sweep still
// runs past the latest stop (900 ms after the second row: 200 iterations
// of 4 MiB alone took less on proc).
func stopSweep(backend, csv string) []string {
	flags := []string{"--backend", backend, "-p", "4", "--op", "allreduce", "--algo", "ring", "-b", "1K", "-e", "4M",
		"-n", "200", "-w", "2", "--link-bw", "10GB/s", "-T", stopLimit.String(), "--csv", csv}
	if backend != "sim" { // the simulator's iterations all take one virtual time
		flags = append(flags, "--benchtime", "300ms")
	}
	if backend == "proc" || backend == "tcp" {
		flags = append(flags, "--connect-timeout", "30s")
	}
	return flags
}

// TestStoppedRankEndsRun stops a rank of a 4-rank sweep at a spread of
// points (delays after the second row, in different rows, at different
// ranks): the run must end within -T plus a second of the stop (plus what
// starting and ending a healthy run takes on this host right now, for a
// loaded machine), exit 1, say on one line which rank stopped and in
// which op, and keep in the CSV every row printed before the stop.
// Without a bound on a send whose receiver stopped in its read, a proc run
// waited for the receiver forever about once in fifteen stops; without
// naming stopped children and killing them at once, every run ended 3 to 4
// seconds after -T, naming only the ranks that timed out.
func TestStoppedRankEndsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 12 sweeps")
	}
	bin := buildBinary(t)
	tests := []struct {
		backend string
		sig     syscall.Signal // sent to a rank process; 0 for inject
		inject  string         // --inject for backends whose ranks share a process
		rank    int
		delay   time.Duration // after the second row, or after at
		says    string        // a regexp; PID is the stopped rank's pid
		at      string        // "": after the second row; "start": once the rank process exists; "header": once the header is out
	}{
		{"proc", syscall.SIGSTOP, "", 3, 0, `rank 3 \(pid PID\) is stopped`, ""},
		{"proc", syscall.SIGSTOP, "", 2, 150 * time.Millisecond, `rank 2 \(pid PID\) is stopped`, ""},
		{"proc", syscall.SIGSTOP, "", 1, 400 * time.Millisecond, `rank 1 \(pid PID\) is stopped`, ""},
		{"proc", syscall.SIGSTOP, "", 3, 900 * time.Millisecond, `rank 3 \(pid PID\) is stopped`, ""},
		{"proc", syscall.SIGTERM, "", 2, 300 * time.Millisecond, `rank (process )?2 stopped: SIGTERM received`, ""},
		{"tcp", syscall.SIGSTOP, "", 3, 0, `rank 3 \(pid PID\) is stopped`, ""},
		{"tcp", syscall.SIGSTOP, "", 2, 150 * time.Millisecond, `rank 2 \(pid PID\) is stopped`, ""},
		{"tcp", syscall.SIGSTOP, "", 1, 400 * time.Millisecond, `rank 1 \(pid PID\) is stopped`, ""},
		{"tcp", syscall.SIGSTOP, "", 3, 900 * time.Millisecond, `rank 3 \(pid PID\) is stopped`, ""},
		{"tcp", syscall.SIGTERM, "", 1, 300 * time.Millisecond, `rank (process )?1 stopped: SIGTERM received`, ""},
		// Stops while rank 0 is busy setting up (the rendezvous, the link
		// probe, the buffers of the first rows): rank 0 waits on the
		// stopped rank only later, and -T counted from then ended the run
		// up to the setup's length past -T plus a second (30 s, the
		// connect timeout, for a rank stopped before it connected).
		{"proc", syscall.SIGSTOP, "", 3, 0, `rank 3 \(pid PID\) is stopped`, "start"},
		{"proc", syscall.SIGSTOP, "", 2, 20 * time.Millisecond, `rank 2 \(pid PID\) is stopped`, "start"},
		{"proc", syscall.SIGSTOP, "", 1, 0, `rank 1 \(pid PID\) is stopped`, "header"},
		{"tcp", syscall.SIGSTOP, "", 3, 0, `rank 3 \(pid PID\) is stopped`, "start"},
		{"tcp", syscall.SIGSTOP, "", 2, 0, `rank 2 \(pid PID\) is stopped`, "header"},
		{"shm", 0, "delay=60s@rank=3", 3, 0, `rank 3, op #\d+: .*injected by --inject delay=1m0s@rank=3`, ""},
		{"sim", 0, "delay=60s@rank=3", 3, 0, `rank 3, op #\d+: .*injected by --inject delay=1m0s@rank=3`, ""},
	}
	// A stop before the first op is named with what rank 0 was doing:
	// the rendezvous, connecting, or an op.
	setupOrOp := regexp.MustCompile(`op #\d+|rendezvous|connect`)
	base := map[string]time.Duration{}
	for _, tc := range tests {
		name := fmt.Sprintf("%s/%v/rank %d/%v", tc.backend, tc.sig, tc.rank, tc.delay)
		if tc.at != "" {
			name += "/" + tc.at
		}
		if tc.sig == 0 {
			name = fmt.Sprintf("%s/inject %s", tc.backend, tc.inject)
		}
		t.Run(name, func(t *testing.T) {
			if _, ok := base[tc.backend]; !ok {
				base[tc.backend] = healthyRun(t, bin, tc.backend)
			}
			csv := t.TempDir() + "/rows.csv"
			flags := stopSweep(tc.backend, csv)
			if tc.inject != "" {
				flags = append(flags, "--inject", tc.inject)
			}
			p := start(t, "rank 0", cleanEnv(), bin, flags...)
			var before int
			var pid int
			stopped := time.Now()
			if tc.sig != 0 {
				switch tc.at {
				case "":
					waitRows(t, p, 2, 120*time.Second)
				case "start":
					pid = waitChild(t, p, bin, tc.rank)
				case "header":
					waitHeader(t, p)
				}
				time.Sleep(tc.delay)
				if pid == 0 {
					pid = childRank(t, bin, p.cmd.Process.Pid, tc.rank)
				}
				before = len(rows(t, p.out.String()))
				if err := syscall.Kill(pid, tc.sig); err != nil {
					t.Fatal(err)
				}
				stopped = time.Now()
				defer syscall.Kill(pid, syscall.SIGKILL) // a stopped child the run failed to end
			}
			code := p.wait(t, 120*time.Second)
			took := time.Since(stopped)
			stderr := p.errOut.String()
			limit := stopLimit + time.Second + base[tc.backend]
			t.Logf("exit %d %v after the stop (limit %v): %s", code, took.Round(time.Millisecond), limit, stderr)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if took > limit {
				t.Errorf("the run ended %v after the stop, past -T %v + 1s + %v (a healthy run's start and end)", took.Round(time.Millisecond), stopLimit, base[tc.backend])
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n") + 1; n != 1 {
				t.Errorf("%d lines on stderr, want 1", n)
			}
			says := strings.ReplaceAll(tc.says, "PID", strconv.Itoa(pid))
			op := regexp.MustCompile(`op #\d+`)
			if tc.at != "" {
				op = setupOrOp
			}
			if !regexp.MustCompile(says).MatchString(stderr) || !op.MatchString(stderr) {
				t.Errorf("stderr does not name the rank and the op (%q):\n%s", says, stderr)
			}
			if strings.Contains(stderr, "context canceled") {
				t.Errorf("stderr says \"context canceled\", not why:\n%s", stderr)
			}
			data, err := os.ReadFile(csv)
			if err != nil {
				t.Fatal(err)
			}
			// A run that ended before its first row may leave the CSV
			// without a header.
			if kept := max(strings.Count(string(data), "\n")-1, 0); kept < before {
				t.Errorf("%d rows in the CSV, %d were printed before the stop", kept, before)
			}
		})
	}
	noLeftovers(t, bin)
}

// healthyRun returns how long a one-row run on backend takes from start
// to exit on this host now: what a stopped run's end may take on top of
// -T and a second when the host is loaded.
func healthyRun(t *testing.T, bin, backend string) time.Duration {
	t.Helper()
	start := time.Now()
	_, stderr, code := runBinaryEnv(t, bin, nil, "--backend", backend, "-p", "4", "-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "--link-bw", "10GB/s")
	if code != 0 {
		t.Fatalf("a healthy run on %s: exit %d: %s", backend, code, stderr)
	}
	return time.Since(start)
}

// childRank returns the pid of the rank process for rank that the parent
// (pid) started.
func childRank(t *testing.T, bin string, parent, rank int) int {
	t.Helper()
	for _, pi := range running(t, bin) {
		if pi.ppid == parent && pi.rank == strconv.Itoa(rank) {
			return pi.pid
		}
	}
	t.Fatalf("no rank %d among the children of %d", rank, parent)
	return 0
}

// TestScenarioRankFailureOneLine: a scenario over tcp whose rank is
// killed, or whose parent is interrupted, says so on one line: every rank
// process printed its own error before ("hccl-test scenario: ..." lines
// were not held back as the sweep's are), 7 and 8 lines of them, none
// naming the killed rank.
func TestScenarioRankFailureOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 2 scenarios of 8 rank processes")
	}
	bin := buildBinary(t)
	tests := []struct {
		name  string
		sig   syscall.Signal
		child bool // signal rank 7, else the parent
		code  int
		says  string // a regexp; PID is rank 7's pid
	}{
		{"rank 7 killed", syscall.SIGKILL, true, 1, `^hccl-test scenario: rank 7 \(pid PID\) was killed by signal 9 \(SIGKILL\): .*(op #\d+|rendezvous)`},
		{"parent interrupted", syscall.SIGINT, false, 130, `^hccl-test scenario: interrupted`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, "scenario", cleanEnv(), bin, "scenario", "--backend", "tcp", "-p", "8", "-n", "1000", "-T", "30s", "../../examples/moe-ep.json")
			var pid int
			for end := time.Now().Add(60 * time.Second); pid == 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				for _, pi := range running(t, bin) {
					if pi.ppid == p.cmd.Process.Pid && pi.rank == "7" {
						pid = pi.pid
					}
				}
			}
			if pid == 0 {
				t.Fatalf("rank 7 did not start:\n%s", p.errOut.String())
			}
			// Into the steps; on a loaded host perhaps still in the rendezvous,
			// which must end as soon, naming rank 7.
			time.Sleep(time.Second)
			target := p.cmd.Process.Pid
			if tc.child {
				target = pid
			}
			if err := syscall.Kill(target, tc.sig); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t, 60*time.Second)
			stderr := strings.TrimSpace(p.errOut.String())
			t.Logf("exit %d: %s", code, stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if n := strings.Count(stderr, "\n") + 1; n != 1 {
				t.Errorf("%d lines on stderr, want 1", n)
			}
			if says := strings.ReplaceAll(tc.says, "PID", strconv.Itoa(pid)); !regexp.MustCompile(says).MatchString(stderr) {
				t.Errorf("stderr does not say %q", says)
			}
		})
	}
	noLeftovers(t, bin)
}

// waitChild waits for p's rank process for rank to exist and returns its
// pid.
func waitChild(t *testing.T, p *proc, bin string, rank int) int {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		for _, pi := range running(t, bin) {
			if pi.ppid == p.cmd.Process.Pid && pi.rank == strconv.Itoa(rank) {
				return pi.pid
			}
		}
	}
	t.Fatalf("rank %d did not start:\n%s", rank, p.errOut.String())
	return 0
}

// waitHeader waits for the first line of p's header: the world is set
// up, the link probe and the first row's buffers are next.
func waitHeader(t *testing.T, p *proc) {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if strings.HasPrefix(p.out.String(), "#") {
			return
		}
	}
	t.Fatalf("no header within a minute:\n%s", p.errOut.String())
}
