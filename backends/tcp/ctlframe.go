package tcp

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
)

// ctlType says what a control frame is for. Its String (ctltype_string.go)
// names it in errors.
type ctlType uint8

//go:generate go tool stringer -type ctlType -linecomment

// The control message types. Any other value is a malformed frame.
const (
	// ctlVote: a rank's vote in a round, sent to rank 0.
	ctlVote ctlType = 1 // vote
	// ctlVerdict: a round's verdict, sent by rank 0 to a rank that voted.
	ctlVerdict ctlType = 2 // verdict
	// ctlRelay: a failure vote on a call, sent by rank 0 to every rank as
	// soon as it arrives, so that their attempts stop.
	ctlRelay ctlType = 3 // relay
)

// controlMsg is the payload of a KindControl frame: which message, the
// round it is about, and a vote (the voter's, the verdict, or the failure
// relayed).
//
// On the wire, little-endian:
//
//	byte   0     type (ctlType)
//	byte   1     round kind (agree.Kind)
//	bytes  2-9   seq: the call the round is about
//	bytes 10-13  rank of the vote
//	byte  14     outcome of the vote (backends.Outcome)
//	bytes 15-    the vote's error text, at most maxAbort bytes
//
// The frame's header carries no call: op, dtype, call and seq are 0.
type controlMsg struct {
	Type  ctlType
	Round agree.Round
	Vote  backends.Vote
}

// ctlFixedSize is the length of a control payload without its error text.
const ctlFixedSize = 1 + 1 + 8 + 4 + 1

// ctlWrite bounds each write of a control frame, so that a peer that has
// stopped reading cannot hold up the writer (and every round after).
const ctlWrite = 2 * time.Second

// appendControl appends m's payload to b, its error text cut to maxAbort
// bytes, and returns the extended slice.
func appendControl(b []byte, m controlMsg) []byte {
	msg := m.Vote.Err
	if len(msg) > maxAbort {
		msg = msg[:maxAbort]
	}
	b = append(b, byte(m.Type), byte(m.Round.Kind))
	b = binary.LittleEndian.AppendUint64(b, m.Round.Seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.Vote.Rank))
	b = append(b, byte(m.Vote.Outcome))
	return append(b, msg...)
}

// decodeControl decodes a control payload from a world of size ranks. It
// accepts exactly what appendControl writes for a message that makes
// sense (a known type, kind and outcome, a rank in the world, a relay
// only of a failure in a Verdict round); anything else wraps ErrBadFrame.
func decodeControl(p []byte, size int) (controlMsg, error) {
	if len(p) < ctlFixedSize || len(p) > ctlFixedSize+maxAbort {
		return controlMsg{}, fmt.Errorf("%w: control payload of %d bytes, want %d to %d",
			ErrBadFrame, len(p), ctlFixedSize, ctlFixedSize+maxAbort)
	}
	m := controlMsg{
		Type:  ctlType(p[0]),
		Round: agree.Round{Kind: agree.Kind(p[1]), Seq: binary.LittleEndian.Uint64(p[2:10])},
	}
	rank := binary.LittleEndian.Uint32(p[10:14])
	outcome := backends.Outcome(p[14])
	switch {
	case m.Type < ctlVote || m.Type > ctlRelay:
		return controlMsg{}, fmt.Errorf("%w: unknown control message type %d", ErrBadFrame, p[0])
	case m.Round.Kind != agree.Verdict && m.Round.Kind != agree.Recovered:
		return controlMsg{}, fmt.Errorf("%w: %s about an unknown round kind %d", ErrBadFrame, m.Type, p[1])
	case uint64(rank) >= uint64(size):
		return controlMsg{}, fmt.Errorf("%w: %s with a vote of rank %d in a world of %d", ErrBadFrame, m.Type, rank, size)
	case outcome > backends.Fatal:
		return controlMsg{}, fmt.Errorf("%w: %s with an unknown outcome %d", ErrBadFrame, m.Type, p[14])
	case m.Type == ctlRelay && (m.Round.Kind != agree.Verdict || outcome == backends.Succeeded):
		return controlMsg{}, fmt.Errorf("%w: relay of a %s vote while %s", ErrBadFrame, outcome, m.Round)
	}
	m.Vote = backends.Vote{Rank: int(rank), Outcome: outcome, Err: string(p[ctlFixedSize:])}
	return m, nil
}

// readControl reads one control frame from r and decodes it; hdr and buf
// are the caller's, reused from frame to frame. io.EOF comes back as it
// is, when r ends between frames.
func readControl(r io.Reader, hdr *[HeaderSize]byte, buf []byte, size int) (controlMsg, error) {
	h, err := ReadHeader(r, hdr)
	if err != nil {
		return controlMsg{}, err
	}
	if err := expectFrame(h, KindControl, 0); err != nil {
		return controlMsg{}, err
	}
	if h.Len > uint64(len(buf)) {
		return controlMsg{}, fmt.Errorf("%w: control frame of %d bytes, at most %d", ErrBadFrame, h.Len, len(buf))
	}
	p := buf[:h.Len]
	if err := ReadPayload(r, p); err != nil {
		return controlMsg{}, err
	}
	return decodeControl(p, size)
}

// ctlConn is one control connection: rank 0's to another rank, or a
// rank's to rank 0. Writes come from several goroutines (votes and
// verdicts, and relays), one frame at a time; one goroutine reads.
type ctlConn struct {
	peer int        // the rank at the other end
	conn net.Conn   // closed by its reader as it ends, or by Close
	mu   sync.Mutex // serializes writes
}

// send writes m as one control frame, giving up after ctlWrite.
func (c *ctlConn) send(m controlMsg) error {
	b := make([]byte, HeaderSize, HeaderSize+ctlFixedSize+len(m.Vote.Err))
	b = appendControl(b, m)
	Header{Kind: KindControl, Len: uint64(len(b) - HeaderSize)}.Put(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.conn.SetWriteDeadline(time.Now().Add(ctlWrite)); err != nil {
		return fmt.Errorf("sending a %s to rank %d: %w", m.Type, c.peer, err)
	}
	if _, err := c.conn.Write(b); err != nil {
		return fmt.Errorf("sending a %s to rank %d: %w", m.Type, c.peer, err)
	}
	return nil
}
