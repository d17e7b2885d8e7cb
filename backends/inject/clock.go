package inject

import "github.com/hccl-test/hccl-test/backends"

// Unwrap implements backends.Unwrapper: it returns the transport the
// faults are applied to, so that what it implements beyond Transport (a
// virtual clock, backends.ClockOf) can be found through the wrapper.
func (w *transport) Unwrap() backends.Transport { return w.Transport }
