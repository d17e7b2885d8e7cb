package results

import (
	"bytes"
	"math"
	"slices"
)

// perIterJSON is the ,"KEY":{...} nccl-tests 2.19 writes after a
// placement's measurement under -I (its writePerIterReport), or "" when r
// is nil or carries no iteration times: skipped_iterations (always 0, -K
// is refused here), min_us, max_us, avg_us, p50_us, p95_us, p99_us,
// stdev_us and cv_pct of times_us, each iteration's time on the slowest
// rank; and per_process_max_times_us, each process's slowest rank per
// iteration, when the ranks run in more than one process.
func (j *NCCLJSON) perIterJSON(key string, r *Record) string {
	if r == nil || len(r.RankIterUS) == 0 {
		return ""
	}
	iters := len(r.RankIterUS[0])
	times := slowestPerIter(r.RankIterUS, iters)
	perProcess := j.run.PerProcess
	if j.run.InProcess {
		perProcess = len(r.RankIterUS)
	}
	perProcess = max(perProcess, 1)
	var b bytes.Buffer
	b.WriteString(`,` + jstr(key) + `:{"skipped_iterations":0`)
	st := iterStats(times)
	for _, f := range []struct {
		name string
		v    float64
	}{{"min_us", st.min}, {"max_us", st.max}, {"avg_us", st.avg}, {"p50_us", st.p50}, {"p95_us", st.p95},
		{"p99_us", st.p99}, {"stdev_us", st.stdev}, {"cv_pct", st.cv}} {
		b.WriteString(`,` + jstr(f.name) + `:` + jnum(f.v))
	}
	b.WriteString(`,"times_us":`)
	jlist(&b, times)
	if procs := (len(r.RankIterUS) + perProcess - 1) / perProcess; procs > 1 {
		b.WriteString(`,"per_process_max_times_us":[`)
		for p := range procs {
			if p > 0 {
				b.WriteByte(',')
			}
			jlist(&b, slowestPerIter(r.RankIterUS[p*perProcess:min((p+1)*perProcess, len(r.RankIterUS))], iters))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

// slowestPerIter is each iteration's time on the slowest of ranks.
func slowestPerIter(ranks [][]float64, iters int) []float64 {
	out := make([]float64, iters)
	for i := range out {
		for _, s := range ranks {
			out[i] = max(out[i], s[i])
		}
	}
	return out
}

// perIterStats are the figures nccl-tests' computeIterStats gives.
type perIterStats struct{ min, max, avg, p50, p95, p99, stdev, cv float64 }

// iterStats computes them as nccl-tests does: p50 the element at n/2 of
// the sorted times, p95 and p99 at min(n-1, ceil(n*p/100)-1), the
// standard deviation of the population, cv its percentage of the mean (0
// for a mean of 0).
func iterStats(times []float64) perIterStats {
	n := len(times)
	if n == 0 {
		return perIterStats{}
	}
	s := slices.Clone(times)
	slices.Sort(s)
	pct := func(p int) float64 { return s[min(n-1, (n*p+99)/100-1)] }
	var sum float64
	for _, t := range s {
		sum += t
	}
	st := perIterStats{min: s[0], max: s[n-1], p50: s[n/2], p95: pct(95), p99: pct(99), avg: sum / float64(n)}
	var v float64
	for _, t := range s {
		v += (t - st.avg) * (t - st.avg)
	}
	st.stdev = math.Sqrt(v / float64(n))
	if st.avg > 0 {
		st.cv = st.stdev / st.avg * 100
	}
	return st
}

// jlist writes xs as a JSON list of numbers.
func jlist(b *bytes.Buffer, xs []float64) {
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jnum(x))
	}
	b.WriteByte(']')
}
