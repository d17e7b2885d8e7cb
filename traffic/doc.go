// Package traffic holds the sizes of a variable-size all-to-all: an n x n
// matrix of bytes per iteration, whose row is the sending rank and whose
// column is the receiving rank, as nccl-tests 2.19's alltoallv_perf
// defines it (NVIDIA/nccl-tests src/alltoallv.cu, version 2.19.6, commit
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432).
//
// A matrix comes from one of three places:
//
//   - a file in nccl-tests' format (ReadFile): whitespace-separated
//     numbers of bytes, one row per line, square, at least as many rows
//     as ranks (the first n rows and columns are used), every value scaled
//     by NCCL_TESTS_ALLTOALLV_MATRIX_SCALE and aligned down to 16 bytes;
//   - nccl-tests' generated pattern (Spread): every rank sends the row's
//     size, to each peer a blend, weighted by NCCL_TESTS_ALLTOALLV_SPREAD,
//     of an even share and a share growing with the distance in rank ids;
//   - a generator of mixture-of-experts routing (Uniform, Zipf, Hot): each
//     rank routes its tokens of H bytes to k distinct experts out of E,
//     the experts placed on the ranks, drawn from a seed anew for every
//     iteration or once for all.
//
// A Spec, parsed from a flag value such as
// "zipf:s=1.2,tokens=4096,hidden=14336,experts=64,topk=8,seed=3" or read
// from nccl-tests' variables by ReadEnv, names one of them; its Generator
// gives the matrix of an iteration, or one sender's row of it, the same
// in every process that asks with the same spec, iteration and size.
// Summarize gives the figures of a matrix: bytes per rank sent and
// received (min, mean, max), the imbalance (the most any rank received
// over the mean) and the rank that received most.
//
// docs/traffic.md is the chapter for users. Every bound is a constant of
// this package (MaxRanks, MaxCells, MaxRankBytes, ...), and every refusal
// is one line naming the value.
package traffic
