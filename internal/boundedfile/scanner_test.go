package boundedfile

import (
	"bufio"
	"io"
)

func newScanner(r io.Reader) *bufio.Scanner { return bufio.NewScanner(r) }
