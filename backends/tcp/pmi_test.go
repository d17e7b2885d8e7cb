package tcp

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// fakePMI serves the PMI-1 commands of n clients on socket pairs, as
// Hydra's proxy does; with noBarrier, it never lets the barrier out. It
// returns the clients, rank by rank.
func fakePMI(t *testing.T, n int, noBarrier bool) []*pmi {
	t.Helper()
	kvs := map[string]string{}
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	go func() {
		for range n {
			<-arrived
		}
		if !noBarrier {
			close(release)
		}
	}()
	if noBarrier {
		t.Cleanup(func() { close(release) })
	}
	var clients []*pmi
	for rank := range n {
		server, client := net.Pipe()
		t.Cleanup(func() { server.Close(); client.Close() })
		go func() {
			r := bufio.NewReader(server)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				f := map[string]string{}
				for _, kv := range strings.Fields(line) {
					k, v, _ := strings.Cut(kv, "=")
					f[k] = v
				}
				var reply string
				switch f["cmd"] {
				case "init":
					reply = "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0"
				case "get_my_kvsname":
					reply = "cmd=my_kvsname kvsname=kvs_1_0"
				case "put":
					kvs[f["key"]] = f["value"]
					reply = "cmd=put_result rc=0"
				case "barrier_in":
					arrived <- struct{}{}
					<-release
					reply = "cmd=barrier_out"
				case "get":
					reply = "cmd=get_result rc=0 value=" + kvs[f["key"]]
				case "finalize":
					reply = "cmd=finalize_ack"
				}
				server.Write([]byte(reply + "\n"))
			}
		}()
		clients = append(clients, &pmi{conn: client, r: bufio.NewReader(client), rank: rank})
	}
	return clients
}

func TestPMIMeeting(t *testing.T) {
	c := fakePMI(t, 2, false)
	c0, c1 := c[0], c[1]
	deadline := time.Now().Add(5 * time.Second)
	errc := make(chan error, 1)
	go func() { errc <- c0.publish(context.Background(), "127.0.0.1:7", []byte("abc"), deadline) }()
	addr, secret, err := c1.await(context.Background(), deadline)
	if err != nil || addr != "127.0.0.1:7" || string(secret) != "abc" {
		t.Fatalf("await = %q %q %v", addr, secret, err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	c0.close()
	c1.close()
}

// TestPMIRankMissing: a rank that never reaches the barrier ends the
// others' wait at the connect timeout, saying what they waited for.
func TestPMIRankMissing(t *testing.T) {
	c1 := fakePMI(t, 2, true)[1]
	_, _, err := c1.await(context.Background(), time.Now().Add(200*time.Millisecond))
	if !errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "PMI barrier") {
		t.Fatalf("got %v, want a timeout naming the barrier", err)
	}
}

// TestPMISecretWithSpaces: a secret from HCCL_TEST_SECRET may hold what a
// PMI value cannot (spaces, commas, =); it travels in hex.
func TestPMISecretWithSpaces(t *testing.T) {
	c := fakePMI(t, 2, false)
	deadline := time.Now().Add(5 * time.Second)
	want := "a b,c=d"
	errc := make(chan error, 1)
	go func() { errc <- c[0].publish(context.Background(), "[::1]:7", []byte(want), deadline) }()
	addr, secret, err := c[1].await(context.Background(), deadline)
	if err != nil || addr != "[::1]:7" || string(secret) != want {
		t.Fatalf("await = %q %q %v", addr, secret, err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
