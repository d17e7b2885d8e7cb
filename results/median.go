package results

import (
	"math"
	"slices"
)

// Median is a Sink for a sweep repeated Runs times (--runs): it passes on,
// for each row, one record holding the median over the runs of each time
// statistic, with the bandwidths recomputed from the median time and the
// wrong elements of all runs added up. A row is passed on as soon as its
// last run has been measured; at End, rows that an interrupted run left
// with fewer samples are passed on with what they have.
type Median struct {
	next  Sink
	runs  int
	rows  map[Key][]Record
	order []Key // rows in the order they were first measured
	done  map[Key]bool
}

// NewMedian returns a Median that writes to next.
func NewMedian(next Sink, runs int) *Median {
	return &Median{next: next, runs: max(runs, 1), rows: map[Key][]Record{}, done: map[Key]bool{}}
}

// Begin implements Sink.
func (m *Median) Begin(h Header) error { return m.next.Begin(h) }

// Write implements Sink.
func (m *Median) Write(r Record) error {
	k := r.Key()
	if _, seen := m.rows[k]; !seen {
		m.order = append(m.order, k)
	}
	m.rows[k] = append(m.rows[k], r)
	if len(m.rows[k]) < m.runs {
		return nil
	}
	m.done[k] = true
	return m.next.Write(median(m.rows[k]))
}

// End implements Sink.
func (m *Median) End(s Summary) error {
	for _, k := range m.order {
		if !m.done[k] {
			if err := m.next.Write(median(m.rows[k])); err != nil {
				return err
			}
		}
	}
	return m.next.End(s)
}

// median combines the records of one row.
func median(rs []Record) Record {
	out := rs[len(rs)-1]
	if len(rs) == 1 {
		return out
	}
	pick := func(f func(Record) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	time := pick(func(r Record) float64 { return r.TimeUS })
	if out.TimeUS > 0 && time > 0 {
		scale := out.TimeUS / time // bandwidths scale inversely with time
		out.AlgBW *= scale
		out.BusBW *= scale
		if !math.IsNaN(out.Util) {
			out.Util *= scale
		}
	}
	out.TimeUS = time
	out.MinUS = pick(func(r Record) float64 { return r.MinUS })
	out.P50US = pick(func(r Record) float64 { return r.P50US })
	out.P99US = pick(func(r Record) float64 { return r.P99US })
	out.MaxUS = pick(func(r Record) float64 { return r.MaxUS })
	out.StdDevUS = pick(func(r Record) float64 { return r.StdDevUS })
	out.CPUUS = pick(func(r Record) float64 { return r.CPUUS })
	out.Wrong = 0
	for _, r := range rs {
		if r.Wrong < 0 {
			out.Wrong = -1
			break
		}
		out.Wrong += r.Wrong
	}
	if out.FusionSpeedup > 0 {
		out.FusionSpeedup = pick(func(r Record) float64 { return r.FusionSpeedup })
	}
	if out.ComputeUS > 0 {
		out.ComputeUS = pick(func(r Record) float64 { return r.ComputeUS })
		out.TotalUS = pick(func(r Record) float64 { return r.TotalUS })
		out.OverlapEff = pick(func(r Record) float64 { return r.OverlapEff })
	}
	out.Retries, out.Injected = 0, 0
	for _, r := range rs {
		out.Retries += r.Retries
		out.Injected += r.Injected
	}
	out.Run = 0
	return out
}
