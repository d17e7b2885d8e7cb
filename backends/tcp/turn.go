package tcp

import (
	"errors"
	"os"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// turnHold is how long a large frame keeps the rank's turn (bigTurn)
// while it streams: long enough for a frame of several megabytes to go
// out whole before the next starts, and short enough that a frame whose
// receiver does not read yet (it has not posted its receive) holds the
// rank's other frames back only briefly. 8 ranks on 2 CPUs, 64 MiB
// direct all-to-all, 4 interleaved runs: 5 ms 199 ms median, 50 ms 178,
// 500 ms 177, against 230 without turns.
const turnHold = 50 * time.Millisecond

// writeInTurn writes a large frame with raw writev calls (writevAll)
// while holding the rank's turn to stream, so that on an oversubscribed
// host a rank feeds one socket at a time, as the cost model's SenderMoves
// has it: a rank that posts sends to seven peers at once (a direct
// all-to-all) would otherwise fill seven socket buffers side by side,
// and over loopback the kernel then holds every rank's buffers in flight
// at once, some hundreds of megabytes at 8 ranks. After turnHold the
// frame gives the turn up and queues for it again, so a send whose peer
// does not read never stops the rank's others for longer.
func (l *link) writeInTurn(hdr, payload []byte) error {
	for {
		select {
		case l.ep.bigTurn <- struct{}{}:
		case <-l.ep.closed:
			return backends.ErrClosed
		}
		if err := l.conn.SetWriteDeadline(time.Now().Add(turnHold)); err != nil {
			<-l.ep.bigTurn
			return err
		}
		n, err := l.wr.writevSome(hdr, payload)
		_ = l.conn.SetWriteDeadline(time.Time{})
		<-l.ep.bigTurn
		k := min(n, len(hdr))
		hdr, payload = hdr[k:], payload[n-k:]
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
	}
}
