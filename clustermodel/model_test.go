package clustermodel

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// valid returns a model that Validate accepts: two servers fitted.
func valid() *Model {
	return &Model{
		Version: Version, Kind: Kind, Source: "nccl-tests", Device: "Example Accelerator X1",
		Intra: Level{AlphaUS: 3, GBps: 120, From: "rows"}, Inter: &Level{AlphaUS: 14, GBps: 22, From: "rows"},
		ReduceGBps: 60,
		Ops:        []Op{{Name: "allreduce", BWScale: 1, LatScale: 1, InterBWScale: 0.9, InterLatScale: 1.2, Shape: "ring", Rows: 10, MedianPct: 1, WorstPct: 3}},
		Fitted:     Span{Worlds: []World{{1, 8}, {2, 8}}, MinBytes: 1024, MaxBytes: 1 << 28},
	}
}

// TestRoundTrip writes a model and reads it back unchanged.
func TestRoundTrip(t *testing.T) { roundTrip(t, valid()) }

// roundTrip writes m, reads it back and fails t unless it is unchanged.
func roundTrip(t *testing.T, m *Model) {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back %+v, wrote %+v", got, m)
	}
}

// TestValidate checks that every kind of nonsense is refused, naming the
// field.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Model)
		want   string
	}{
		{"version", func(m *Model) { m.Version = 2 }, "version 2"},
		{"kind", func(m *Model) { m.Kind = "x" }, `kind "x"`},
		{"zero latency", func(m *Model) { m.Intra.AlphaUS = 0 }, "intra.alpha_us 0"},
		{"negative bandwidth", func(m *Model) { m.Inter.GBps = -1 }, "inter.bw_GBps -1"},
		{"bandwidth beyond the limit", func(m *Model) { m.Intra.GBps = 1e7 }, "intra.bw_GBps 1e+07"},
		{"no reduction", func(m *Model) { m.ReduceGBps = 0 }, "reduce_GBps 0"},
		{"no ops", func(m *Model) { m.Ops = nil }, "ops is empty"},
		{"unknown op", func(m *Model) { m.Ops[0].Name = "allsmash" }, `op "allsmash"`},
		{"op twice", func(m *Model) { m.Ops = append(m.Ops, m.Ops[0]) }, "fitted twice"},
		{"scale", func(m *Model) { m.Ops[0].BWScale = 1e6 }, "bw_scale 1e+06"},
		{"scale between servers", func(m *Model) { m.Ops[0].InterBWScale, m.Ops[0].InterLatScale = 1e6, 1 }, "inter_bw_scale 1e+06"},
		{"half the scales between servers", func(m *Model) { m.Ops[0].InterLatScale = 0 }, "inter_lat_scale 0"},
		{"scales between servers without a link there", func(m *Model) {
			m.Inter, m.Fitted.Worlds = nil, m.Fitted.Worlds[:1]
			m.Ops[0].InterBWScale, m.Ops[0].InterLatScale = 1, 1
		}, "a model that has none"},
		{"scales between servers of one server", func(m *Model) {
			m.Ops[0].InterBWScale, m.Ops[0].InterLatScale, m.Ops[0].OneServer = 1, 1, true
		}, "one_server"},
		{"shape of another op", func(m *Model) { m.Ops[0].Shape = "pairwise" }, `shape "pairwise"`},
		{"negative error", func(m *Model) { m.Ops[0].WorstPct = -1 }, "an error of -1%"},
		{"no rows", func(m *Model) { m.Ops[0].Rows = 0 }, "rows 0"},
		{"no worlds", func(m *Model) { m.Fitted.Worlds = nil }, "worlds is empty"},
		{"one rank", func(m *Model) { m.Fitted.Worlds[0] = World{1, 1} }, "fitted world 1 x 1"},
		{"out of order", func(m *Model) { m.Fitted.Worlds[0] = World{4, 8} }, "out of order"},
		{"inter without worlds", func(m *Model) { m.Fitted.Worlds = m.Fitted.Worlds[:1] }, "inter is set"},
		{"worlds without inter", func(m *Model) { m.Inter, m.Ops[0].InterBWScale, m.Ops[0].InterLatScale = nil, 0, 0 }, "inter is missing"},
		{"sizes", func(m *Model) { m.Fitted.MinBytes = 0 }, "fitted sizes 0.."},
		// A product of servers and ranks that wraps round to a few ranks.
		{"servers wrap round", func(m *Model) { m.Fitted.Worlds[1] = World{1<<62 + 1, 4} }, "fitted world 4611686018427387905 x 4"},
		{"ranks wrap round", func(m *Model) { m.Fitted.Worlds[1] = World{4, 1<<62 + 1} }, "fitted world 4 x 4611686018427387905"},
		{"servers beyond the limit", func(m *Model) { m.Fitted.Worlds[1] = World{MaxRanks + 1, 1} }, "want 2 to 65536 ranks"},
		// Text that predict prints into its header and exports.
		{"newline in source", func(m *Model) { m.Source = "nccl-tests\nallreduce 1 2 3" }, "source: a control character (U+000A)"},
		{"escape in device", func(m *Model) { m.Device = "X1\x1b[31m" }, "device: a control character (U+001B)"},
		{"NUL in a note", func(m *Model) { m.Ops[0].Note = "ring\x00" }, "note: a control character (U+0000)"},
		{"tab in from", func(m *Model) { m.Intra.From = "18\trows" }, "intra.from: a control character (U+0009)"},
		{"C1 control in inter", func(m *Model) { m.Inter.From = "rows\u0085" }, "inter.from: a control character (U+0085)"},
		{"not UTF-8", func(m *Model) { m.Source = "nccl\xff" }, "source: not UTF-8"},
		{"ports of no kind", func(m *Model) { m.Inter.Ports = "switch" }, `inter.ports "switch": want "rank"`},
		{"ports in another case", func(m *Model) { m.Inter.Ports = "Server" }, `inter.ports "Server"`},
		{"ports inside a server", func(m *Model) { m.Intra.Ports = PortsServer }, `intra.ports "server": only the link between servers`},
		{"host rate below 0", func(m *Model) { m.HostGBps = -3 }, `host_GBps -3: want a rate`},
		{"host rate NaN", func(m *Model) { m.HostGBps = math.NaN() }, `host_GBps NaN: want a rate`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.change(m)
			err := m.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestLoadRefusals checks what Load refuses before and after reading.
func TestLoadRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var good bytes.Buffer
	if err := valid().Encode(&good); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"directory", dir, "is a directory"},
		{"fifo", fifo, "is a named pipe"},
		{"device", "/dev/null", "is a device"},
		{"missing", filepath.Join(dir, "none.json"), "no such file"},
		{"not JSON", write("a", "hello"), "not a model file (JSON)"},
		{"no version", write("b", `{"kind":"x"}`), "no version"},
		{"other version", write("c", `{"version":7}`), "model version 7: this build reads version 1 only"},
		{"NaN", write("d", strings.Replace(good.String(), `"reduce_GBps": 60`, `"reduce_GBps": NaN`, 1)), "not a model file (JSON)"},
		{"unknown field", write("e", strings.Replace(good.String(), `"kind"`, `"colour": 1, "kind"`, 1)), `unknown field "colour"`},
		{"two objects", write("f", good.String()+good.String()), "after top-level value"},
		{"too large", write("g", strings.Repeat(" ", MaxFileBytes+1)), "larger than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := Load(write("ok.json", good.String())); err != nil {
		t.Errorf("a valid model: %v", err)
	}
}

// TestCollOneServer checks that a collective's scales apply to the link
// between servers only where they were fitted on rows that crossed it,
// and that its own scales there, where it has them, take their place.
func TestCollOneServer(t *testing.T) {
	w := World{Servers: 2, PerServer: 8}
	tests := []struct {
		name                string
		op                  Op
		interBW, interAlpha float64 // GB/s and us the link between servers gets
	}{
		{"fitted across servers", Op{}, 22 * 1.5, 14 * 0.5},
		{"fitted on one server", Op{OneServer: true}, 22, 14},
		{"its own scales between servers", Op{InterBWScale: 0.8, InterLatScale: 2}, 22 * 0.8, 14 * 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			o := tc.op
			o.Name, o.BWScale, o.LatScale = "allreduce", 1.5, 0.5
			cm := m.Coll(o, w)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
			if !near(1/cm.Beta/1e9, 120*1.5) || !near(cm.Alpha*1e6, 3*0.5) || !near(1/cm.Gamma/1e9, 60*1.5) {
				t.Errorf("inside a server: %.3f GB/s, %.3f us, reduce %.3f GB/s; want the scales applied (180, 1.5, 90)", 1/cm.Beta/1e9, cm.Alpha*1e6, 1/cm.Gamma/1e9)
			}
			if !near(1/cm.InterBeta/1e9, tc.interBW) || !near(cm.InterAlpha*1e6, tc.interAlpha) {
				t.Errorf("between servers: %.3f GB/s, %.3f us; want %.3f and %.3f", 1/cm.InterBeta/1e9, cm.InterAlpha*1e6, tc.interBW, tc.interAlpha)
			}
		})
	}
}
