package main

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// intOp is a kernel whose step is one AVX2 integer instruction: dst = a OP b.
func intOp(ins insn) func(g *gen) stepFunc {
	return func(g *gen) stepFunc {
		return func(dst, a, b operand.Mem, nt bool) {
			x := g.YMM()
			g.VMOVDQU(a, x)
			ins(g.Context, b, x, x)
			g.store(x, dst, nt)
		}
	}
}

// store writes the register x (XMM or YMM) to m, with a non-temporal store
// if nt.
func (g *gen) store(x reg.Register, m operand.Mem, nt bool) {
	if nt {
		g.VMOVNTDQ(x, m)
	} else {
		g.VMOVDQU(x, m)
	}
}

// floatISA holds the packed instructions of one float width.
type floatISA struct {
	bits                   int
	add, mul, min, or, xor insn
}

var (
	ps = floatISA{32, (*build.Context).VADDPS, (*build.Context).VMULPS, (*build.Context).VMINPS,
		(*build.Context).VORPS, (*build.Context).VXORPS}
	pd = floatISA{64, (*build.Context).VADDPD, (*build.Context).VMULPD, (*build.Context).VMINPD,
		(*build.Context).VORPD, (*build.Context).VXORPD}
)

// floatOp emits one float operation of width f on a register x and an
// operand y (register or memory) and returns the register with the result.
// sign is the sign mask for max (nil otherwise).
type floatOp func(g *gen, f floatISA, sign reg.VecVirtual, x reg.VecVirtual, y operand.Op) reg.VecVirtual

// arith makes a floatOp of one instruction: x OP y, x the first source, as
// Go's x+y and x*y compile. (For a NaN in both operands the first source's
// NaN comes out.)
func arith(pick func(floatISA) insn) floatOp {
	return func(g *gen, f floatISA, _ reg.VecVirtual, x reg.VecVirtual, y operand.Op) reg.VecVirtual {
		r := g.YMM()
		pick(f)(g.Context, y, x, r)
		return r
	}
}

// goMin emits Go's min(x, y) as cmd/compile does on amd64: t1 = x < y ? x :
// y, t2 = t1 < x ? t1 : x, t1|t2. VMINPS returns its second source when
// either is a NaN or both are zero; the second VMINPS brings back a NaN x,
// and the OR turns a NaN in either into a NaN and min(-0, +0) into -0.
func goMin(g *gen, f floatISA, _ reg.VecVirtual, x reg.VecVirtual, y operand.Op) reg.VecVirtual {
	t1, t2 := g.YMM(), g.YMM()
	f.min(g.Context, y, x, t1)
	f.min(g.Context, x, t1, t2)
	f.or(g.Context, t1, t2, t2)
	return t2
}

// goMax emits Go's max(x, y) as cmd/compile does on amd64: -min(-x, -y),
// the negations flipping the sign bit.
func goMax(g *gen, f floatISA, sign reg.VecVirtual, x reg.VecVirtual, y operand.Op) reg.VecVirtual {
	nx, ny := g.YMM(), g.YMM()
	f.xor(g.Context, sign, x, nx)
	f.xor(g.Context, y, sign, ny)
	r := goMin(g, f, nil, nx, ny)
	f.xor(g.Context, sign, r, r)
	return r
}

var (
	opAdd = arith(func(f floatISA) insn { return f.add })
	opMul = arith(func(f floatISA) insn { return f.mul })
)

// floatKernel is a kernel on fp32 or fp64 elements.
func floatKernel(f floatISA, op floatOp, needSign bool) func(g *gen) stepFunc {
	return func(g *gen) stepFunc {
		var sign reg.VecVirtual
		if needSign {
			sign = g.signMask(f.bits)
		}
		return func(dst, a, b operand.Mem, nt bool) {
			x := g.YMM()
			g.VMOVUPS(a, x)
			g.store(op(g, f, sign, x, b), dst, nt)
		}
	}
}

// f16Kernel is a kernel on fp16 elements: each 16-byte half of a step
// widens to eight float32 with VCVTPH2PS, combines, and narrows back with
// VCVTPS2PH, rounding to nearest-even.
func f16Kernel(op floatOp, needSign bool) func(g *gen) stepFunc {
	return func(g *gen) stepFunc {
		var sign reg.VecVirtual
		if needSign {
			sign = g.signMask(32)
		}
		return func(dst, a, b operand.Mem, nt bool) {
			var rs [2]reg.VecVirtual
			for i, h := range []int{0, 16} {
				x, y := g.YMM(), g.YMM()
				g.VCVTPH2PS(a.Offset(h), x)
				g.VCVTPH2PS(b.Offset(h), y)
				r := op(g, ps, sign, x, y)
				rs[i] = r
				if nt {
					g.VCVTPS2PH(operand.U8(0), r, r.AsX())
				} else {
					g.VCVTPS2PH(operand.U8(0), r, dst.Offset(h))
				}
			}
			if nt {
				g.VINSERTI128(operand.U8(1), rs[1].AsX(), rs[0], rs[0])
				g.store(rs[0], dst, true)
			}
		}
	}
}

// bf16Kernel is a kernel on bf16 elements. A dword of a step holds an even
// element in its low half and an odd one in its high half: shifting left by
// 16 makes the even elements float32s, masking the low half off the odd
// ones. Both halves go through op and back to bf16, which lands in the top
// half of each dword; VPBLENDW puts the odd results back beside the even
// ones, shifted down.
//
// Narrowing relies on the operands being widened bf16, whose low 16 bits
// are zero. A sum or product (arith) is rounded as F32ToBF16 rounds, adding
// 0x7fff plus the lowest kept bit (ties to even); its NaNs need nothing
// more: x86 arithmetic returns a quiet NaN, either an operand's or the
// default one, both with zero low bits, which the increment of at most
// 0x8000 cannot carry out of. Max and min return an operand, or two OR'ed
// together, so nothing needs rounding and only a NaN, which may be a
// signaling one, needs F32ToBF16's quiet bit.
func bf16Kernel(op floatOp, arith, needSign bool) func(g *gen) stepFunc {
	return func(g *gen) stepFunc {
		var c struct{ high, one, bias, abs, inf, quiet, sign reg.VecVirtual }
		c.high = g.broadcast32(0xffff0000)
		if arith {
			c.one, c.bias = g.broadcast32(1), g.broadcast32(0x7fff)
		} else {
			c.abs, c.inf, c.quiet = g.broadcast32(0x7fffffff), g.broadcast32(0x7f800000), g.broadcast32(0x00400000)
		}
		if needSign {
			c.sign = g.signMask(32)
		}
		narrow := func(u reg.VecVirtual) {
			t := g.YMM()
			if arith {
				g.VPSRLD(operand.U8(16), u, t)
				g.VPAND(c.one, t, t) // the lowest kept bit
				g.VPADDD(c.bias, t, t)
				g.VPADDD(t, u, u)
				return
			}
			g.VPAND(c.abs, u, t)
			g.VPCMPGTD(c.inf, t, t) // |u| > Inf: NaN
			g.VPAND(c.quiet, t, t)
			g.VPOR(t, u, u)
		}
		return func(dst, a, b operand.Mem, nt bool) {
			x, y := g.YMM(), g.YMM()
			g.VMOVDQU(a, x)
			g.VMOVDQU(b, y)
			ex, ey, ox, oy := g.YMM(), g.YMM(), g.YMM(), g.YMM()
			g.VPSLLD(operand.U8(16), x, ex)
			g.VPSLLD(operand.U8(16), y, ey)
			g.VPAND(c.high, x, ox)
			g.VPAND(c.high, y, oy)
			even := op(g, ps, c.sign, ex, ey)
			narrow(even)
			g.VPSRLD(operand.U8(16), even, even)
			odd := op(g, ps, c.sign, ox, oy)
			narrow(odd)
			r := g.YMM()
			g.VPBLENDW(operand.U8(0xaa), odd, even, r)
			g.store(r, dst, nt)
		}
	}
}
