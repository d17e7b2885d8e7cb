package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
)

// control is a rank's end of the control plane of a world set up to run
// failed calls again (Config.Retry): a star of connections around rank 0,
// the ones the rendezvous used, apart from the links whose failures it
// recovers from. Rank 0 hosts the hub that collects every rank's votes and
// relays failures; every other rank sends its votes to rank 0 and waits
// for the verdicts.
type control struct {
	ep *endpoint
	// conns: on rank 0, by rank (nil at 0); on other ranks, conns[0] is
	// the connection to rank 0.
	conns []*ctlConn

	// hub collects the votes (rank 0 only).
	hub *agree.Hub

	// The other ranks' side. verdicts carries the verdicts read from rank
	// 0 to the waiting Agree or Recover; gone is closed once rank 0 is
	// gone, goneErr (set before) says how.
	verdicts chan controlMsg
	gone     chan struct{}
	goneErr  error

	// agreeing is set while this rank waits for a verdict: its control
	// readers then poll rather than park, as a link's reader does.
	agreeing atomic.Int32
}

// verdictBacklog is how many verdicts a rank holds that nobody has asked
// for yet: one is due at a time, the rest are left from rounds given up.
const verdictBacklog = 4

// startControl turns the rendezvous connections into the control plane
// and starts reading them: on rank 0, conns holds one per rank (nil at 0);
// on the other ranks, the one to rank 0.
func (ep *endpoint) startControl(conns []net.Conn) {
	c := &control{ep: ep}
	ep.ctl = c
	if ep.rank != 0 {
		c.verdicts = make(chan controlMsg, verdictBacklog)
		c.gone = make(chan struct{})
		c.conns = []*ctlConn{{peer: 0, conn: conns[0]}}
		ep.wg.Add(1)
		go c.listen(c.conns[0])
		return
	}
	c.hub = agree.NewHub(ep.size, c.relay)
	c.conns = make([]*ctlConn, ep.size)
	for r := 1; r < ep.size; r++ {
		c.conns[r] = &ctlConn{peer: r, conn: conns[r]}
	}
	ep.wg.Add(ep.size - 1)
	for _, cc := range c.conns[1:] {
		go c.serve(cc)
	}
}

// pollState tells the control readers to poll for a message while this
// rank waits for a verdict (see pollReader), and to stop once the endpoint
// closes.
func (c *control) pollState() (posted, filling, ended bool) {
	return c.agreeing.Load() > 0, false, c.closing()
}

// closing reports whether the endpoint is closing.
func (c *control) closing() bool {
	select {
	case <-c.ep.closed:
		return true
	default:
		return false
	}
}

// serve is rank 0's reader of rank cc.peer's control connection: it casts
// each vote that arrives in the hub and sends back the verdict. When the
// connection fails, rank cc.peer is gone: every round ends with a fatal
// verdict naming it.
//
// The hub waits under no context. Close ends every open round itself, with
// hub.Lose, rather than by cancelling: a cancelled Submit may return the
// cancellation even for a round already decided, and a rank waiting for
// the verdict of a run's last call would then fail as rank 0 ends.
func (c *control) serve(cc *ctlConn) {
	defer c.ep.wg.Done()
	defer cc.conn.Close()
	in := bufio.NewReader(newPollReader(cc.conn, c.pollState, c.ep.writersBusy))
	var hdr [HeaderSize]byte
	buf := make([]byte, ctlFixedSize+maxAbort)
	for {
		m, err := readControl(in, &hdr, buf, c.ep.size)
		if err == nil && (m.Type != ctlVote || m.Vote.Rank != cc.peer) {
			err = fmt.Errorf("%w: a %s carrying rank %d's vote, where rank %d's vote was due",
				ErrBadFrame, m.Type, m.Vote.Rank, cc.peer)
		}
		if err != nil {
			c.lost(cc, "reading", err)
			return
		}
		verdict, err := c.hub.Submit(context.Background(), m.Round, m.Vote)
		if err != nil {
			// A vote the hub refuses (cast twice): the voter learns why.
			verdict = backends.Vote{Rank: cc.peer, Outcome: backends.Fatal, Err: err.Error()}
		}
		if err := cc.send(controlMsg{Type: ctlVerdict, Round: m.Round, Vote: verdict}); err != nil {
			c.lost(cc, "writing", err)
			return
		}
	}
}

// lost records on rank 0 that rank cc.peer's control connection failed
// with err (while what), unless the endpoint is closing.
func (c *control) lost(cc *ctlConn, what string, err error) {
	if c.closing() {
		return
	}
	why := errors.New("its control connection closed")
	if !errors.Is(err, io.EOF) {
		why = fmt.Errorf("%s its control connection: %w", what, err)
		c.ep.logf("control connection to rank %d: %v", cc.peer, why)
	}
	c.hub.Lose(cc.peer, why)
}

// relay is rank 0's hub relay: it passes a failure vote on call r.Seq to
// this rank's watcher and every other rank. A rank it cannot reach is
// left to the reader of its connection.
func (c *control) relay(r agree.Round, v backends.Vote) {
	c.ep.watcher.Report(r.Seq, v)
	m := controlMsg{Type: ctlRelay, Round: r, Vote: v}
	for _, cc := range c.conns {
		if cc != nil {
			_ = cc.send(m)
		}
	}
}

// listen is the reader of a rank's control connection to rank 0: relayed
// failures go to the watcher, verdicts to the waiting Agree or Recover.
// When the connection fails, rank 0 is gone, and with it every later
// round: the watched call stops and Agree and Recover fail.
func (c *control) listen(cc *ctlConn) {
	defer c.ep.wg.Done()
	defer cc.conn.Close()
	in := bufio.NewReader(newPollReader(cc.conn, c.pollState, c.ep.writersBusy))
	var hdr [HeaderSize]byte
	buf := make([]byte, ctlFixedSize+maxAbort)
	for {
		m, err := readControl(in, &hdr, buf, c.ep.size)
		if err == nil {
			switch m.Type {
			case ctlRelay:
				c.ep.watcher.Report(m.Round.Seq, m.Vote)
				continue
			case ctlVerdict:
				c.deliver(m)
				continue
			}
			err = fmt.Errorf("%w: rank 0 sent a %s", ErrBadFrame, m.Type)
		}
		if c.closing() {
			return
		}
		why := fmt.Errorf("%w: rank 0, which coordinates retries, closed the control connection", backends.ErrPeerGone)
		if !errors.Is(err, io.EOF) {
			why = fmt.Errorf("%w: the control connection to rank 0, which coordinates retries, failed: %w", backends.ErrPeerGone, err)
			c.ep.logf("%v", why)
		}
		c.goneErr = why
		close(c.gone)
		c.ep.watcher.Report(c.ep.watchSeq.Load(), c.goneVote())
		return
	}
}

// goneVote is the failure reported for the watched call once rank 0 is
// gone. Only after c.gone is closed.
func (c *control) goneVote() backends.Vote {
	return backends.Vote{Rank: 0, Outcome: backends.Fatal, Err: c.goneErr.Error()}
}

// deliver hands a verdict to the waiting Agree or Recover. Verdicts of
// rounds given up on may pile up: the oldest make room.
func (c *control) deliver(m controlMsg) {
	for {
		select {
		case c.verdicts <- m:
			return
		default:
		}
		select {
		case <-c.verdicts:
		default:
		}
	}
}

// ask casts v in round r at rank 0 and waits for the verdict (every rank
// but rank 0).
func (c *control) ask(ctx context.Context, r agree.Round, v backends.Vote) (backends.Vote, error) {
	select {
	case <-c.gone:
		return backends.Vote{}, fmt.Errorf("%s: %w", r, c.goneErr)
	default:
	}
	if err := c.conns[0].send(controlMsg{Type: ctlVote, Round: r, Vote: v}); err != nil {
		return backends.Vote{}, fmt.Errorf("%s: %w: %w", r, backends.ErrPeerGone, err)
	}
	for {
		select {
		case m := <-c.verdicts:
			if m.Round == r {
				return m.Vote, nil
			}
		case <-c.gone:
			// The verdict may have come just before the end.
			for len(c.verdicts) > 0 {
				if m := <-c.verdicts; m.Round == r {
					return m.Vote, nil
				}
			}
			return backends.Vote{}, fmt.Errorf("%s: %w", r, c.goneErr)
		case <-ctx.Done():
			return backends.Vote{}, fmt.Errorf("%s: %w: no verdict from rank 0", r, backends.ContextError(ctx))
		case <-c.ep.closed:
			return backends.Vote{}, fmt.Errorf("%s: %w", r, backends.ErrClosed)
		}
	}
}

// shutdown ends the control plane as the endpoint closes. Rank 0 ends
// every open round (rank 0 is gone) and lets its readers send the
// verdicts already decided before they close their connections; another
// rank just closes its connection.
func (c *control) shutdown() {
	if c.hub == nil {
		c.conns[0].conn.Close()
		return
	}
	c.hub.Lose(0, backends.ErrClosed)
	for _, cc := range c.conns[1:] {
		// Wakes a reader waiting for a vote; it then finds the
		// endpoint closing and closes the connection.
		_ = cc.conn.SetReadDeadline(time.Unix(1, 0))
	}
}
