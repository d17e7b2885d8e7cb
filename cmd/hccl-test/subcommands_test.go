package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
)

// TestCompareSubcommand compares a run with itself (no regression, exit 0)
// and with a file whose times were made 30% slower (exit 4 with
// --threshold 5%, and a +30% delta in the output).
func TestCompareSubcommand(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	old := filepath.Join(dir, "old.txt")
	_, stderr, code := runBinary(t, bin, "-p", "2", "-b", "1K", "-e", "4K", "-n", "2", "-w", "0",
		"--runs", "8", "--link-bw", "10GB/s", "--bench", old)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := runBinary(t, bin, "compare", "--threshold", "5%", old, old)
	if code != 0 {
		t.Fatalf("a file against itself: exit %d: %s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "AllReduce/backend=shm/ranks=2/dtype=fp32/redop=sum/size=1KiB") {
		t.Errorf("comparison lacks the row names:\n%s", stdout)
	}
	// Plant a 30% slowdown in steady data: the measured file's values
	// replaced by ones with 1% jitter (a shared machine's own noise would
	// hide a planted change), then those scaled by 1.3.
	steady, slow := filepath.Join(dir, "steady.txt"), filepath.Join(dir, "slow.txt")
	writeScaled(t, old, steady, 1, true)
	writeScaled(t, steady, slow, 1.3, false)
	stdout, stderr, code = runBinary(t, bin, "compare", "--threshold", "5%", steady, slow)
	if code != exitRegressed {
		t.Fatalf("a 30%% slowdown: exit %d, want %d: %s\n%s", code, exitRegressed, stderr, stdout)
	}
	if !strings.Contains(stdout, "+30") || !strings.Contains(stderr, "worse") {
		t.Errorf("the slowdown is not reported:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	_, stderr, code = runBinary(t, bin, "compare", old)
	if code != exitUsage || !strings.Contains(stderr, "two files") {
		t.Errorf("one file: exit %d: %s", code, stderr)
	}
	_, stderr, code = runBinary(t, bin, "compare", old, filepath.Join(dir, "missing.txt"))
	if code != exitUsage || !strings.Contains(stderr, "missing.txt") {
		t.Errorf("a missing file: exit %d: %s", code, stderr)
	}
}

// writeScaled copies a Go benchmark file, multiplying every ns/op value by
// factor and dividing every GB/s value by it; steady first replaces each
// result's values by 1000 ns/op and 1 GB/s, give or take 1%.
func writeScaled(t *testing.T, from, to string, factor float64, steady bool) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			out = append(out, line)
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := parseFloat(f[i])
			if err != nil {
				t.Fatalf("value %q in %q", f[i], line)
			}
			jitter := 1 + 0.01*float64(n%3-1)
			switch {
			case f[i+1] == "ns/op" && steady:
				v = 1000 * jitter
			case strings.HasSuffix(f[i+1], "GB/s") && steady:
				v = 1 / jitter
			case f[i+1] == "ns/op":
				v *= factor
			case strings.HasSuffix(f[i+1], "GB/s"):
				v /= factor
			}
			f[i] = formatFloat(v)
		}
		out = append(out, strings.Join(f, " "))
	}
	if err := os.WriteFile(to, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlotSubcommand draws a PNG and an SVG from a CSV and a bench file.
func TestPlotSubcommand(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	csvPath, benchPath := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.txt")
	_, stderr, code := runBinary(t, bin, "--op", "allreduce,allgather", "-p", "2", "-b", "1K", "-e", "64K", "-f", "4",
		"-n", "2", "-w", "0", "--link-bw", "10GB/s", "--csv", csvPath, "--bench", benchPath)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	pngPath, svgPath := filepath.Join(dir, "p.png"), filepath.Join(dir, "p.svg")
	if _, stderr, code := runBinary(t, bin, "plot", "-o", pngPath, csvPath); code != 0 {
		t.Fatalf("plot png: exit %d: %s", code, stderr)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 200 {
		t.Fatalf("PNG: %v, %v", err, img)
	}
	if _, stderr, code := runBinary(t, bin, "plot", "-o", svgPath, benchPath); code != 0 {
		t.Fatalf("plot svg: exit %d: %s", code, stderr)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil || !strings.Contains(string(svg), "<svg") {
		t.Fatalf("SVG: %v", err)
	}
	if _, stderr, code := runBinary(t, bin, "plot", "-o", filepath.Join(dir, "p.gif"), csvPath); code == 0 || !strings.Contains(stderr, "gif") {
		t.Errorf("a .gif output: exit %d: %s", code, stderr)
	}
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestAlgorithmsSubcommand checks that `hccl-test algorithms` lists every
// collective with the algorithms --algo accepts for it.
func TestAlgorithmsSubcommand(t *testing.T) {
	bin := buildBinary(t)
	stdout, stderr, code := runBinary(t, bin, "algorithms")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(coll.AllOps()) {
		t.Fatalf("%d lines, want one per collective:\n%s", len(lines), stdout)
	}
	for i, op := range coll.AllOps() {
		if want := op.String() + " " + strings.Join(coll.Names(op), " "); lines[i] != want {
			t.Errorf("line %d %q, want %q", i, lines[i], want)
		}
	}
	if _, stderr, code := runBinary(t, bin, "algorithms", "extra"); code != exitUsage || strings.Count(stderr, "\n") != 1 {
		t.Errorf("extra argument: exit %d, stderr %q", code, stderr)
	}
}

// TestCPUProfile checks that HCCL_TEST_CPUPROFILE writes a profile.
func TestCPUProfile(t *testing.T) {
	bin := buildBinary(t)
	path := filepath.Join(t.TempDir(), "cpu.prof")
	t.Setenv("HCCL_TEST_CPUPROFILE", path)
	if _, stderr, code := runBinary(t, bin, "-p", "2", "-b", "1K", "-e", "1K", "-n", "2", "--link-bw", "1GB/s"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("no profile written: %v", err)
	}
}
