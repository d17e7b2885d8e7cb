package tcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Purpose says what a connection is for. Its String (purpose_string.go)
// gives the name after each constant, or Purpose(N) for an unknown value.
type Purpose uint8

//go:generate go tool stringer -type Purpose -linecomment

// The purposes a hello may state. Any other value is a malformed hello.
const (
	// PurposeRendezvous: a rank joining the world at rank 0.
	PurposeRendezvous Purpose = 1 // rendezvous
	// PurposeLink: a point-to-point data connection between two ranks.
	PurposeLink Purpose = 2 // link
)

// Hello is what a peer says about itself when a connection opens.
type Hello struct {
	// Rank is the sender's rank, in [0, Size).
	Rank int
	// Size is the number of ranks in the sender's world; both sides of a
	// connection must agree on it.
	Size int
	// Purpose says what the sender opened or accepted the connection for.
	Purpose Purpose
	// Addr is the sender's data listener address (rendezvous only; "" on
	// links), at most 256 bytes.
	Addr string
	// Epoch is the sender's link epoch: how many times its links have
	// been reset to run a failed call again (see endpoint.Recover). A link
	// connects only ranks at the same epoch, so that a connection made
	// before a reset is never attached after it. 0 on rendezvous.
	Epoch uint32
	// Agree is what the ranks of a world must agree on before they meet,
	// as the settings that decide it, one "--flag value" a line (see
	// Agreement): both sides of a connection must say the same, at most
	// 255 bytes.
	Agree string
}

// ErrAuth is wrapped by Handshake when the peer's proof of the shared secret
// is wrong, or when the peer claims this side's own rank (a reflected
// handshake).
var ErrAuth = errors.New("peer failed to prove the shared secret")

// The hello payload: nonce [16]byte, rank uint32, size uint32, purpose
// uint8, addr length uint16, addr bytes, epoch uint32, agree length
// uint8, agree bytes; little-endian.
const (
	nonceSize      = 16
	maxAddrLen     = 256
	maxAgreeLen    = 255
	helloFixedSize = nonceSize + 4 + 4 + 1 + 2 + 4 + 1
	// maxHelloSize is the longest valid hello payload. A hello frame
	// claiming more is rejected before its payload is read.
	maxHelloSize = helloFixedSize + maxAddrLen + maxAgreeLen
	proofSize    = sha256.Size
)

// proofLabel opens every proof MAC; the 2 is ProtocolVersion.
const proofLabel = "hccl-test/2 proof"

// The handshake's frames carry no call; they are numbered among themselves
// in each direction, and the connection's user numbers its own frames from
// 0 afterwards.
const (
	helloSeq = 0
	proofSeq = 1
)

// Handshake proves to the peer on a fresh conn that this side holds secret,
// checks the peer's proof, and returns the peer's hello. Both sides call it
// at once: each sends a hello (a random nonce and me), then a proof,
// HMAC-SHA256(secret, "hccl-test/2 proof" || purpose || rank || the
// receiver's nonce || the sender's nonce), and checks the other's. It
// also checks that the peer's world has me.Size ranks and that the peer is
// not this rank.
//
// All of it happens before deadline (a zero deadline means none), set with
// conn.SetDeadline; on success the deadline is cleared and conn carries
// nothing but the two hellos and proofs so far. On failure conn's deadlines
// are unspecified and the caller should close it. The error wraps ErrAuth
// for a wrong proof; ErrBadFrame or ErrTruncated for a malformed or cut
// exchange (a version mismatch names both versions); backends.ErrMismatch
// for a different world size; backends.ErrTimeout when the deadline passed;
// backends.ErrPeerGone when the peer closed or reset the connection.
//
// The secret keeps strangers and other jobs out. It is not protection
// against an active attacker on the network, who can relay one rank's
// proof to another, and the data that follows is neither encrypted nor
// authenticated.
func Handshake(conn net.Conn, secret []byte, me Hello, deadline time.Time) (Hello, error) {
	if err := me.validate(); err != nil {
		return Hello{}, fmt.Errorf("handshake: own hello: %w", err)
	}
	if len(secret) == 0 {
		return Hello{}, errors.New("handshake: empty secret")
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return Hello{}, fmt.Errorf("handshake: setting deadline: %w", err)
	}
	peer, err := handshake(conn, secret, me)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			err = fmt.Errorf("%w (deadline %s): %w", backends.ErrTimeout, deadline.Format(time.TimeOnly+".000"), err)
		case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrClosedPipe):
			err = fmt.Errorf("%w: %w", backends.ErrPeerGone, err)
		}
		return Hello{}, fmt.Errorf("handshake as rank %d: %w", me.Rank, err)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return Hello{}, fmt.Errorf("handshake: clearing deadline: %w", err)
	}
	return peer, nil
}

// handshake runs the exchange on conn, whose deadline is set.
func handshake(conn net.Conn, secret []byte, me Hello) (Hello, error) {
	var nonce [nonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return Hello{}, fmt.Errorf("nonce: %w", err)
	}

	// Hello.
	var out [HeaderSize + maxHelloSize]byte
	payload := appendHello(out[HeaderSize:HeaderSize], &nonce, me)
	Header{Kind: KindHello, Seq: helloSeq, Len: uint64(len(payload))}.Put(out[:])
	var (
		peerNonce [nonceSize]byte
		peer      Hello
	)
	err := sendWhileReading(conn, out[:HeaderSize+len(payload)], func() (err error) {
		peerNonce, peer, err = readHello(conn)
		return err
	})
	if err != nil {
		return Hello{}, fmt.Errorf("hello: %w", err)
	}

	// Proof. Each side proves only what it said itself, and binds both
	// fresh nonces, so a recorded proof is no good on another connection.
	Header{Kind: KindProof, Seq: proofSeq, Len: proofSize}.Put(out[:])
	proofMAC(out[HeaderSize:HeaderSize], secret, me.Purpose, me.Rank, &peerNonce, &nonce)
	var got [proofSize]byte
	err = sendWhileReading(conn, out[:HeaderSize+proofSize], func() error {
		return readProof(conn, &got)
	})
	if err != nil {
		return Hello{}, fmt.Errorf("proof from rank %d: %w", peer.Rank, err)
	}
	var want [proofSize]byte
	proofMAC(want[:0], secret, peer.Purpose, peer.Rank, &nonce, &peerNonce)
	if !hmac.Equal(got[:], want[:]) {
		return Hello{}, fmt.Errorf("peer claiming rank %d (%s): %w", peer.Rank, peer.Purpose, ErrAuth)
	}

	// The peer holds the secret; now check that it belongs to this world.
	if peer.Rank == me.Rank {
		// An echo, or a reflection of this side's own proof.
		return Hello{}, fmt.Errorf("peer claims this rank, %d: %w", me.Rank, ErrAuth)
	}
	if peer.Size != me.Size {
		return Hello{}, fmt.Errorf("%w: rank %d is in a world of %d ranks, rank %d in one of %d",
			backends.ErrMismatch, peer.Rank, peer.Size, me.Rank, me.Size)
	}
	if peer.Agree != me.Agree {
		return Hello{}, disagreement(peer, me)
	}
	return peer, nil
}

// sendWhileReading writes msg while it runs read, since on an unbuffered
// conn (a net.Pipe) neither side's write completes before the other reads.
// It returns read's error first: what the peer sent says more than a
// failed write to a peer that has gone.
func sendWhileReading(conn net.Conn, msg []byte, read func() error) error {
	written := make(chan error, 1)
	go func() {
		_, err := conn.Write(msg)
		written <- err
	}()
	if err := read(); err != nil {
		// The peer may never read: end the write now rather than at the
		// deadline, so the goroutine is gone when we return.
		_ = conn.SetWriteDeadline(time.Unix(1, 0))
		<-written
		return err
	}
	if err := <-written; err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// readHello reads the peer's hello frame into a fixed buffer.
func readHello(r io.Reader) ([nonceSize]byte, Hello, error) {
	var hdr [HeaderSize]byte
	h, err := ReadHeader(r, &hdr)
	if err == io.EOF {
		return [nonceSize]byte{}, Hello{}, fmt.Errorf("%w: it closed the connection without a word", backends.ErrPeerGone)
	}
	if err != nil {
		return [nonceSize]byte{}, Hello{}, err
	}
	if err := expectFrame(h, KindHello, helloSeq); err != nil {
		return [nonceSize]byte{}, Hello{}, err
	}
	if h.Len > maxHelloSize {
		return [nonceSize]byte{}, Hello{}, fmt.Errorf("%w: hello claims %d bytes, at most %d", ErrBadFrame, h.Len, maxHelloSize)
	}
	var buf [maxHelloSize]byte
	p := buf[:h.Len]
	if err := ReadPayload(r, p); err != nil {
		return [nonceSize]byte{}, Hello{}, err
	}
	return parseHello(p)
}

// readProof reads the peer's proof frame into dst.
func readProof(r io.Reader, dst *[proofSize]byte) error {
	var hdr [HeaderSize]byte
	h, err := ReadHeader(r, &hdr)
	if err == io.EOF {
		return fmt.Errorf("%w: it closed the connection after its hello", backends.ErrPeerGone)
	}
	if err != nil {
		return err
	}
	if err := expectFrame(h, KindProof, proofSeq); err != nil {
		return err
	}
	if h.Len != proofSize {
		return fmt.Errorf("%w: proof of %d bytes, want %d", ErrBadFrame, h.Len, proofSize)
	}
	return ReadPayload(r, dst[:])
}

// expectFrame checks that h is the handshake frame of the given kind and
// number: a handshake frame belongs to no call.
func expectFrame(h Header, kind Kind, seq uint64) error {
	if h.Kind != kind {
		return fmt.Errorf("%w: got a %s frame, expected a %s", ErrBadFrame, h.Kind, kind)
	}
	if h.Op != 0 || h.DType != 0 || h.Call != 0 || h.Seq != seq {
		return fmt.Errorf("%w: %s frame with op %d, dtype %d, call %d, seq %d; want 0, 0, 0, %d",
			ErrBadFrame, kind, h.Op, h.DType, h.Call, h.Seq, seq)
	}
	return nil
}

// proofMAC appends to b the MAC by which the sender (purpose, rank) proves the
// secret to the receiver, and returns the extended slice.
func proofMAC(b, secret []byte, purpose Purpose, rank int, receiverNonce, senderNonce *[nonceSize]byte) []byte {
	m := hmac.New(sha256.New, secret)
	var fields [1 + 4]byte
	fields[0] = byte(purpose)
	binary.LittleEndian.PutUint32(fields[1:], uint32(rank))
	m.Write([]byte(proofLabel))
	m.Write(fields[:])
	m.Write(receiverNonce[:])
	m.Write(senderNonce[:])
	return m.Sum(b)
}

// validate reports what makes h unfit to send.
func (h Hello) validate() error {
	switch {
	case h.Size < 1 || uint64(h.Size) > math.MaxUint32:
		return fmt.Errorf("world size %d out of range [1, %d]", h.Size, uint64(math.MaxUint32))
	case h.Rank < 0 || h.Rank >= h.Size:
		return fmt.Errorf("rank %d out of range [0, %d)", h.Rank, h.Size)
	case h.Purpose != PurposeRendezvous && h.Purpose != PurposeLink:
		return fmt.Errorf("unknown purpose %d", uint8(h.Purpose))
	case len(h.Addr) > maxAddrLen:
		return fmt.Errorf("address of %d bytes, at most %d", len(h.Addr), maxAddrLen)
	case len(h.Agree) > maxAgreeLen:
		return fmt.Errorf("agreement of %d bytes, at most %d", len(h.Agree), maxAgreeLen)
	}
	return nil
}

// appendHello appends the hello payload for nonce and h, which must be
// valid, to b.
func appendHello(b []byte, nonce *[nonceSize]byte, h Hello) []byte {
	b = append(b, nonce[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.Rank))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.Size))
	b = append(b, byte(h.Purpose))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h.Addr)))
	b = append(b, h.Addr...)
	b = binary.LittleEndian.AppendUint32(b, h.Epoch)
	b = append(b, byte(len(h.Agree)))
	return append(b, h.Agree...)
}

// parseHello decodes a hello payload. It accepts exactly what appendHello
// writes for a valid Hello; anything else wraps ErrBadFrame.
func parseHello(p []byte) ([nonceSize]byte, Hello, error) {
	var nonce [nonceSize]byte
	if len(p) < helloFixedSize {
		return nonce, Hello{}, fmt.Errorf("%w: hello of %d bytes, need at least %d", ErrBadFrame, len(p), helloFixedSize)
	}
	copy(nonce[:], p)
	p = p[nonceSize:]
	rank := binary.LittleEndian.Uint32(p[0:4])
	size := binary.LittleEndian.Uint32(p[4:8])
	purpose := Purpose(p[8])
	addrLen := int(binary.LittleEndian.Uint16(p[9:11]))
	// The address, the epoch, and the agreement close the payload.
	rest := len(p) - helloFixedSize + nonceSize
	if addrLen > maxAddrLen || rest < addrLen {
		return nonce, Hello{}, fmt.Errorf("%w: hello address field claims %d bytes, has at most %d (at most %d)", ErrBadFrame, addrLen, rest, maxAddrLen)
	}
	addr := p[11 : 11+addrLen]
	epoch := binary.LittleEndian.Uint32(p[11+addrLen:])
	agreeLen := int(p[15+addrLen])
	agree := p[16+addrLen:]
	if len(agree) != agreeLen {
		return nonce, Hello{}, fmt.Errorf("%w: hello agreement field claims %d bytes, has %d", ErrBadFrame, agreeLen, len(agree))
	}
	// Where int has 32 bits, values from 1<<31 turn negative, and validate
	// rejects them.
	h := Hello{Rank: int(rank), Size: int(size), Purpose: purpose, Addr: string(addr), Epoch: epoch, Agree: string(agree)}
	if err := h.validate(); err != nil {
		return nonce, Hello{}, fmt.Errorf("%w: hello: %w", ErrBadFrame, err)
	}
	return nonce, h, nil
}
