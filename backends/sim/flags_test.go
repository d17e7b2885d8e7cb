package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends/sim"
)

// TestDefineFlags checks --sim-alpha, --sim-reduce, --sim-copy, --sim-gap,
// --sim-pull and --sim-data as the sim reads them (Backend.DefineFlags):
// the options they make, and their refusals of values.
func TestDefineFlags(t *testing.T) {
	tests := []struct {
		args []string
		want sim.Own
		err  string
	}{
		{args: nil},
		{args: []string{"--sim-alpha", "1.5us", "--sim-reduce", "40GB/s"}, want: sim.Own{Alpha: 1500 * time.Nanosecond, ReduceGBps: 40}},
		{args: []string{"--sim-alpha", "intra=1us,inter=5us"}, want: sim.Own{Alpha: time.Microsecond, InterAlpha: 5 * time.Microsecond}},
		{args: []string{"--sim-alpha", "inter=5us"}, want: sim.Own{InterAlpha: 5 * time.Microsecond}},
		{args: []string{"--sim-alpha", "fast"}, err: `--sim-alpha "fast": "fast" is not a duration`},
		{args: []string{"--sim-alpha", "0us"}, err: "want a positive duration"},
		{args: []string{"--sim-alpha", "outer=2us"}, err: `unknown key "outer"`},
		{args: []string{"--sim-alpha", "2000000h"}, err: `--sim-alpha "2000000h": 2000000h0m0s: more than the limit of 168h0m0s`},
		{args: []string{"--sim-reduce", "fast"}, err: "--sim-reduce: bandwidth"},
		{args: []string{"--sim-reduce", "1e-300GB/s"}, err: `--sim-reduce: bandwidth "1e-300GB/s": want 1B/s to 1000TB/s`},
		{args: []string{"--sim-copy", "8GB/s"}, want: sim.Own{CopyGBps: 8}},
		{args: []string{"--sim-copy", "fast"}, err: "--sim-copy: bandwidth"},
		{args: []string{"--sim-gap", "300ns"}, want: sim.Own{Gap: 300 * time.Nanosecond}},
		{args: []string{"--sim-gap", "0"}, err: `--sim-gap "0": 0s: want a positive duration`},
		{args: []string{"--sim-pull"}, want: sim.Own{Pull: true}},
		{args: []string{"--sim-data=false"}, want: sim.Own{NoPayload: true}},
		{args: []string{"--sim-data=true"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			read := sim.Backend{}.DefineFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			own, err := read()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if own != tc.want {
				t.Errorf("got %+v, want %+v", own, tc.want)
			}
			if own.(sim.Own).WithoutPayload() != tc.want.NoPayload {
				t.Errorf("WithoutPayload %v, want %v", own.(sim.Own).WithoutPayload(), tc.want.NoPayload)
			}
		})
	}
}
