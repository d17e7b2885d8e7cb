package tcp

import (
	"bytes"
	"testing"
)

func TestLastLine(t *testing.T) {
	var out bytes.Buffer
	l := &lastLine{w: &out}
	for _, chunk := range []string{"first line\nsec", "ond", " line\n\n", "hccl-test: the error\n", "partial"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.String(); got != "the error" {
		t.Errorf("last line %q, want %q", got, "the error")
	}
	if out.String() != "first line\nsecond line\n\nhccl-test: the error\npartial" {
		t.Errorf("passed on %q", out.String())
	}
}
