package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The wire protocol. Every message on a connection is a HeaderSize-byte
// header followed by Header.Len payload bytes. The header, little-endian:
//
//	bytes  0-1  magic 'H', 'T'
//	byte   2    version (ProtocolVersion)
//	byte   3    kind (Kind)
//	byte   4    op: collective code of the call the message belongs to, 0 = none
//	byte   5    dtype: element type code, 0 = none
//	bytes  6-7  reserved, zero
//	bytes  8-15 call: call sequence number
//	bytes 16-23 seq: message sequence number on this link and direction, from 0
//	bytes 24-31 len: payload length in bytes, at most MaxPayload
//
// Any change to this layout or to the meaning of a field is a new
// ProtocolVersion: peers of different versions refuse each other at the
// first header rather than misread each other's bytes.
const (
	// ProtocolVersion is the version of the wire protocol this build
	// speaks. Version 2 added control frames (KindControl) and the link
	// epoch of the hello (Hello.Epoch).
	ProtocolVersion = 2
	// HeaderSize is the length in bytes of every frame header.
	HeaderSize = 32
	// MaxPayload is the longest payload any frame may carry, in bytes. A
	// header claiming more is rejected by ParseHeader, before anything of
	// the payload is read or allocated.
	MaxPayload = 1 << 40
)

// frameMagic opens every frame header.
var frameMagic = [2]byte{'H', 'T'}

// Errors that callers branch on with errors.Is.
var (
	// ErrBadFrame is wrapped by every error that rejects bytes as not being
	// a valid frame of this protocol version: bad magic, another version, an
	// unknown kind, non-zero reserved bytes, an oversized length, or a
	// payload that does not decode.
	ErrBadFrame = errors.New("malformed frame")
	// ErrTruncated is wrapped when a connection ended (or its deadline
	// passed) part-way through a header or payload.
	ErrTruncated = errors.New("truncated frame")
)

// Kind says what a frame carries. Its String (kind_string.go) gives the
// name after each constant, or Kind(N) for an unknown value.
type Kind uint8

//go:generate go tool stringer -type Kind -linecomment

// The frame kinds. Any other value is rejected by ParseHeader.
const (
	// KindData carries the bytes of one point-to-point message.
	KindData Kind = 1 // data
	// KindHello opens a handshake: the sender's nonce, rank, world size,
	// purpose and address (see Handshake).
	KindHello Kind = 2 // hello
	// KindProof answers a hello with proof of the shared secret.
	KindProof Kind = 3 // proof
	// KindTable carries the rendezvous table of rank addresses.
	KindTable Kind = 4 // table
	// KindAbort carries, as text, the error that made the sender stop, so
	// that its peers can say where a failure started. Its Op is
	// AbortMismatch when that error was a mismatch, so that the peer's
	// error is one too: a mismatch is never run again (--retry), where a
	// peer that merely stopped may be.
	KindAbort Kind = 5 // abort
	// KindControl carries a message of the control plane that lets the
	// ranks run a failed call again (see controlMsg): a vote, a verdict,
	// or a relayed failure. It travels only on the control connections
	// kept from the rendezvous, never on a link.
	KindControl Kind = 6 // control
)

// known reports whether k is a kind of this protocol version.
func (k Kind) known() bool { return k >= KindData && k <= KindControl }

// AbortMismatch is the Op of an abort frame sent because of a mismatch.
const AbortMismatch uint8 = 1

// AbortDisagree is the Op of the abort frame rank 0 sends, in place of
// the address table, to the ranks that joined its rendezvous when another
// rank turned out to run with other settings (backends.ErrDisagree).
const AbortDisagree uint8 = 2

// Header is the decoded fixed-size header of a frame. The magic, version and
// reserved bytes are implicit: Put writes them, ParseHeader checks them.
type Header struct {
	// Kind says what the payload is.
	Kind Kind
	// Op is the collective code of the call the frame belongs to, 0 = none.
	Op uint8
	// DType is the element type code of the payload, 0 = none.
	DType uint8
	// Call is the sequence number of the collective call.
	Call uint64
	// Seq is the frame's sequence number on its link and direction.
	Seq uint64
	// Len is the payload length in bytes.
	Len uint64
}

// Put writes the header's HeaderSize bytes into b[:HeaderSize]; it panics if
// b is shorter. It writes what it is given: a header with an unknown Kind or
// a Len above MaxPayload is the caller's bug, and the peer rejects it.
func (h Header) Put(b []byte) {
	_ = b[HeaderSize-1] // one bounds check, and a clear panic, for all writes
	b[0], b[1] = frameMagic[0], frameMagic[1]
	b[2] = ProtocolVersion
	b[3] = byte(h.Kind)
	b[4] = h.Op
	b[5] = h.DType
	b[6], b[7] = 0, 0
	binary.LittleEndian.PutUint64(b[8:16], h.Call)
	binary.LittleEndian.PutUint64(b[16:24], h.Seq)
	binary.LittleEndian.PutUint64(b[24:32], h.Len)
}

// ParseHeader decodes and validates the header in b[:HeaderSize]; bytes
// past HeaderSize are ignored. Every rejection wraps ErrBadFrame and says
// what was wrong; a version mismatch names both versions.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: header is %d bytes, need %d", ErrBadFrame, len(b), HeaderSize)
	}
	if err := checkIdentity(b[:3]); err != nil {
		return Header{}, err
	}
	h := Header{
		Kind:  Kind(b[3]),
		Op:    b[4],
		DType: b[5],
		Call:  binary.LittleEndian.Uint64(b[8:16]),
		Seq:   binary.LittleEndian.Uint64(b[16:24]),
		Len:   binary.LittleEndian.Uint64(b[24:32]),
	}
	if !h.Kind.known() {
		return Header{}, fmt.Errorf("%w: unknown kind %d", ErrBadFrame, b[3])
	}
	if b[6] != 0 || b[7] != 0 {
		return Header{}, fmt.Errorf("%w: reserved bytes are % x, must be zero", ErrBadFrame, b[6:8])
	}
	if h.Len > MaxPayload {
		return Header{}, fmt.Errorf("%w: %s frame claims %d payload bytes, limit is %d", ErrBadFrame, h.Kind, h.Len, uint64(MaxPayload))
	}
	return h, nil
}

// checkIdentity checks the magic and version bytes among the first bytes
// of a header, b (up to 3 of them; fewer check less).
func checkIdentity(b []byte) error {
	for i := 0; i < len(b) && i < len(frameMagic); i++ {
		if b[i] != frameMagic[i] {
			return fmt.Errorf("%w: magic %q, want %q (not a hccl-test peer?)", ErrBadFrame, b[:min(len(b), 2)], frameMagic[:])
		}
	}
	if len(b) > 2 && b[2] != ProtocolVersion {
		return fmt.Errorf("%w: peer speaks protocol version %d, this build speaks %d", ErrBadFrame, b[2], ProtocolVersion)
	}
	return nil
}

// ReadHeader reads exactly HeaderSize bytes from r into buf and parses them.
// The buffer is the caller's so that a reading loop allocates nothing.
//
// It returns io.EOF itself when r ends before the first byte (the peer
// closed cleanly between frames), an error wrapping ErrTruncated that says
// how many bytes arrived when r ends or fails part-way, the read error
// (wrapped) when it fails before any byte, and ParseHeader's error for
// bytes that are not a valid header. Magic and version are checked as soon
// as they arrive, so a stranger or a peer of another version that sends
// less than a header is refused at once rather than when r fails.
func ReadHeader(r io.Reader, buf *[HeaderSize]byte) (Header, error) {
	n := 0
	for n < HeaderSize {
		m, err := r.Read(buf[n:])
		if n < 3 && m > 0 {
			if bad := checkIdentity(buf[:min(n+m, 3)]); bad != nil {
				return Header{}, bad
			}
		}
		n += m
		switch {
		case err == nil:
		case n >= HeaderSize:
			// A full header arrived with the error; the next read reports it.
		case err == io.EOF && n == 0:
			return Header{}, io.EOF
		case n > 0:
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Header{}, fmt.Errorf("%w: got %d of %d header bytes: %w", ErrTruncated, n, HeaderSize, err)
		default:
			return Header{}, fmt.Errorf("read frame header: %w", err)
		}
	}
	return ParseHeader(buf[:])
}

// ReadPayload reads exactly len(dst) bytes from r into dst. When r ends or
// fails first, the error wraps ErrTruncated (and the read error) and says
// how many bytes arrived. A zero-length dst reads nothing.
func ReadPayload(r io.Reader, dst []byte) error {
	n, err := io.ReadFull(r, dst)
	if err != nil {
		return fmt.Errorf("%w: got %d of %d payload bytes: %w", ErrTruncated, n, len(dst), err)
	}
	return nil
}
