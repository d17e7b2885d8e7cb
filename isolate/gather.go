package isolate

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
)

// maxReportBytes bounds one rank's results as rank 0 accepts them: a
// few hundred bytes a measurement, for a plan of a few thousand.
const maxReportBytes = 16 << 20

// tagGather announces on t, where t carries calls, the call that the
// results of gathering phase travel in (backends.CallTagger), set alike on
// both sides: the endpoint would otherwise stamp them with the last
// measurement's call, which differs from rank to rank.
func tagGather(t backends.Transport, phase int) {
	if tg, ok := t.(backends.CallTagger); ok {
		tg.BeginCall(backends.Call{Seq: 1<<62 + uint64(phase), Root: 0, Count: -1})
	}
}

// report sends this rank's results to rank 0 by ctx's deadline: their
// length, then their JSON. A rank that cannot reach rank 0 gives up at
// the deadline, and drops the link, whose order of messages is then
// unknown; its peers report the measurements it took part in.
func (s *search) report(ctx context.Context, phase int) {
	data, err := json.Marshal(rankReport{Ran: s.ran, Stopped: s.stopped, Results: s.results})
	if err != nil {
		return
	}
	tagGather(s.t, phase)
	var hdr [8]byte
	binary.LittleEndian.PutUint64(hdr[:], uint64(len(data)))
	err = s.t.Send(0, hdr[:]).Wait(ctx)
	if err == nil {
		err = s.t.Send(0, data).Wait(ctx)
	}
	if err != nil {
		s.drop(0, fmt.Errorf("isolate: %w: rank %d's results did not reach rank 0: %v", backends.ErrPeerGone, s.rank, err))
	}
}

// drop drops the link to peer, where the transport can.
func (s *search) drop(peer int, why error) {
	if d, ok := s.t.(backends.LinkDropper); ok {
		d.DropLink(peer, why)
	}
}

// rankReport is what a rank sends rank 0.
type rankReport struct {
	Ran     int      `json:"ran"`               // slots run to their end
	Stopped string   `json:"stopped,omitempty"` // what stopped this rank, "" if nothing did
	Results []result `json:"results"`
}

// collect gathers every rank's results at rank 0 by ctx's deadline, its
// own among them, and says of each rank it did not hear from why; ran is
// the fewest slots any rank heard from ran to their end, and stopped what
// stopped the first of the ranks that ran that few ("rank 5: SIGTERM
// received"), "" if none was stopped.
func (s *search) collect(ctx context.Context, phase int) (all []result, ran int, missing map[int]string, stopped string) {
	all = append(all, s.results...)
	ran = s.ran
	if s.stopped != "" {
		stopped = s.stopped
	}
	missing = map[int]string{}
	n := s.t.Size()
	tagGather(s.t, phase)
	hdrs := make([][]byte, n)
	reqs := make([]backends.Request, n)
	for r := 1; r < n; r++ {
		hdrs[r] = make([]byte, 8)
		reqs[r] = s.t.Recv(r, hdrs[r])
	}
	for r := 1; r < n; r++ {
		if err := reqs[r].Wait(ctx); err != nil {
			missing[r] = err.Error()
			s.drop(r, fmt.Errorf("isolate: %w: rank %d's results did not reach rank 0: %v", backends.ErrPeerGone, r, err))
			continue
		}
		size := binary.LittleEndian.Uint64(hdrs[r])
		if size > maxReportBytes {
			missing[r] = fmt.Sprintf("a report of %d bytes, more than %d", size, maxReportBytes)
			continue
		}
		data := make([]byte, size)
		if err := s.t.Recv(r, data).Wait(ctx); err != nil {
			missing[r] = err.Error()
			s.drop(r, fmt.Errorf("isolate: %w: rank %d's results did not reach rank 0: %v", backends.ErrPeerGone, r, err))
			continue
		}
		var theirs rankReport
		if err := json.Unmarshal(data, &theirs); err != nil {
			missing[r] = fmt.Sprintf("its report: %v", err)
			continue
		}
		n := max(theirs.Ran, 0)
		if theirs.Stopped != "" && (stopped == "" || n < ran) {
			stopped = fmt.Sprintf("rank %d: %s", r, theirs.Stopped)
		}
		ran = min(ran, n)
		for _, res := range theirs.Results {
			if res.M >= 0 && res.M < len(s.p.meas) && res.Rank == r {
				all = append(all, res)
			}
		}
	}
	return all, ran, missing, stopped
}
