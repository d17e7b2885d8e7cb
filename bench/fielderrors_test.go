package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/fielderr"
)

// testFlags is a stand-in for the command's tables of flags (cmd's
// fieldFlags and fieldShortFlags), for the fields the checks below name.
var testFlags = fielderr.Names{
	Long: func(f fielderr.Field) string {
		return map[fielderr.Field]string{
			"Backend": "--backend", "Ranks": "--ranks", "Topology": "--topology",
			"MaxBytes": "--maxbytes", "Iters": "--iters", "BenchTime": "--benchtime",
			"Algo": "--algo", "InjectText": "--inject", "Retry": "--retry",
			"LinkGBps": "--link-bw", "LinkInterGBps": "--link-bw inter=",
			"Alpha": "--sim-alpha", "InterAlpha": "--sim-alpha inter=",
			"ReduceGBps": "--sim-reduce", "CopyGBps": "--sim-copy",
			"Gap": "--sim-gap", "Pull": "--sim-pull", "NoPayload": "--sim-data=false",
		}[f]
	},
	Short: func(f fielderr.Field) string { return map[fielderr.Field]string{"MaxBytes": "-e", "Iters": "-n"}[f] },
}

// TestChecksNameFields runs Plan.Validate over bad plans, one for each
// check of the algorithms, the sim's settings and the memory estimate, and
// checks that the error names fields, never a flag: its text has no "--",
// a *fielderr.FieldError names the field at fault, and shown with the
// command's flags it reads as the refusal always has.
func TestChecksNameFields(t *testing.T) {
	onShm := func(edit func(p *Plan)) func(p *Plan) {
		return func(p *Plan) {
			p.Backend, p.Own = "shm", nil
			edit(p)
		}
	}
	const memory = ": the run needs about "
	tests := []struct {
		name  string
		edit  func(p *Plan)
		field fielderr.Field
		flags string // the text with flags; "A…B" for one that starts with A and ends with B
	}{
		{"algo listed twice", func(p *Plan) { p.Algo = "ring,rd,ring" }, "Algo", `--algo "ring,rd,ring": ring is listed twice`},
		{"algo empty item", func(p *Plan) { p.Algo = ",ring" }, "Algo", `--algo ",ring": an empty name at item 1 of 2`},
		{"algo native", func(p *Plan) { p.Algo = "native" }, "Algo",
			"--algo native: runs MPI's own collectives, so it needs --backend mpi (a build with -tags mpi, under mpirun)"},
		{"algo does not serve", func(p *Plan) { p.Algo = "pairwise" }, "Algo", `--algo "pairwise": does not serve allreduce (it has: …)`},
		{"no payload off sim", onShm(func(p *Plan) { p.NoPayload = true }), "NoPayload",
			"--sim-data=false: only --backend sim can run without payload"},
		{"alpha off sim", onShm(func(p *Plan) { p.Own = sim.Own{Alpha: time.Microsecond} }), "Alpha", "--sim-alpha: only --backend sim simulates links"},
		{"reduce off sim", onShm(func(p *Plan) { p.Own = sim.Own{ReduceGBps: 1} }), "ReduceGBps", "--sim-reduce: only --backend sim simulates reductions"},
		{"copy off sim", onShm(func(p *Plan) { p.Own = sim.Own{CopyGBps: 1} }), "CopyGBps", "--sim-copy: only --backend sim simulates copies"},
		{"gap off sim", onShm(func(p *Plan) { p.Own = sim.Own{Gap: 1} }), "Gap", "--sim-gap: only --backend sim simulates links"},
		{"pull off sim", onShm(func(p *Plan) { p.Own = sim.Own{Pull: true} }), "Pull", "--sim-pull: only --backend sim simulates links"},
		{"negative alpha", func(p *Plan) { withSim(p, func(o *sim.Own) { o.Alpha = -1 }) }, "Alpha", "--sim-alpha intra=-1ns,inter=0s: must not be negative"},
		{"negative gap", func(p *Plan) { withSim(p, func(o *sim.Own) { o.Gap = -1 }) }, "Gap", "--sim-gap -1ns: must not be negative"},
		{"negative reduce", func(p *Plan) { withSim(p, func(o *sim.Own) { o.ReduceGBps = -1 }) }, "ReduceGBps", "--sim-reduce -1: must be a positive bandwidth"},
		{"negative copy", func(p *Plan) { withSim(p, func(o *sim.Own) { o.CopyGBps = -1 }) }, "CopyGBps", "--sim-copy -1: must be a positive bandwidth"},
		{"inter alpha on one server", func(p *Plan) { withSim(p, func(o *sim.Own) { o.InterAlpha = time.Microsecond }) }, "InterAlpha",
			"--sim-alpha inter=: a link between servers needs --topology with more than one server"},
		{"corrupt without payload", func(p *Plan) {
			p.NoPayload, p.Check, p.InjectText = true, true, "corrupt=op:3"
			p.Inject, _ = inject.Parse(p.InjectText)
		}, "InjectText", `--inject "corrupt=op:3": corrupt changes the bytes of messages, and with --sim-data=false they have none`},
		{"memory: buffers", onShm(func(p *Plan) { p.MaxBytes, p.MemLimit = 1<<40, 8<<30 }), "MaxBytes",
			"--maxbytes 1099511627776" + memory + "…available: use a smaller -e"},
		{"memory: buffers on sim", func(p *Plan) { p.MaxBytes, p.MemLimit = 1<<40, 8<<30 }, "MaxBytes",
			"--maxbytes 1099511627776" + memory + "…available: use a smaller -e, or --sim-data=false"},
		{"memory: link probe", onShm(func(p *Plan) { p.Ranks, p.LinkSource, p.MemLimit = 4096, LinkAuto, 600<<20 }), "LinkGBps",
			"--link-bw auto" + memory + "…available: give the link's bandwidth (e.g. --link-bw hccs)"},
		{"memory: links", onShm(func(p *Plan) { p.Ranks, p.Ops, p.Algo, p.MemLimit = 4096, []coll.Op{coll.AllToAll}, "pairwise", 8<<30 }), "Ranks",
			"--ranks 4096" + memory + "…available: use fewer ranks or a smaller -e"},
		{"memory: calibration", onShm(func(p *Plan) { p.Ranks, p.Algo, p.MemLimit = 64, "auto", 64<<20 }), "Algo",
			"--algo auto" + memory + "…available: name an algorithm (e.g. --algo ring)"},
		{"memory: samples", onShm(func(p *Plan) { p.Ranks, p.Iters, p.MemLimit = 4096, 1000000, 8<<30 }), "Iters",
			"--iters 1000000" + memory + "…available: use a smaller -n or fewer ranks"},
		{"memory: samples of a benchtime", onShm(func(p *Plan) { p.Ranks, p.BenchTime, p.MemLimit = 4096, time.Hour, 8<<30 }), "BenchTime",
			"--benchtime 1h0m0s" + memory + "…available: use -n, or fewer ranks (a row runs up to 1000000 iterations)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := simPlan(1024)
			tc.edit(&p)
			err := p.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("%q names a flag", err.Error())
			}
			var fe *fielderr.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("%v: no *fielderr.FieldError naming %s (got %v)", err, tc.field, fe)
			}
			got := fielderr.FormatFields(err, testFlags)
			start, end, cut := strings.Cut(tc.flags, "…")
			if !cut && got != tc.flags || cut && (!strings.HasPrefix(got, start) || !strings.HasSuffix(got, end)) {
				t.Errorf("with flags:\n got %q\nwant %q", got, tc.flags)
			}
		})
	}
}
