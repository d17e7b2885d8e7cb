package backends

import (
	"context"
	"errors"
	"fmt"

	"github.com/hccl-test/hccl-test/dtype"
)

// Transport is one rank's endpoint in a world of Size ranks.
//
// Operations are posted without blocking and completed with Request.Wait, so
// an algorithm step can send and receive at the same time. Messages from one
// rank to another are matched in the order they were posted on each side (no
// tags, no overtaking), and the lengths of a matched send and receive must be
// equal: a difference fails the receive with ErrMismatch (and the send, where
// a send completes only once the receiver takes it). Zero-length messages are
// allowed and act as pure synchronisation.
//
// A Transport is used by one goroutine at a time (the rank's own); the
// Requests it returns may be waited on in any order. A buffer passed to a
// posted operation belongs to the transport until that request's Wait has
// returned: the caller must neither read a receive buffer nor modify a send
// buffer before then. Two pending requests must not share a receive buffer
// or an accumulator: a backend may make progress on any posted request at
// any time, not only inside Wait. A rank may not message itself.
//
// A send may complete only once the receiver has taken the data (shm does
// exactly that), so a rank that must both send and receive in one step waits
// for its receive before its send, or two ranks sending to each other first
// would wait on each other.
type Transport interface {
	// Rank returns this endpoint's rank, in [0, Size()).
	Rank() int
	// Size returns the number of ranks in the world.
	Size() int
	// Send posts a send of buf to peer.
	Send(peer int, buf []byte) Request
	// Recv posts a receive from peer into buf.
	Recv(peer int, buf []byte) Request
	// RecvReduce posts a receive from peer of len(dst) bytes that are
	// combined as they arrive: dst = reduce(acc, incoming). acc may be dst
	// itself; it must be at least len(dst) bytes long. A backend that can
	// read the peer's memory reduces straight from it; a stream backend
	// reduces chunk by chunk.
	RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) Request
	// Close releases the endpoint. Requests still pending fail.
	Close() error
}

// Call identifies the collective call that messages belong to. A transport
// that carries it in its messages can tell when peers disagree about which
// call they are in, and fail with ErrMismatch instead of mixing them up.
type Call struct {
	Seq   uint64 // calls made on this rank so far, counting from 1
	Op    uint8  // collective code, named by Names
	DType uint8  // element type code, 0 when none
	RedOp uint8  // reduction code, 0 when none
	Root  int32  // root rank, -1 when none
	Count int64  // element count of the call's arguments
	// NoPayload says that the messages of this call carry lengths only. A
	// transport that honours it (shm, and sim over it) matches and times
	// them as usual but moves no bytes: receives neither copy nor reduce,
	// and the buffers' contents are undefined; they may not even be backed
	// by memory (internal/vmem). Both sides of a message must agree on it,
	// as on the rest of the Call. Other transports do not honour it: a
	// caller must not set it on them.
	NoPayload bool
	// Names names the codes above in errors; nil prints numbers. It is no
	// part of the call's identity, and the package that defines the codes
	// sets it, so that a transport names both sides of a mismatch in the
	// text it sends the peer as well as in its own error.
	Names CallNamer
}

// CallNamer names the codes of Calls, for errors. The package that defines
// the codes implements it.
type CallNamer interface {
	// NameOp names an op and data type, as "allreduce(fp32)".
	NameOp(op, dt uint8) string
	// NameCall names a call with all its arguments, as
	// "allgather(fp32, 1048576)".
	NameCall(c Call) string
}

// String describes the call's signature in errors, through c.Names, or in
// numbers without it.
func (c Call) String() string {
	if c.Names != nil {
		return c.Names.NameCall(c)
	}
	return fmt.Sprintf("%s count %d redop %d root %d", c.NameOp(c.Op, c.DType), c.Count, c.RedOp, c.Root)
}

// NameOp names an op and data type, such as a peer's from a message
// header, through c.Names, or in numbers without it.
func (c Call) NameOp(op, dt uint8) string {
	if c.Names != nil {
		return c.Names.NameOp(op, dt)
	}
	return fmt.Sprintf("op %d (dtype %d)", op, dt)
}

// Same reports whether c and d are the same call: every field but Names
// agrees.
func (c Call) Same(d Call) bool {
	c.Names, d.Names = nil, nil
	return c == d
}

// CallTagger is implemented by transports that carry the Call in their
// messages. Callers announce each call before posting its messages.
type CallTagger interface {
	BeginCall(c Call)
}

// Request is a posted operation.
type Request interface {
	// Wait blocks until the operation has completed or ctx is done, and
	// returns its error. A request abandoned because ctx ended fails with an
	// error that wraps ErrTimeout (deadline) or context.Canceled (the run was
	// aborted). Calling Wait again returns the same result.
	Wait(ctx context.Context) error
}

// Errors that callers branch on with errors.Is.
var (
	// ErrTimeout: an operation did not complete before its deadline.
	ErrTimeout = errors.New("timed out")
	// ErrPeerGone: the peer abandoned the exchange or disappeared.
	ErrPeerGone = errors.New("peer gone")
	// ErrMismatch: the two sides of an exchange disagree (length, order).
	ErrMismatch = errors.New("mismatched message")
	// ErrDisagree: ranks of one world were started with settings they
	// must share (a different --backend) and found it before meeting: bad
	// input, though found only once the ranks could compare.
	ErrDisagree = errors.New("the ranks were started differently")
	// ErrClosed: the endpoint was closed.
	ErrClosed = errors.New("transport closed")
)

// ContextError turns the error of a finished context into the error a
// Request reports: ErrTimeout for a deadline, or for a context cancelled
// with a cause that wraps ErrTimeout (a watchdog that stands in for a
// deadline), the context's error otherwise, saying the cause it was
// cancelled with ("SIGTERM received", not "context canceled")
// while it matches only the context's error under errors.Is.
func ContextError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(context.Cause(ctx), ErrTimeout) {
		return ErrTimeout
	}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return causeError{err: ctx.Err(), cause: cause}
	}
	return ctx.Err()
}

// StopCause is what a rank tells its peers when it stops with err: the
// cause its context was cancelled with from outside (a signal, the memory
// guard), which says why it stopped where err only says where ("rank 3
// stopped: SIGTERM received", not the op it was in and
// "context canceled"), else err.
func StopCause(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() && !errors.Is(cause, ErrTimeout) {
		return cause
	}
	return err
}

// causeError is a cancelled context's error told by its cause.
type causeError struct{ err, cause error }

func (e causeError) Error() string { return e.cause.Error() }
func (e causeError) Unwrap() error { return e.err }

// DirectReader is implemented by transports whose receiver reads the
// sender's buffer itself (shared memory): a receive-and-reduce is then one
// pass over memory, which the cost model of --algo auto counts as such.
type DirectReader interface {
	// ReadsSenderBuffer reports whether receives read the sender's buffer
	// directly.
	ReadsSenderBuffer() bool
}

// LinkDropper is implemented by transports that can drop the connection to
// a peer on purpose (fault injection): operations pending on it, and later
// ones, fail on both sides with an error that wraps err.
type LinkDropper interface {
	DropLink(peer int, err error)
}

// Describer is implemented by Requests that can say what they wait for, as
// "receive from rank 3", for the report on an op that timed out.
type Describer interface {
	Describe() string
}

// Releaser is implemented by Transports that reuse their Requests. A
// caller done with a request (its Wait has returned, and it will neither
// wait on it again nor keep it) may hand it back with Release, so that a
// later post reuses it instead of allocating: a small message's requests
// were all of its allocations, and the garbage collector they fed made the
// slow tail of small rows. A transport reuses only a request nothing else
// still refers to (a peer, a ring slot); one it did not make is ignored,
// and one never released is collected as usual. Releasing a request twice
// is the caller's bug.
type Releaser interface {
	Release(r Request)
}

// Readier is implemented by Requests that can tell, without blocking,
// that their Wait will not wait for the peer: a send the receiver has
// finished with (or sent eagerly), a receive whose data has arrived. A
// caller that times its waits skips reading the clock when every request
// is ready, which on virtual machines costs more than a small message.
type Readier interface {
	Ready() bool
}

// PeerReporter is implemented by Requests that can name their peer without
// allocating, for the live status of a rank (Comm.Status).
type PeerReporter interface {
	Peer() (peer int, send bool)
}

// CheckAccumulator returns the error of a RecvReduce from peer whose
// accumulator is shorter than its destination, or nil.
func CheckAccumulator(peer int, dst, acc []byte) error {
	if len(acc) < len(dst) {
		return fmt.Errorf("recv-reduce from rank %d: accumulator of %d bytes for %d", peer, len(acc), len(dst))
	}
	return nil
}
