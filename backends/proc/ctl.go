package proc

import (
	"sync/atomic"
	"unsafe"

	"github.com/hccl-test/hccl-test/backends"
)

// A rank's control segment holds its doorbell and, for every other rank of
// its host, the ring of the sends it posted to that rank. The sender writes
// a slot and marks it posted; the receiver marks it taken, reads the
// sender's buffer, writes how it went and marks it done. Each mark is one
// atomic word, so a sender that gives up (abandoned) and a receiver that
// takes the send cannot both win.
//
//	header (headerSize bytes): magic, pid, ranks on the host, closed, the
//	CPU of its last wait, bell, why the rank stopped (a text)
//	per receiver, by its index on the host: ringHeaderSize bytes (dropped,
//	and why: a text), then ringSlots slots of slotSize bytes
//	on hosts of up to eagerHosts ranks, per receiver again: eagerSlots
//	buffers of eagerMax bytes (eager sends' copies)
const (
	ctlMagic       = 0x68636366_70726f63 // "hccfproc"
	headerSize     = 512
	ringHeaderSize = 256
	ringSlots      = 64 // sends to one peer in flight before the rest queue
	slotSize       = 128
	ringSize       = ringHeaderSize + ringSlots*slotSize
	eagerSlots     = 16                    // eager sends to one peer unread before the next waits for its receiver
	eagerMax       = 4 << 10               // the largest send copied (eager)
	eagerSize      = eagerSlots * eagerMax // the eager buffers to one receiver
	// eagerHosts bounds the ranks of a host that send eagerly: every rank
	// maps every other's control segment, (ranks-1)·ranks·eagerSize bytes
	// of eager buffers in all (3.5 MiB each for 8 ranks, 15 MiB for 16).
	eagerHosts = 16

	hdrMagic     = 0
	hdrPID       = 8
	hdrLocal     = 16
	hdrClosed    = 24 // uint32, 1 once the rank closed its endpoint
	hdrCPU       = 32 // uint32, the CPU the rank last began a wait on, plus one (0: not yet)
	hdrBell      = 64
	hdrWhy       = 128 // a text (putText), why the rank stopped
	ringWantDone = 4   // uint32 in a ring's header, 1 while its sender has sends queued (wantDone)
	ringWhy      = 8   // a text in a ring's header, why it was dropped
)

// ctlSize is the size of the control segment of a host of local ranks.
func ctlSize(local int) int {
	if local > eagerHosts {
		return headerSize + local*ringSize
	}
	return headerSize + local*(ringSize+eagerSize)
}

// eagerOut returns the offset in a control segment of a host of local
// ranks of the eager buffers to the rank at local index i, -1 when the
// host has too many ranks for them.
func eagerOut(local, i int) int {
	if local > eagerHosts {
		return -1
	}
	return headerSize + local*ringSize + i*eagerSize
}

// Slot phases, the low bits of a slot's state word; the high bits hold the
// send's ticket (its number among the sends of its pair).
const (
	phaseEmpty     = iota // never used since the ring was reset
	phasePosted           // the sender waits for the receiver
	phaseTaken            // the receiver reads the buffer
	phaseDone             // the receiver is finished with it; status says how
	phaseAbandoned        // the sender gave up before the receiver came
	phaseBits      = 3
)

func state(ticket uint64, phase uint64) uint64 { return ticket<<phaseBits | phase }

// Slot statuses, written by the receiver before it marks a slot done.
const (
	statusOK = iota
	statusLength
	statusCall
	statusFailed // the receiver could not read the buffer
)

// Slot field offsets.
const (
	slotState   = 0
	slotSegID   = 8
	slotSegFD   = 16
	slotSegSize = 24
	slotOff     = 32
	slotLen     = 40
	slotCall    = 48 // the sender's call: 24 bytes (encodeCall)
	slotStatus  = 72
	slotRecvLen = 80
	slotRecv    = 88 // the receiver's call, on a mismatch: 24 bytes
)

// ctl is a mapped control segment, this rank's or a peer's.
type ctl struct{ mem []byte }

func (c ctl) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&c.mem[off])) }
func (c ctl) u32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&c.mem[off])) }

func (c ctl) bell() bell { return bellAt(c.mem, hdrBell) }

// closed reports whether the segment's rank closed its endpoint.
func (c ctl) closed() bool { return atomic.LoadUint32(c.u32(hdrClosed)) != 0 }

// ring returns the offset of the ring of sends to the rank at local index
// i.
func ringAt(i int) int { return headerSize + i*ringSize }

// slotAt returns the offset of the slot of ticket t in the ring at ring.
func slotAt(ring int, t uint64) int { return ring + ringHeaderSize + int(t%ringSlots)*slotSize }

// dropped reports whether the ring at ring was dropped (LinkDropper).
func (c ctl) dropped(ring int) bool { return atomic.LoadUint32(c.u32(ring)) != 0 }

// putCall writes c's identity at off: 24 bytes.
func (c ctl) putCall(off int, call backends.Call) {
	*c.u64(off) = call.Seq
	*c.u64(off + 8) = uint64(call.Count)
	flags := uint64(0)
	if call.NoPayload {
		flags = 1
	}
	*c.u64(off + 16) = uint64(call.Op) | uint64(call.DType)<<8 | uint64(call.RedOp)<<16 | flags<<24 | uint64(uint32(call.Root))<<32
}

// getCall reads what putCall wrote; names names its codes.
func (c ctl) getCall(off int, names backends.CallNamer) backends.Call {
	w := *c.u64(off + 16)
	return backends.Call{Seq: *c.u64(off), Count: int64(*c.u64(off + 8)),
		Op: uint8(w), DType: uint8(w >> 8), RedOp: uint8(w >> 16), NoPayload: w>>24&1 != 0,
		Root: int32(uint32(w >> 32)), Names: names}
}

// putText writes s at off, in a field that ends at end: a length, then as
// much of s as fits.
func (c ctl) putText(off, end int, s string) {
	n := min(len(s), end-off-4)
	copy(c.mem[off+4:off+4+n], s)
	atomic.StoreUint32(c.u32(off), uint32(n))
}

// text reads what putText wrote at off, in a field that ends at end.
func (c ctl) text(off, end int) string {
	n := min(int(atomic.LoadUint32(c.u32(off))), end-off-4)
	return string(c.mem[off+4 : off+4+n])
}
