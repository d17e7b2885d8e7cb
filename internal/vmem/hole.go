//go:build linux && (amd64 || arm64)

package vmem

import (
	"sync/atomic"
	"unsafe"
)

// windows counts the windows of the hole handed out so far.
var windows atomic.Int64

// hole returns a fresh window of the hole (holeBase, holeWindow, holeCount
// per architecture) of at least n bytes, or nil when n is larger than a
// window or every window is taken. No memory and no mapping is behind it:
// any access faults, as a PROT_NONE mapping's would. The Go runtime ignores
// pointers outside its heap, so slices of it are safe to keep and pass.
func hole(n int) []byte {
	if uint64(n) > holeWindow {
		return nil
	}
	k := windows.Add(1) - 1
	if k >= holeCount {
		return nil
	}
	p := unsafe.Add(unsafe.Pointer(nil), uintptr(holeBase+uint64(k)*holeWindow))
	return unsafe.Slice((*byte)(p), int(holeWindow))
}
