package tcp

import (
	"errors"
	"os"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// turnStall is how long a large frame may stream without a byte going
// out before it gives the rank's turn (bigTurn) up, when another frame
// waits for it: its receiver is not reading it (it has not posted its
// receive yet, being still at an earlier step), while the receiver of the
// next may be. A frame that keeps moving keeps the turn until it is out,
// so the rank feeds one socket at a time. 8 ranks on 2 CPUs, 64 MiB
// direct reduce-scatter, whose receives are posted one after another:
// against a turn held 50 ms whether the frame moved or not, median of 6
// interleaved runs 179 to 140 ms.
var turnStall = 5 * time.Millisecond

// writeInTurn writes a large frame with raw writev calls (writevAll)
// while holding the rank's turn to stream, so that on an oversubscribed
// host a rank feeds one socket at a time, as the cost model's SenderMoves
// has it: a rank that posts sends to seven peers at once (a direct
// all-to-all) would otherwise fill seven socket buffers side by side,
// and over loopback the kernel then holds every rank's buffers in flight
// at once, some hundreds of megabytes at 8 ranks. A frame that stalls
// (streamInTurn) gives the turn up and queues for it again, so a send
// whose peer does not read never stops the rank's others for longer.
func (l *link) writeInTurn(hdr, payload []byte) error {
	for {
		l.ep.turnWaiters.Add(1)
		select {
		case l.ep.bigTurn <- struct{}{}:
			l.ep.turnWaiters.Add(-1)
		case <-l.ep.closed:
			l.ep.turnWaiters.Add(-1)
			return backends.ErrClosed
		}
		err := l.streamInTurn(&hdr, &payload)
		<-l.ep.bigTurn
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
	}
}

// streamInTurn writes what is left of a frame, advancing hdr and payload,
// until it is out (nil), the write fails, or it stalls: turnStall passes
// without a byte going out while another frame waits for the turn
// (os.ErrDeadlineExceeded).
func (l *link) streamInTurn(hdr, payload *[]byte) error {
	defer func() { _ = l.conn.SetWriteDeadline(time.Time{}) }()
	for {
		if err := l.conn.SetWriteDeadline(time.Now().Add(turnStall)); err != nil {
			return err
		}
		n, err := l.wr.writevSome(*hdr, *payload)
		k := min(n, len(*hdr))
		*hdr, *payload = (*hdr)[k:], (*payload)[n-k:]
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		if n == 0 && l.ep.turnWaiters.Load() > 0 {
			return err
		}
	}
}
