package estimate

import (
	"fmt"
	"math"
	"strings"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/units"
)

// CalLarge is the size of the ring step that a calibration measures beta
// on (a sweep's calibrate, up to 32 ranks): a row up to it takes the
// cached constants whole, and one beyond moves toward those measured from
// memory (MemConstants).
const CalLarge = 4 << 20

// Calibration is the fitted model: alpha and beta for the backend, gamma
// per data type.
type Calibration struct {
	Base   coll.Model
	DTypes []dtype.DType // in the plan's order
	Gamma  map[dtype.DType]float64
	// Simulated: the constants are the simulated links', not measured.
	Simulated bool
	// Mem, when set, holds beta and gamma measured from memory
	// (a sweep's calibrateMemory).
	Mem *MemConstants
}

// Model returns the model for rows of data type dt and bytes bytes (the
// row's size).
func (c *Calibration) Model(dt dtype.DType, bytes int64) coll.Model {
	m := c.Base
	if g, ok := c.Gamma[dt]; ok {
		m.Gamma = g
	}
	if c.Mem != nil {
		share := memShare(bytes, c.Mem.Bytes)
		m.Beta = lerp(m.Beta, c.Mem.Beta, share)
		if g, ok := c.Mem.Gamma[dt]; ok {
			m.Gamma = lerp(m.Gamma, g, share)
		}
	}
	return m
}

// SimCalibration is the model of the links a simulating backend
// simulates: their own figures f (backends.Modeled), two levels when they
// have servers, nothing measured. A simulated receive-and-reduce moves the
// bytes, then reduces them, or where receivers move the data, does both in
// one pass (f.Fused).
func SimCalibration(f backends.LinkFigures, dtypes []dtype.DType) *Calibration {
	base := coll.Model{
		Alpha: f.Alpha, Beta: f.Beta, Gamma: f.Gamma, Copy: f.Copy,
		PerServer: f.PerServer, InterAlpha: f.InterAlpha, InterBeta: f.InterBeta,
		Gap: f.Gap, Fused: f.Fused,
	}
	c := &Calibration{Base: base, DTypes: dtypes, Gamma: map[dtype.DType]float64{}, Simulated: true}
	for _, dt := range dtypes {
		c.Gamma[dt] = base.Gamma
	}
	return c
}

// String describes the constants for the header.
func (c *Calibration) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "alpha %.1f us  beta %.2f GB/s  gamma", c.Base.Alpha*1e6, 1/c.Base.Beta/1e9)
	for _, dt := range c.DTypes {
		fmt.Fprintf(&b, " %v %.2f GB/s", dt, 1/c.Gamma[dt]/1e9)
	}
	if c.Base.Copy > 0 {
		fmt.Fprintf(&b, "  copy %.2f GB/s", 1/c.Base.Copy/1e9)
	}
	if c.Base.Fused {
		b.WriteString("  fused receive-reduce")
	}
	if c.Mem != nil {
		fmt.Fprintf(&b, "  from %s: beta %.2f GB/s  gamma", units.FormatSize(c.Mem.Bytes), 1/c.Mem.Beta/1e9)
		for _, dt := range c.DTypes {
			fmt.Fprintf(&b, " %v %.2f GB/s", dt, 1/c.Mem.Gamma[dt]/1e9)
		}
	}
	if c.Base.PerServer > 0 && c.Base.InterBeta > 0 {
		fmt.Fprintf(&b, "  between servers: alpha %.1f us  beta %.2f GB/s", c.Base.InterAlpha*1e6, 1/c.Base.InterBeta/1e9)
	}
	if c.Simulated {
		b.WriteString(" (the simulated links' own figures; auto picks the algorithm this model predicts fastest)")
	} else {
		b.WriteString(" (measured before the sweep; auto picks the algorithm this model predicts fastest)")
	}
	return b.String()
}

// MemConstants are beta and gamma measured on buffers of bytes bytes.
type MemConstants struct {
	Bytes int64
	Beta  float64
	Gamma map[dtype.DType]float64
}

// memShare is how much of the memory constants a row of bytes bytes
// takes: 0 up to CalLarge, 1 from at, and in between the position of its
// size between the two on a log scale.
func memShare(bytes, at int64) float64 {
	switch {
	case bytes <= CalLarge:
		return 0
	case bytes >= at:
		return 1
	}
	return math.Log(float64(bytes)/CalLarge) / math.Log(float64(at)/CalLarge)
}

// lerp returns x moved share of the way to y.
func lerp(x, y, share float64) float64 { return x + (y-x)*share }
