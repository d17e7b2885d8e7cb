package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// corpusDir copies isolate's testdata/cluster6 (six hosts, node04 slow,
// node02-node05 flaky) into a new directory, leaving out the files for
// which drop returns true, and returns it.
func corpusDir(t *testing.T, drop func(name string) bool) string {
	t.Helper()
	src := "../../isolate/testdata/cluster6"
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, e := range entries {
		if drop != nil && drop(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
	}
	return dir
}

func runIsolateArgs(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(append([]string{"isolate"}, args...), &o, &e)
	return o.String(), e.String(), code
}

// TestIsolateNames runs isolate on the corpus: node04 and the flaky pair
// named (exit 3), a CSV row per pair, both images drawn; and on the
// corpus without node04 and the failed log: nothing named (exit 0).
func TestIsolateNames(t *testing.T) {
	dir := corpusDir(t, nil)
	out := t.TempDir()
	csvPath := filepath.Join(out, "pairs.csv")
	png, svg := filepath.Join(out, "heat.png"), filepath.Join(out, "heat.svg")
	stdout, stderr, code := runIsolateArgs("--csv", csvPath, "-o", png, dir)
	if code != exitNamed || stderr != "" {
		t.Fatalf("exit %d, stderr %q, want %d and none\n%s", code, stderr, exitNamed, stdout)
	}
	for _, want := range []string{"named host 1: node04, bad with 5 of its 5 peers", "named pair: node02 - node05 flaky", "sendrecv busbw at 67108864 bytes"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	f, err := os.Open(csvPath)
	must(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	must(t, err)
	if len(rows) != 1+15 {
		t.Errorf("%d CSV rows, want a header and 15 pairs", len(rows))
	}
	if _, _, code := runIsolateArgs("-o", svg, dir); code != exitNamed {
		t.Errorf("-o .svg: exit %d", code)
	}
	pngData, _ := os.ReadFile(png)
	svgData, _ := os.ReadFile(svg)
	if !bytes.HasPrefix(pngData, []byte("\x89PNG")) || !bytes.Contains(svgData, []byte("<svg")) || !bytes.Contains(svgData, []byte("FLAKY")) {
		t.Errorf("images: png %d bytes, svg %d bytes (with FLAKY: %v)", len(pngData), len(svgData), bytes.Contains(svgData, []byte("FLAKY")))
	}

	healthy := corpusDir(t, func(name string) bool { return strings.Contains(name, "node04") || strings.Contains(name, "retry") })
	stdout, stderr, code = runIsolateArgs(healthy)
	if code != exitOK || !strings.Contains(stdout, "named: nothing") {
		t.Errorf("healthy: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
}

// TestIsolateRefusals: every refusal is one line on stderr and exit 2.
func TestIsolateRefusals(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(t.TempDir(), "a-b.log")
	must(t, os.WriteFile(file, []byte("x\n"), 0o644))
	fifoDir := corpusDir(t, nil)
	must(t, syscall.Mkfifo(filepath.Join(fifoDir, "node09-node10.log"), 0o600))
	noHosts := corpusDir(t, nil)
	must(t, os.WriteFile(filepath.Join(noHosts, "results.log"), []byte("# nothing\n"), 0o644))
	mixed := corpusDir(t, nil)
	data, err := os.ReadFile(filepath.Join(mixed, "node01-node02.log"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(mixed, "node01-node02.log"), bytes.ReplaceAll(data, []byte("sendrecv_perf"), []byte("all_reduce_perf")), 0o644))
	oneHost := corpusDir(t, nil)
	data, err = os.ReadFile(filepath.Join(oneHost, "node01-node03.log"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(oneHost, "node01-node03.log"), bytes.ReplaceAll(data, []byte("node03"), []byte("node01")), 0o644))
	dir := corpusDir(t, nil)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no argument", nil, "no DIR and no world"},
		{"two arguments", []string{dir, dir}, "want one argument"},
		{"empty directory", []string{empty}, "holds no log"},
		{"missing directory", []string{filepath.Join(empty, "nope")}, "no such file or directory"},
		{"not a directory", []string{file}, "is not a directory"},
		{"a FIFO in the directory", []string{fifoDir}, "is not a regular file (a FIFO)"},
		{"a log without hosts", []string{noHosts}, "results.log: no rank lines name its hosts"},
		{"mixed ops", []string{mixed}, "the logs measure several ops (allreduce, sendrecv): name the one to compare with --op"},
		{"an op no log measured", []string{"--op", "alltoall", dir}, "--op alltoall: no log measured it"},
		{"a log of one host", []string{oneHost}, "its rank lines name one host, node01"},
		{"k NaN", []string{"--k", "NaN", dir}, "--k NaN"},
		{"k negative", []string{"--k", "-1", dir}, "--k -1"},
		{"floor 0", []string{"--floor", "0", dir}, "--floor 0"},
		{"floor 2", []string{"--floor", "2", dir}, "--floor 2"},
		{"image format", []string{"-o", filepath.Join(empty, "x.jpg"), dir}, "unknown image format"},
		{"image is a directory", []string{"-o", empty + "/d.png/", dir}, "--output"},
		{"csv in the directory", []string{"--csv", filepath.Join(dir, "pairs.csv"), dir}, "the next isolate would read it as a log"},
		{"image in the directory", []string{"-o", filepath.Join(dir, "h.png"), dir}, "the next isolate would read it as a log"},
		{"a live flag with DIR", []string{"--backend", "tcp", dir}, "--backend: only a live search (no DIR) takes it"},
		{"-p with DIR", []string{"-p", "4", dir}, "--ranks: only a live search"},
		{"live: --op", []string{"-p", "4", "--op", "sendrecv"}, "--op: only logs take it"},
		{"live: -p 1", []string{"-p", "1"}, "-p 1: a live search needs 2 ranks or more"},
		{"live: -p 0", []string{"-p", "0"}, "no DIR and no world"},
		{"live: -p -1", []string{"-p", "-1"}, "-1"},
		{"live: size 0", []string{"-p", "4", "--size", "0"}, "--size 0: want a multiple of 4 bytes"},
		{"live: size 6", []string{"-p", "4", "--size", "6"}, "--size 6: want a multiple of 4 bytes"},
		{"live: size 2G", []string{"-p", "4", "--size", "2G"}, "--size 2147483648"},
		{"live: size NaN", []string{"-p", "4", "--size", "NaN"}, "--size"},
		{"live: size words", []string{"-p", "4", "--size", "lots"}, "--size"},
		{"live: -n 0", []string{"-p", "4", "-n", "0"}, "--iters 0"},
		{"live: -w -1", []string{"-p", "4", "-w", "-1"}, "-1"},
		{"live: --per-host -1", []string{"-p", "4", "--per-host", "-1"}, "-1"},
		{"live: --per-host 3 of 4", []string{"-p", "4", "--per-host", "3"}, "--per-host 3: the 4 ranks must make 2 hosts"},
		{"live: --per-host all", []string{"-p", "4", "--per-host", "4"}, "--per-host 4: the 4 ranks must make 2 hosts"},
		{"live: -T 0", []string{"-p", "4", "--per-host", "2", "-T", "0"}, "--timeout 0 (none)"},
		{"live: -T NaN", []string{"-p", "4", "-T", "NaN"}, "timeout"},
		{"live: shm without --per-host", []string{"--backend", "shm", "-p", "4"}, "give --per-host N"},
		{"live: sim", []string{"--backend", "sim", "-p", "4", "--per-host", "2"}, "--backend sim: a live search measures real links"},
		{"live: unknown backend", []string{"--backend", "nope", "-p", "4"}, "nope"},
		{"live: bad master", []string{"-p", "4", "--master", "no-port"}, "--master"},
		{"live: k NaN", []string{"-p", "4", "--k", "NaN"}, "--k NaN"},
		{"live: -p on one machine", []string{"-p", "4"}, "-p 4 starts every rank on this machine, one host"},
		{"live: csv a directory", []string{"-p", "4", "--per-host", "2", "--csv", empty}, "is a directory"},
		{"live: csv in no directory", []string{"-p", "4", "--per-host", "2", "--csv", "/dev/null/x.csv"}, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runIsolateArgs(tc.args...)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, one line with %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// failWriter fails every write, as stdout on a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestIsolateStdoutFails: a report that could not be written is exit 1
// and one line, not 3 (which would say the report named something).
func TestIsolateStdoutFails(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"isolate", corpusDir(t, nil)}, failWriter{}, &stderr)
	if code != exitFailed || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("exit %d, stderr %q; want 1 and one line", code, stderr.String())
	}
}
