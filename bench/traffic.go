package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/traffic"
)

// The counts of the variable-size collectives (alltoallv, allgatherv,
// reducescatterv) come from Sweep.Traffic, a traffic.Spec: a matrix file,
// nccl-tests' generated pattern or a routing drawn from a seed. Every
// process draws the same matrices from the spec alone (traffic.Generator),
// so the ranks agree on the counts without exchanging them; a rank whose
// counts differ fails the call's signature (coll.Counts.Digest).
//
// A routing drawn anew every iteration (draw=iter) is drawn before the row
// starts, never inside the timed loop: MaxDraws matrices a row at most,
// iteration i (warm-up, timed and checked alike) running on draw i mod
// that many.

// MaxDraws is the most matrices one row draws; its iterations take them in
// turn.
const MaxDraws = 16

// trafficSpec returns the plan's traffic: Sweep.Traffic, or with none
// given nccl-tests' generated pattern, as alltoallv_perf runs without its
// variables.
func (p *Plan) trafficSpec() traffic.Spec {
	if p.Traffic.Kind != "" {
		return p.Traffic
	}
	sp := traffic.DefaultSpec(traffic.Spread)
	sp.Tokens = 0
	return sp
}

// variableOps reports whether the plan sweeps a variable-size collective.
func (p *Plan) variableOps() bool {
	for _, op := range p.Ops {
		if op.Desc().Variable() {
			return true
		}
	}
	return false
}

// drawBytes is what each rank sends in the matrix of a row of op of size
// bytes on n ranks: alltoallv's size is what a rank sends; allgatherv's
// and reducescatterv's is the total of all the blocks, the matrix's, so
// each rank sends size/n of it.
func drawBytes(op coll.Op, n int, size int64) int64 {
	if op == coll.AllToAllV {
		return size
	}
	return size / int64(n)
}

// drawCount is how many matrices a row of p draws.
func (p *Plan) drawCount(g *traffic.Generator) int {
	if g.Fixed() {
		return 1
	}
	return max(min(MaxDraws, p.Warmup+p.Iters*p.aggIters()+p.checkRuns()), 1)
}

// validateTraffic checks the traffic of a plan with a variable-size
// collective on every group size it runs in, before any rank starts: the
// spec against the ranks (its file read here), the largest size against
// its limits, a matrix file's or a fixed routing's sizes against a sweep
// of sizes, and the row shapes the counts cannot take.
func (p *Plan) validateTraffic() error {
	if !p.variableOps() {
		return nil
	}
	for _, gname := range p.groupList() {
		n := p.GroupSize(gname)
		if n > coll.MaxCountRanks {
			return fielderr.FieldErrorf("Traffic", " %s: %d ranks: the variable-size collectives hold the counts of at most %d ranks", p.trafficSpec(), n, coll.MaxCountRanks)
		}
		g, err := generator(p.trafficSpec(), n)
		if err != nil {
			return fielderr.FieldErrorf("Traffic", ": %v", err)
		}
		if err := g.Check(p.MaxBytes); err != nil {
			return fielderr.FieldErrorf("Traffic", ": %v", err)
		}
		if !g.Sized() && p.MinBytes != p.MaxBytes {
			return fielderr.FieldErrorf("Traffic", " %s: its sizes are its own, not the row's (a file, bytes= or tokens=): give %s equal to %s, as nccl-tests asks of a matrix file, or tokens=0 to size a routing by the row",
				p.trafficSpec(), fielderr.Field("MinBytes"), fielderr.Field("MaxBytes"))
		}
	}
	inPlaceless := func(op coll.Op) bool { return op.Desc().InPlace == coll.NoInPlace }
	if !slices.Contains(p.Placements, OutOfPlace) && !slices.ContainsFunc(p.Ops, func(op coll.Op) bool { return !inPlaceless(op) }) {
		// With other collectives, the in-place rows of alltoallv are
		// left out (Rows); alone, it would have none.
		return fielderr.FieldErrorf("Placements", ": alltoallv has no in-place call (nor has nccl-tests'): measure it out of place")
	}
	if len(p.Fusion) > 0 && !slices.ContainsFunc(p.Ops, func(op coll.Op) bool { return !op.Desc().Variable() }) {
		return fielderr.FieldErrorf("Fusion", " %v: a variable-size collective's counts do not split into buckets (with other collectives, its rows are measured whole)", p.Fusion)
	}
	return nil
}

// draw is one matrix of a row: its counts in elements, and its figures.
type draw struct {
	counts *coll.Counts
	sum    traffic.Summary
	m      *traffic.Matrix // the matrix, in bytes
}

// drawKey names one draw: the matrix of iteration iter at drawBytes, in
// elements of es bytes.
type drawKey struct {
	spec  string
	n, es int
	bytes int64
	iter  int
}

// drawCache holds the generators and draws of this process, so that the
// ranks of one process draw each matrix once and share its counts.
var drawCache struct {
	sync.Mutex // guards the maps
	gens       map[string]*traffic.Generator
	draws      map[drawKey]*draw
}

// maxCachedDraws bounds the draws kept; past it the cache starts again
// (a rank behind the others draws again, which costs time, not results).
const maxCachedDraws = 4 * MaxDraws

// generator returns the process's generator of sp on n ranks, reading a
// matrix file once.
func generator(sp traffic.Spec, n int) (*traffic.Generator, error) {
	key := fmt.Sprintf("%s/%d", sp, n)
	drawCache.Lock()
	defer drawCache.Unlock()
	if g, ok := drawCache.gens[key]; ok {
		return g, nil
	}
	g, err := traffic.NewGenerator(sp, n)
	if err != nil {
		return nil, err
	}
	if drawCache.gens == nil {
		drawCache.gens = map[string]*traffic.Generator{}
	}
	drawCache.gens[key] = g
	return g, nil
}

// drawOf returns iteration iter's matrix of g for a row of op of size
// bytes with elements of es bytes.
func drawOf(g *traffic.Generator, op coll.Op, es int, size int64, iter int) (*draw, error) {
	if g.Fixed() {
		iter = 0
	}
	bytes := drawBytes(op, g.Ranks(), size)
	key := drawKey{spec: g.Spec().String(), n: g.Ranks(), es: es, bytes: bytes, iter: iter}
	drawCache.Lock()
	defer drawCache.Unlock()
	if d, ok := drawCache.draws[key]; ok {
		return d, nil
	}
	m, err := g.Matrix(iter, bytes)
	if err != nil {
		return nil, err
	}
	counts, err := coll.CountsOfBytes(g.Ranks(), es, m.At)
	if err != nil {
		return nil, err
	}
	if drawCache.draws == nil || len(drawCache.draws) >= maxCachedDraws {
		drawCache.draws = map[drawKey]*draw{}
	}
	d := &draw{counts: counts, sum: traffic.Summarize(m), m: m}
	drawCache.draws[key] = d
	return d, nil
}

// drawnRows returns the rows that row's iterations take in turn: row
// itself for a collective of fixed size, else one per draw with its
// counts.
func (p *Plan) drawnRows(row Row, n int) ([]Row, []*draw, error) {
	if !row.Op.Desc().Variable() {
		return []Row{row}, nil, nil
	}
	g, err := generator(p.trafficSpec(), n)
	if err != nil {
		return nil, nil, err
	}
	k := p.drawCount(g)
	rows, draws := make([]Row, k), make([]*draw, k)
	for i := range rows {
		d, err := drawOf(g, row.Op, row.DType.Size(), row.Bytes, i)
		if err != nil {
			return nil, nil, fmt.Errorf("traffic %s: draw %d: %w", p.trafficSpec(), i, err)
		}
		rows[i], draws[i] = row, d
		rows[i].Counts = d.counts
	}
	return rows, draws, nil
}

// variableNeed returns the larger buffer one rank of n takes for a
// variable-size op at the plan's largest size in data type dt:
// the most any rank sends or receives over the row's draws. A matrix
// grows with the size (a routing of more tokens routes the same first
// ones; the spread pattern scales), so the largest size bounds the others.
func (p *Plan) variableNeed(op coll.Op, dt dtype.DType, n int) (int64, error) {
	_, bytes := payload.RowCount(op, dt, n, p.largestSize())
	rows, _, err := p.drawnRows(Row{Op: op, DType: dt, Bytes: bytes, Count: 1}, n)
	if err != nil {
		return 0, err
	}
	return rowsNeed(rows, n), nil
}

// rowsNeed is the larger buffer any rank of n takes for any of rows.
func rowsNeed(rows []Row, n int) int64 {
	var need int64
	for _, row := range rows {
		d, es := row.Op.Desc(), row.DType.Size()
		for r := range n {
			s, rc := d.VLengths(r, row.Counts)
			need = max(need, int64(s*es), int64(rc*es))
		}
	}
	return need
}

// trafficRecord sets a variable-size row's figures from its draws: the
// bytes each rank received (min, mean, max), the imbalance and the hot
// rank, each the mean over the draws (the hot rank: of the bytes summed
// over them), and its bandwidths. alltoallv's algbw is nccl-tests 2.19's:
// the most any rank sends or receives over the time; allgatherv's and
// reducescatterv's is the total of the blocks (the gathered output, the
// scattered input) over the time, as allgather's and reducescatter's.
func trafficRecord(rec *results.Record, row Row, draws []*draw) {
	if len(draws) == 0 {
		return
	}
	k := float64(len(draws))
	var moved float64
	recv := make([]float64, draws[0].sum.Ranks)
	for _, d := range draws {
		rec.RecvMinBytes += float64(d.sum.RecvMin) / k
		rec.RecvMeanBytes += d.sum.RecvMean / k
		rec.RecvMaxBytes += float64(d.sum.RecvMax) / k
		rec.Imbalance += d.sum.Imbalance / k
		for r := range recv {
			recv[r] += float64(d.counts.Received(r))
		}
		if row.Op == coll.AllToAllV {
			moved += float64(d.sum.MaxBytes) / k
		} else {
			moved += float64(d.sum.Total) / k
		}
	}
	rec.HotRank = 0
	for r, v := range recv {
		if v > recv[rec.HotRank] {
			rec.HotRank = r
		}
	}
	if rec.TimeUS > 0 {
		bus := rec.BusBW
		rec.AlgBW = moved / (rec.TimeUS * 1e-6) / 1e9
		rec.BusBW = rec.AlgBW * row.Op.BusFactor(max(row.GroupSize, 1))
		if bus > 0 && !math.IsNaN(rec.Util) {
			rec.Util *= rec.BusBW / bus // utilization scales with busbw
		}
	}
}

// rankSummary is the block nccl-tests prints after an alltoallv row under
// NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY (Outputs.RankSummary), of the row's
// first draw over the row's time, one comment line each; nil for other
// rows, with the option off, or before a time.
func (p *Plan) rankSummary(row Row, draws []*draw, rec results.Record) ([]string, error) {
	if !p.RankSummary || row.Op != coll.AllToAllV || len(draws) == 0 || draws[0].m == nil || rec.TimeUS <= 0 {
		return nil, nil
	}
	n := draws[0].m.Ranks()
	g, err := generator(p.trafficSpec(), n)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := g.WriteRankSummary(&b, draws[0].m, drawBytes(row.Op, n, row.Bytes), rec.TimeUS*1e-6); err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"), nil
}
