package backends

// LinkFigures are what a simulating backend's links cost, in the terms of
// the cost model that --algo auto predicts with (coll.Model): seconds per
// message (alpha) and per byte (beta) inside a server and between
// servers, per byte reduced (gamma) and copied, the least time between two
// messages a rank sends (gap), the ranks of a server (0: one server), and
// whether a receive-and-reduce is one pass (Fused).
type LinkFigures struct {
	Alpha, Beta, Gamma, Copy float64
	PerServer                int
	InterAlpha, InterBeta    float64
	Gap                      float64
	Fused                    bool
}

// Modeled is implemented by a backend whose links follow a model of its
// own (a simulator; Caps.Simulated), made from the world's settings s: the
// backend's own options (s.Own; nil: its defaults) and the links the
// harness gives (s.Links). LinkFigures returns the model's figures, from
// which the harness predicts with the model's own constants instead of
// measuring them (estimate.SimCalibration); DescribeLinks says what the
// model simulates for a world of ranks ranks, for a header;
// DefaultLinkGBps is the bandwidth of a link inside a server when the
// harness gives none, which --link-bw auto takes (there is nothing to
// measure: the link is what the model says).
type Modeled interface {
	LinkFigures(s Settings) LinkFigures
	DescribeLinks(s Settings, ranks int) string
	DefaultLinkGBps() float64
}
