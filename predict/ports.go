package predict

import (
	"math"
	"slices"

	"github.com/hccl-test/hccl-test/clustermodel"
)

// PortsTry is one choice of whose the link between servers is, fitted.
type PortsTry struct {
	Ports string // clustermodel.PortsRank or PortsServer
	// RMSPct is the root mean square of the logarithmic errors of every
	// fitted row's time under the best model of this choice, as a
	// percentage (exp(rms)-1).
	RMSPct float64
}

// CoresTry is one number of CPUs shared by a server's ranks, fitted.
type CoresTry struct {
	Cores  int     // clustermodel.Model.Cores
	RMSPct float64 // as PortsTry's
}

// portsTold is how much lower, relatively, one choice's sum of squared
// logarithmic errors must be than the other's for fit to say the rows
// tell them apart: 5%. Below it the two fit alike (a world of several
// servers of one width cannot tell one link a server from a link a rank
// of a fitted bandwidth PerServer times larger), and the model keeps a
// link a rank, the default.
const portsTold = 0.05

// fitPorts fits m to samples once for each number of shared CPUs the fit
// tries (coreCounts of most, cpu) and, where the samples hold a world of
// several servers of several ranks, for each choice of whose the link
// between servers is, and leaves in m the best, in f the choices and
// whether the rows told them apart.
func (f *Fit) fitPorts(m *clustermodel.Model, samples []Sample, most int, cpu bool) {
	// On CPU backends the ranks share the CPUs, and on a busy machine they
	// get fewer than it has: the number that fits best, of the powers of
	// two below most and most. The ranks of a server may each have a
	// link between servers (a NIC a GPU) or share their server's one (a
	// NIC a host); worlds of several servers of two widths (2 x 1 and
	// 2 x 2) show which: a link a rank carries the same per rank at
	// both, a shared one half as much at 2 ranks a server. There fit fits
	// both and keeps the one the rows tell apart, a rank's where they do
	// not. Worlds of one width cannot tell: a shared link is a link a rank
	// of a bandwidth that many times smaller, save for how our algorithms
	// happen to cross servers, which is no evidence of the cluster's
	// links (on issue #309's logs of 2 x 8 alone it chose a shared one and
	// predicted 8 x 8 worse); the model keeps a link a rank.
	ports := []string{""}
	if len(widths(samples)) > 1 {
		ports = []string{clustermodel.PortsRank, clustermodel.PortsServer}
	}
	fits := make([]clustermodel.Model, len(ports))
	sums := make([]float64, len(ports))
	cores := make([][]CoresTry, len(ports))
	rms := func(sum float64) float64 { return 100 * math.Expm1(math.Sqrt(sum/float64(len(samples)))) }
	hostStart := 0.0
	if cpu {
		hostStart = hostRate(samples)
	}
	var hosts []HostTry
	for i, p := range ports {
		sums[i] = math.Inf(1)
		for _, c := range coreCounts(most, cpu) {
			try := *m
			try.Cores = c
			try.Inter = &clustermodel.Level{Ports: p}
			fitModel(&try, samples, nil)
			sum := cost(&try, samples)
			if hostStart > 0 {
				// The same with a host's rate shared by its ranks, kept
				// only where it fits the rows better by hostTold.
				host, hsum := fitHost(try, samples, hostStart)
				hosts = append(hosts, HostTry{Cores: c, Ports: p, GBps: host.HostGBps, RMSPct: rms(hsum), NoneRMSPct: rms(sum)})
				if hsum < sum*(1-hostTold) {
					sum, try = hsum, host
					hosts[len(hosts)-1].Told = true
				}
			}
			if sum < sums[i] {
				sums[i], fits[i] = sum, try
			}
			cores[i] = append(cores[i], CoresTry{Cores: c, RMSPct: rms(sum)})
		}
		if p != "" {
			f.Ports = append(f.Ports, PortsTry{Ports: p, RMSPct: rms(sums[i])})
		}
	}
	pick := 0
	if len(ports) == 2 && sums[1] < sums[0]*(1-portsTold) {
		pick, f.PortsTold = 1, true
	} else if len(ports) == 2 {
		f.PortsTold = sums[0] < sums[1]*(1-portsTold)
	}
	*m = fits[pick]
	if cpu {
		f.Cores = cores[pick]
		for _, h := range hosts {
			if h.Cores == m.Cores && h.Ports == ports[pick] {
				f.Host = h
			}
		}
	}
}

// widths returns the distinct numbers of ranks a server of samples'
// worlds of several servers, smallest first.
func widths(samples []Sample) []int {
	var out []int
	for _, s := range samples {
		if s.World.Servers > 1 && !slices.Contains(out, s.World.PerServer) {
			out = append(out, s.World.PerServer)
		}
	}
	slices.Sort(out)
	return out
}
