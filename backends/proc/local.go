package proc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hccl-test/hccl-test/backends"
)

// peer is another rank of this host, as this rank sees it.
type peer struct {
	rank, pid int
	// ctl is its control segment, mapped here: it holds its doorbell and
	// the ring of its sends to this rank (inRing).
	ctl         ctl
	outRing     int                 // offset in this rank's control segment of the ring to it
	inRing      int                 // offset in its control segment of the ring from it
	pidfd       int                 // its process, to see it die; -1 when it is this process
	mapped      map[uint64][]byte   // its data segments mapped here, by id
	nextSend    uint64              // the ticket of the next send to it
	nextRecv    uint64              // the ticket of the next receive from it
	queue       []*sendReq          // sends posted while its ring was full
	recvs       []*recvReq          // receives from it posted and not yet complete, by ticket
	inflight    [ringSlots]*sendReq // the send last posted in each slot of the ring to it
	eagerOut    int                 // offset in this rank's control segment of the eager buffers to it; -1: none
	eagerLast   [eagerSlots]uint64  // the ticket, plus one, of the last eager send in each eager buffer to it
	dropErr     error               // why this rank dropped the link to it (DropLink); guarded by endpoint.dropMu
	sameProcess bool                // it is a rank of this process (a local world's)
}

// record is what a rank tells the other ranks of its host at setup.
type record struct {
	pid, fd, size int
	kernel        string // boot id and pid namespace: ranks that share them can map each other's memory
}

const recordSize = 24 + 104

func (r record) encode() []byte {
	b := make([]byte, recordSize)
	binary.LittleEndian.PutUint64(b, uint64(r.pid))
	binary.LittleEndian.PutUint64(b[8:], uint64(r.fd))
	binary.LittleEndian.PutUint64(b[16:], uint64(r.size))
	copy(b[24:], r.kernel)
	return b
}

func decodeRecord(b []byte) record {
	return record{pid: int(binary.LittleEndian.Uint64(b)), fd: int(binary.LittleEndian.Uint64(b[8:])),
		size: int(binary.LittleEndian.Uint64(b[16:])), kernel: string(bytes.TrimRight(b[24:], "\x00"))}
}

// kernelID names the kernel and pid namespace this process runs in: ranks
// that report the same host but another kernel cannot share memory.
func kernelID() string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, _ := os.Readlink("/proc/self/ns/pid")
	id := strings.TrimSpace(string(boot)) + " " + ns
	return id[:min(len(id), recordSize-24)]
}

// setupLocal makes this rank's control segment and maps those of the
// other ranks of its host, which it learns from them over t.
func (e *endpoint) setupLocal(ctx context.Context) error {
	e.me = -1
	e.localIdx = make([]int, e.size)
	for r, h := range e.hosts {
		e.localIdx[r] = -1
		if h == e.hosts[e.rank] {
			if r == e.rank {
				e.me = len(e.local)
			}
			e.localIdx[r] = len(e.local)
			e.local = append(e.local, r)
		}
	}
	e.spin = len(e.local) <= runtime.NumCPU()
	seg, err := newSegment(ctlSize(len(e.local)), "hccl-test-ctl")
	if err != nil {
		return err
	}
	e.own, e.my = seg, ctl{mem: seg.mem}
	*e.my.u64(hdrPID) = uint64(os.Getpid())
	*e.my.u64(hdrLocal) = uint64(len(e.local))
	*e.my.u64(hdrMagic) = ctlMagic
	e.peers = make([]*peer, e.size)
	if len(e.local) == 1 {
		return nil
	}
	me := record{pid: os.Getpid(), fd: seg.fd, size: seg.mapped(), kernel: kernelID()}
	recs, err := allgatherLocal(ctx, e.t, e.local, e.me, me.encode())
	if err != nil {
		return fmt.Errorf("rank %d: meeting the ranks of host %s: %w", e.rank, e.hosts[e.rank], err)
	}
	for i, r := range e.local {
		if r == e.rank {
			continue
		}
		rec := decodeRecord(recs[i])
		if rec.kernel != me.kernel {
			return fmt.Errorf("rank %d: ranks %d and %d report host %s but run on different kernels or pid namespaces (%q, %q), so they cannot share memory: use --backend tcp",
				e.rank, e.rank, r, e.hosts[e.rank], me.kernel, rec.kernel)
		}
		mem, err := mapPeer(rec.pid, rec.fd, rec.size, true)
		if err != nil {
			return fmt.Errorf("rank %d: control segment of rank %d: %w", e.rank, r, err)
		}
		p := &peer{rank: r, pid: rec.pid, ctl: ctl{mem: mem}, outRing: ringAt(i), inRing: ringAt(e.me), eagerOut: eagerOut(len(e.local), i),
			pidfd: -1, mapped: map[uint64][]byte{}, sameProcess: rec.pid == os.Getpid()}
		e.peers[r] = p
		if *p.ctl.u64(hdrMagic) != ctlMagic || *p.ctl.u64(hdrPID) != uint64(rec.pid) {
			return fmt.Errorf("rank %d: the control segment of rank %d (pid %d) is not one", e.rank, r, rec.pid)
		}
		if rec.pid != os.Getpid() {
			if fd, err := unix.PidfdOpen(rec.pid, 0); err == nil {
				p.pidfd = fd
			}
		}
	}
	return nil
}

// allgatherLocal gives every rank of local (ascending ranks; this one at
// index me) the block of every other, in a ring over t.
func allgatherLocal(ctx context.Context, t backends.Transport, local []int, me int, mine []byte) ([][]byte, error) {
	n, blk := len(local), len(mine)
	all := make([]byte, n*blk)
	copy(all[me*blk:], mine)
	next, prev := local[(me+1)%n], local[(me-1+n)%n]
	for s := range n - 1 {
		out, in := (me-s+n)%n, (me-s-1+n)%n
		rr := t.Recv(prev, all[in*blk:(in+1)*blk])
		sr := t.Send(next, all[out*blk:(out+1)*blk])
		if err := rr.Wait(ctx); err != nil {
			return nil, err
		}
		if err := sr.Wait(ctx); err != nil {
			return nil, err
		}
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = all[i*blk : (i+1)*blk]
	}
	return out, nil
}

// gone reports whether the peer closed its endpoint or its process ended,
// with an error that wraps ErrPeerGone and says why.
func (p *peer) gone() error {
	if p.ctl.closed() {
		why := p.ctl.text(hdrWhy, headerSize)
		if why == "" {
			return fmt.Errorf("%w: rank %d closed its endpoint", backends.ErrPeerGone, p.rank)
		}
		return fmt.Errorf("%w: rank %d stopped: %s", backends.ErrPeerGone, p.rank, why)
	}
	if p.pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(p.pidfd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(fds, 0); n > 0 {
			return fmt.Errorf("%w: rank %d (pid %d) has died", backends.ErrPeerGone, p.rank, p.pid)
		}
	}
	return nil
}

// unmappable returns why the peer's segment could not be mapped: that the
// peer is gone when it is, else err. A process's descriptors go before its
// exit shows on its pidfd, so a segment that has vanished (ENOENT) gives
// the pid a moment to be seen ending: a rank killed mid-call was reported
// as "opening the shared memory of process N: no such file or directory"
// under load, not as the rank that died.
func (p *peer) unmappable(err error) error {
	if g := p.gone(); g != nil {
		return g
	}
	if p.pidfd >= 0 && errors.Is(err, unix.ENOENT) {
		fds := []unix.PollFd{{Fd: int32(p.pidfd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(fds, 200); n > 0 {
			return fmt.Errorf("%w: rank %d (pid %d) has died", backends.ErrPeerGone, p.rank, p.pid)
		}
	}
	return err
}

// data returns the peer's data segment id (its descriptor fd, of size
// bytes), mapping it on first use.
func (p *peer) data(id uint64, fd, size int) ([]byte, error) {
	if m, ok := p.mapped[id]; ok {
		return m, nil
	}
	m, err := mapPeer(p.pid, fd, size, false)
	if err != nil {
		return nil, p.unmappable(err)
	}
	p.mapped[id] = m
	return m, nil
}

// release unmaps what this rank mapped of the peer's.
func (p *peer) release() {
	for id, m := range p.mapped {
		unmap(m)
		delete(p.mapped, id)
	}
	unmap(p.ctl.mem)
	if p.pidfd >= 0 {
		unix.Close(p.pidfd)
	}
}
