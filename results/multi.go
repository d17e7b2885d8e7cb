package results

// Multi returns a Sink that passes every call on to each of sinks, in order:
// one run written as a table, CSV, JSON lines and Go benchmark format at
// once. Every sink gets every call even when an earlier one fails, so one
// broken output (a full disk) does not cost the others their rows; the
// call returns the first error.
func Multi(sinks ...Sink) Sink { return multi(sinks) }

type multi []Sink

// Begin implements Sink.
func (m multi) Begin(h Header) error { return m.each(func(s Sink) error { return s.Begin(h) }) }

// Write implements Sink.
func (m multi) Write(r Record) error { return m.each(func(s Sink) error { return s.Write(r) }) }

// End implements Sink.
func (m multi) End(s Summary) error { return m.each(func(k Sink) error { return k.End(s) }) }

func (m multi) each(call func(Sink) error) error {
	var first error
	for _, s := range m {
		if err := call(s); err != nil && first == nil {
			first = err
		}
	}
	return first
}
