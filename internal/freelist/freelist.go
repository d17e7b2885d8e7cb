// Package freelist keeps objects for reuse in a slice owned by one
// goroutine: the requests a transport's caller hands back, which its next
// posts take instead of allocating.
package freelist

// Pop removes and returns the last object of l, or nil when l is empty.
// The slot it leaves is cleared, so that l keeps nothing alive.
func Pop[T any](l *[]*T) *T {
	n := len(*l)
	if n == 0 {
		return nil
	}
	x := (*l)[n-1]
	(*l)[n-1] = nil
	*l = (*l)[:n-1]
	return x
}
