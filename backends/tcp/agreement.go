package tcp

import (
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/backends"
)

// agreement is what a rank of the named backend says in Hello.Agree: the
// settings every rank of a world must share before the ranks meet, one
// "--flag value" a line. A backend built on this one (proc) names itself,
// so that ranks started with different backends under one launcher are
// refused at the handshake rather than failing once data flows.
func agreement(backend string) string {
	if backend == "" {
		backend = Name
	}
	return "--backend " + backend
}

// disagreement is the error of a handshake in which the peer's Agree
// differs from me's: it names the first setting on which they differ and
// both values, as "rank 1 runs --backend proc where rank 0 runs --backend
// tcp".
func disagreement(peer, me Hello) error {
	theirs, mine := strings.Split(peer.Agree, "\n"), strings.Split(me.Agree, "\n")
	for i := range max(len(theirs), len(mine)) {
		t, m := at(theirs, i), at(mine, i)
		if t != m {
			return fmt.Errorf("%w: rank %d runs %s where rank %d runs %s",
				backends.ErrDisagree, peer.Rank, t, me.Rank, m)
		}
	}
	return fmt.Errorf("%w: rank %d and rank %d", backends.ErrDisagree, peer.Rank, me.Rank)
}

// at is s[i] quoted when it would not print as one plain line, or
// "nothing" past its end.
func at(s []string, i int) string {
	if i >= len(s) || s[i] == "" {
		return "nothing"
	}
	if strings.ContainsFunc(s[i], func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Sprintf("%q", s[i])
	}
	return s[i]
}
