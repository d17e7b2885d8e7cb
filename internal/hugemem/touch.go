package hugemem

import (
	"context"
	"fmt"
)

// touchStride is how many bytes Touch faults in between two looks at its
// context: 32 MiB, a few milliseconds on a quiet host and well under a
// second with the CPUs oversubscribed, where a whole buffer of a large
// sweep took seconds.
const touchStride = 32 << 20

// Touch writes one byte per page of b, so that its pages exist before a
// timed call uses them, and stops with ctx's error, wrapped, once ctx is
// done: a run cancelled while its buffers are faulted in (a signal, a
// failed output) ends within one stride.
func Touch(ctx context.Context, b []byte) error {
	for start := 0; start < len(b); start += touchStride {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("faulting in buffers: %w", context.Cause(ctx))
		}
		end := min(start+touchStride, len(b))
		for i := start; i < end; i += 4096 {
			b[i] = 0
		}
	}
	return nil
}
