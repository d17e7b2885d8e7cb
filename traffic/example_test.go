package traffic_test

import (
	"fmt"

	"github.com/hccl-test/hccl-test/traffic"
)

// Routings at 64 ranks, one expert a rank, 4096 tokens of 7168 bf16
// values a rank: what each draws. A token goes to an expert once, so with
// top-8 the rank of one expert receives at most an eighth of everything
// (imbalance 8 at 64 ranks), however skewed the router; with top-1 the hot
// expert takes its half (imbalance 32).
func Example() {
	for _, s := range []string{
		"uniform:tokens=4096,hidden=14336,topk=8",
		"zipf:s=1,tokens=4096,hidden=14336,topk=8",
		"zipf:s=1.5,tokens=4096,hidden=14336,topk=8",
		"hot:hot=1,share=0.5,tokens=4096,hidden=14336,topk=8",
		"hot:hot=1,share=0.5,tokens=4096,hidden=14336,topk=1",
	} {
		spec, err := traffic.ParseSpec(s)
		if err != nil {
			fmt.Println(err)
			return
		}
		g, err := traffic.NewGenerator(spec, 64)
		if err != nil {
			fmt.Println(err)
			return
		}
		m, err := g.Matrix(0, 0)
		if err != nil {
			fmt.Println(err)
			return
		}
		sum := traffic.Summarize(m)
		fmt.Printf("%-52s imbalance %5.2f at rank %d, recv min/max %d/%d MiB\n",
			s, sum.Imbalance, sum.HotRank, sum.RecvMin>>20, sum.RecvMax>>20)
	}
	// Output:
	// uniform:tokens=4096,hidden=14336,topk=8              imbalance  1.01 at rank 39, recv min/max 443/452 MiB
	// zipf:s=1,tokens=4096,hidden=14336,topk=8             imbalance  7.10 at rank 0, recv min/max 121/3181 MiB
	// zipf:s=1.5,tokens=4096,hidden=14336,topk=8           imbalance  7.98 at rank 0, recv min/max 51/3573 MiB
	// hot:hot=1,share=0.5,tokens=4096,hidden=14336,topk=8  imbalance  7.97 at rank 0, recv min/max 394/3572 MiB
	// hot:hot=1,share=0.5,tokens=4096,hidden=14336,topk=1  imbalance 31.93 at rank 0, recv min/max 27/1787 MiB
}
