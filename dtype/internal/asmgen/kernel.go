package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// insn is an avo instruction taking its operands in Go assembler order:
// sources first, destination last.
type insn func(*build.Context, ...operand.Op)

// gen wraps the avo context with the helpers the kernels share.
type gen struct{ *build.Context }

// kernel describes one generated function.
type kernel struct {
	name   string // Go name, e.g. sumFP32AVX2
	doc    string // what it computes, for the doc comment
	unroll int    // 32-byte steps per iteration of the main loops
	// prefetch is how far ahead, in bytes, the non-temporal loop
	// prefetches a and b; 0 for none.
	prefetch int
	// prepare emits the set-up of constant registers and returns the
	// function that emits one 32-byte step.
	prepare func(g *gen) stepFunc
}

// stepFunc emits one 32-byte step at the given operands, storing with
// non-temporal stores if nt.
type stepFunc func(dst, a, b operand.Mem, nt bool)

// generate emits k: two main loops of k.unroll steps, one with ordinary
// stores and one with non-temporal stores (dst must then be 32-byte
// aligned; an SFENCE follows the loop), and single steps with ordinary
// stores for the rest of n.
func (k kernel) generate(g *gen) {
	g.Function(k.name)
	g.Attributes(attr.NOSPLIT)
	g.SignatureExpr("func(dst, a, b *byte, n int, nt bool)")
	g.Pragma("noescape")
	g.Doc(fmt.Sprintf("%s computes %s, element by element over the n bytes at dst, a and b.", k.name, k.doc),
		fmt.Sprintf("n is a multiple of %d. If nt, dst must be %d-byte aligned, and the stores bypass the caches.", step, step))
	dst := g.Load(g.Param("dst"), g.GP64())
	a := g.Load(g.Param("a"), g.GP64())
	b := g.Load(g.Param("b"), g.GP64())
	n := g.Load(g.Param("n"), g.GP64())
	nt := g.Load(g.Param("nt"), g.GP8())
	emit := k.prepare(g)

	block := k.unroll * step
	advance := func(by int) {
		for _, r := range []reg.Register{dst, a, b} {
			g.ADDQ(operand.Imm(uint64(by)), r)
		}
		g.SUBQ(operand.Imm(uint64(by)), n)
	}
	loop := func(label, exit string, by, unroll int, nt bool) {
		g.Label(label)
		g.CMPQ(n, operand.Imm(uint64(by)))
		g.JB(operand.LabelRef(exit))
		if nt && k.prefetch > 0 {
			for l := 0; l < by; l += 64 {
				g.PREFETCHT0(operand.Mem{Base: a, Disp: k.prefetch + l})
				g.PREFETCHT0(operand.Mem{Base: b, Disp: k.prefetch + l})
			}
		}
		for i := range unroll {
			off := i * step
			emit(operand.Mem{Base: dst, Disp: off}, operand.Mem{Base: a, Disp: off}, operand.Mem{Base: b, Disp: off}, nt)
		}
		advance(by)
		g.JMP(operand.LabelRef(label))
	}
	g.TESTB(nt, nt)
	g.JNZ(operand.LabelRef("ntblock"))
	loop("block", "single", block, k.unroll, false)
	loop("ntblock", "ntdone", block, k.unroll, true)
	g.Label("ntdone")
	g.SFENCE()
	loop("single", "done", step, 1, false)
	g.Label("done")
	g.VZEROUPPER()
	g.RET()
}

// broadcast32 returns a YMM register with v in every dword.
func (g *gen) broadcast32(v uint32) reg.VecVirtual {
	r := g.GP32()
	g.MOVL(operand.U32(v), r)
	y := g.YMM()
	g.VMOVD(r, y.AsX())
	g.VPBROADCASTD(y.AsX(), y)
	return y
}

// signMask returns a YMM register with only the sign bit set in every
// element of width bits (32 or 64).
func (g *gen) signMask(bits int) reg.VecVirtual {
	y := g.YMM()
	if bits == 64 {
		g.VPCMPEQQ(y, y, y)
		g.VPSLLQ(operand.U8(63), y, y)
	} else {
		g.VPCMPEQD(y, y, y)
		g.VPSLLD(operand.U8(31), y, y)
	}
	return y
}
