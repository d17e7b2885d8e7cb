// Package hugemem allocates large buffers outside the Go heap, advised for
// transparent huge pages where the kernel leaves that to the program
// (/sys/kernel/mm/transparent_hugepage/enabled set to madvise, as on many
// distributions). Fresh 4 KiB pages cost about 11 us each to fault in on
// these machines, more than copying them, and a buffer of 4 KiB pages
// misses the TLB far more often than one of 2 MiB pages: the message
// buffers, and the scratch space of the algorithms that copy through one,
// are what a collective's time is made of.
package hugemem
