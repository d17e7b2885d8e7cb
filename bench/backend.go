package bench

import "github.com/hccl-test/hccl-test/backends"

// capsOf returns what the backend registered as name is; the zero Caps for
// a name that is not registered, which Plan.Validate refuses naming the
// registered ones.
func capsOf(name string) backends.Caps {
	c, _ := backends.CapsOf(name)
	return c
}
