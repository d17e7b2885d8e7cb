// Package backends defines the point-to-point surface that every collective
// algorithm is written against, the registry of backends that provide it, and
// the errors callers branch on.
//
// A backend moves bytes; it never knows which collective it is carrying.
//
// # A backend
//
// A backend implements Backend (its name, its Capabilities, and Run, which
// starts a world described by a Config) and registers itself in an init
// function (Register). Config holds what every backend needs; a backend's
// own settings travel in Config.Options, of a type its package defines
// (tcp.Options, sim.Options), which the backend checks. Callers choose by
// Caps, asked of the backend a harness resolved from its name once
// (world.World.Resolve) before anything runs, never by a backend's name. Each rank's endpoint is a Transport: Send, Recv and
// RecvReduce posted without blocking, completed by Request.Wait.
//
// # Optional interfaces
//
// Everything else is optional: a backend, its transports or their requests
// implement what they can, and callers look for it with a type assertion
// (through wrappers, for the transports: ClockOf, HolderOf, HostsOf,
// LocalWorkerOf).
//
// On a Backend:
//   - ConfigChecker: checks a Config's options before any rank starts, so
//     that a mistake in them is refused as bad input.
//   - Launched: reports a world started by an external launcher (mpirun,
//     srun, torchrun), so that its size is known before anything runs.
//   - FlagDefiner: defines its own flags, in a section of the command's
//     help, and makes its options of them (refusing bad ones).
//   - OptionsMaker: makes its own options from the world's Settings.
//   - LinkMemory: says what its links hold in memory, for the estimate.
//   - Modeled: a simulator's link figures and their description, from
//     which the harness predicts without measuring.
//
// On a backend's own options (Settings.Own, what its FlagDefiner makes):
//   - OwnChecker: says what is wrong with them for a world, on whichever
//     backend it runs, so that a plan built in Go is checked as the
//     command line is.
//   - PayloadOption: asks for a run without payload (Caps.NoPayload).
//
// On a Transport:
//   - CallTagger: carries each collective Call in its messages, to fail
//     with ErrMismatch when ranks disagree about the call, naming both
//     calls through the Call's Names.
//   - Recoverer: agrees on a failed call and makes the links usable again,
//     so that the call can be run again (--retry).
//   - LinkDropper: drops the link to a peer on purpose (fault injection).
//   - DirectReader: receivers read the sender's buffer itself (shared
//     memory), which --algo auto's cost model counts as one pass.
//   - Native: runs whole collectives with the library's own (MPI's), for
//     coll's "native" algorithm.
//   - HostReporter: reports every rank's host, for --topology auto.
//   - Releaser: takes back requests its caller is done with, to reuse
//     them instead of allocating a request per message.
//   - Unwrapper: wraps another transport (fault injection, a group's
//     renumbering), so that what the wrapped one implements can be found.
//
// On a Transport in virtual time (sim):
//   - Clock: the rank's virtual clock, by which rows are timed.
//   - WaitClock: a Clock that also counts the time spent waiting on peers.
//   - LocalWorker: charges a rank's copies and reductions of its own
//     buffers to its clock.
//   - Holder: charges time spent apart from messages (compute, an injected
//     hold) to the clock.
//   - LinkHolder: holds a message on its link rather than its sender
//     (injected delay or bandwidth).
//
// On a Request:
//   - Describer: says what it waits for, for the report on a timeout.
//   - PeerReporter: names its peer without allocating, for live status.
//   - Readier: tells, without blocking, that Wait will not wait for the
//     peer, so that a caller need not time the wait.
package backends
