package proc

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bell is a rank's doorbell, two words in its control segment that every
// rank of its host maps: whoever changes something the rank may be
// waiting for (a send posted to it, a receive of its send finished, a link
// dropped) rings it, and the rank waits on it with futex(2), which works
// across processes on shared memory. A ring makes a system call only when
// the rank is asleep (waiters), so a busy rank is rung for free.
type bell struct {
	seq     *uint32 // counts rings; the futex word
	waiters *uint32 // how many threads sleep on seq
}

func bellAt(mem []byte, off int) bell {
	return bell{seq: (*uint32)(unsafe.Pointer(&mem[off])), waiters: (*uint32)(unsafe.Pointer(&mem[off+4]))}
}

// ring wakes the bell's rank if it sleeps.
func (b bell) ring() {
	atomic.AddUint32(b.seq, 1)
	if atomic.LoadUint32(b.waiters) != 0 {
		futexWake(b.seq)
	}
}

// sleep waits up to d for a ring, unless ready reports true first. It
// returns early, without any guarantee, on a spurious wake: callers check
// their condition again.
func (b bell) sleep(d time.Duration, ready func() bool) {
	v := atomic.LoadUint32(b.seq)
	if ready() {
		return
	}
	atomic.AddUint32(b.waiters, 1)
	if !ready() {
		futexWait(b.seq, v, d)
	}
	atomic.AddUint32(b.waiters, ^uint32(0))
}

// The futex(2) operations used, as the kernel numbers them.
const (
	futexOpWait = 0 // FUTEX_WAIT
	futexOpWake = 1 // FUTEX_WAKE
)

// futexWait sleeps while *addr == val, at most d. The futex is shared
// (no FUTEX_PRIVATE_FLAG): its key is the memory, not the process.
func futexWait(addr *uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexOpWait, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes every thread sleeping on addr, in any process.
func futexWake(addr *uint32) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexOpWake, uintptr(1<<30), 0, 0, 0)
}

// thisCPU returns the CPU this thread runs on (getcpu(2)), plus one, or 0
// when the kernel does not say. The thread may move right after.
func thisCPU() uint32 {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return 0
	}
	return cpu + 1
}

// yieldCPU gives this thread's CPU to another runnable thread, of any
// process (sched_yield(2)); it never blocks.
func yieldCPU() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
