package tcp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
)

func TestControlPayload(t *testing.T) {
	// The layout of frame.go's description, byte by byte.
	m := controlMsg{Type: ctlRelay, Round: agree.Round{Kind: agree.Verdict, Seq: 0x0807060504030201},
		Vote: backends.Vote{Rank: 0x0a0b, Outcome: backends.Transient, Err: "boom"}}
	want := []byte{3, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0x0b, 0x0a, 0, 0, 1, 'b', 'o', 'o', 'm'}
	if got := appendControl(nil, m); !bytes.Equal(got, want) {
		t.Fatalf("appendControl =\n% x\nwant\n% x", got, want)
	}

	long := strings.Repeat("x", maxAbort+10)
	tests := []struct {
		name string
		m    controlMsg
		want controlMsg // what decodes; m when zero
	}{
		{name: "vote", m: controlMsg{Type: ctlVote, Round: agree.Round{Kind: agree.Verdict, Seq: 1}, Vote: backends.Vote{Rank: 3}}},
		{name: "vote to recover", m: controlMsg{Type: ctlVote, Round: agree.Round{Kind: agree.Recovered, Seq: 9}, Vote: backends.Vote{Rank: 1}}},
		{name: "verdict", m: controlMsg{Type: ctlVerdict, Round: agree.Round{Kind: agree.Verdict, Seq: 17},
			Vote: backends.Vote{Rank: 2, Outcome: backends.Fatal, Err: "rank 2 is gone: its control connection closed"}}},
		{name: "relay", m: m},
		{name: "text cut", m: controlMsg{Type: ctlVerdict, Round: agree.Round{Kind: agree.Verdict, Seq: 2},
			Vote: backends.Vote{Rank: 1, Outcome: backends.Transient, Err: long}},
			want: controlMsg{Type: ctlVerdict, Round: agree.Round{Kind: agree.Verdict, Seq: 2},
				Vote: backends.Vote{Rank: 1, Outcome: backends.Transient, Err: long[:maxAbort]}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == (controlMsg{}) {
				want = tt.m
			}
			got, err := decodeControl(appendControl(nil, tt.m), 1<<16)
			if err != nil || got != want {
				t.Fatalf("decodeControl = %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

func TestControlPayloadRejects(t *testing.T) {
	valid := appendControl(nil, controlMsg{Type: ctlVote, Round: agree.Round{Kind: agree.Verdict, Seq: 4}, Vote: backends.Vote{Rank: 3}})
	with := func(i int, b byte) []byte { p := bytes.Clone(valid); p[i] = b; return p }
	tests := []struct {
		name string
		p    []byte
		want string
	}{
		{"empty", nil, "payload of 0 bytes"},
		{"short", valid[:ctlFixedSize-1], "payload of 14 bytes"},
		{"text too long", append(bytes.Clone(valid), make([]byte, maxAbort+1)...), "payload of 4112 bytes"},
		{"type 0", with(0, 0), "unknown control message type 0"},
		{"type 4", with(0, 4), "unknown control message type 4"},
		{"kind 0", with(1, 0), "unknown round kind 0"},
		{"kind 3", with(1, 3), "unknown round kind 3"},
		{"rank = size", with(10, 4), "rank 4 in a world of 4"},
		{"rank 2^32-1", append(append(bytes.Clone(valid[:10]), 0xff, 0xff, 0xff, 0xff), valid[14:]...), "rank 4294967295"},
		{"outcome 3", with(14, 3), "unknown outcome 3"},
		{"relay of a success", with(0, byte(ctlRelay)), "relay of a succeeded vote"},
		{"relay of a recovery", func() []byte { p := with(0, byte(ctlRelay)); p[1], p[14] = byte(agree.Recovered), 2; return p }(), "while recovering"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeControl(tt.p, 4)
			if !errors.Is(err, ErrBadFrame) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrBadFrame mentioning %q", err, tt.want)
			}
		})
	}
}

func TestReadControl(t *testing.T) {
	m := controlMsg{Type: ctlVerdict, Round: agree.Round{Kind: agree.Recovered, Seq: 3}, Vote: backends.Vote{Rank: 1, Err: "x"}}
	p := appendControl(nil, m)
	frame := func(h Header, p []byte) []byte {
		b := make([]byte, HeaderSize, HeaderSize+len(p))
		h.Put(b)
		return append(b, p...)
	}
	good := frame(Header{Kind: KindControl, Len: uint64(len(p))}, p)
	tests := []struct {
		name string
		in   []byte
		is   error // nil: m decodes
		want string
	}{
		{"valid", good, nil, ""},
		{"end between frames", nil, io.EOF, ""},
		{"data frame", frame(Header{Kind: KindData, Len: uint64(len(p))}, p), ErrBadFrame, "expected a control"},
		{"in a call", frame(Header{Kind: KindControl, Call: 2, Len: uint64(len(p))}, p), ErrBadFrame, "call 2"},
		{"numbered", frame(Header{Kind: KindControl, Seq: 1, Len: uint64(len(p))}, p), ErrBadFrame, "seq 1"},
		{"oversized", frame(Header{Kind: KindControl, Len: ctlFixedSize + maxAbort + 1}, nil), ErrBadFrame, "at most 4111"},
		{"cut", good[:len(good)-1], ErrTruncated, "15 of 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr [HeaderSize]byte
			got, err := readControl(bytes.NewReader(tt.in), &hdr, make([]byte, ctlFixedSize+maxAbort), 2)
			if tt.is == nil {
				if err != nil || got != m {
					t.Fatalf("readControl = %+v, %v; want %+v", got, err, m)
				}
				return
			}
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tt.is, tt.want)
			}
		})
	}
}

// FuzzControl checks that the control decoder never panics, rejects only
// with ErrBadFrame, and accepts only what appendControl writes back byte
// for byte.
func FuzzControl(f *testing.F) {
	f.Add(appendControl(nil, controlMsg{Type: ctlVote, Round: agree.Round{Kind: agree.Verdict, Seq: 1}}))
	f.Add(appendControl(nil, controlMsg{Type: ctlRelay, Round: agree.Round{Kind: agree.Verdict, Seq: 1 << 40},
		Vote: backends.Vote{Rank: 7, Outcome: backends.Fatal, Err: "gone"}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := decodeControl(p, 8)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) {
				t.Fatalf("rejection %v does not wrap ErrBadFrame", err)
			}
			return
		}
		if out := appendControl(nil, m); !bytes.Equal(out, p) {
			t.Fatalf("appendControl(decodeControl(p)) =\n% x\np =\n% x", out, p)
		}
	})
}
