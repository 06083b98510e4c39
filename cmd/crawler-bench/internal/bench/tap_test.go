package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/luascript"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// tapClient is a client of the test Redis through a new tap.
func tapClient(t *testing.T) (*Tap, *redis.Client) {
	t.Helper()
	testenv.Redis(t) // fails the test when no Redis answers
	tap, err := newTap(testenv.RedisAddr(), newScriptNames())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tap.Close() })
	c := redis.NewClient(&redis.Options{Addr: tap.Addr(), PoolSize: 1, Protocol: 3})
	t.Cleanup(func() { _ = c.Close() })
	return tap, c
}

// roundTrip writes raw requests in one write and reads n replies.
func roundTrip(t *testing.T, conn net.Conn, r *bufio.Reader, raw string, n int) {
	t.Helper()
	if _, err := conn.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTap_roundTrips(t *testing.T) {
	tap, _ := tapClient(t)
	conn, err := net.Dial("tcp", tap.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	key := testenv.UniquePrefix(t) + ":n"
	incr := "*2\r\n$4\r\nINCR\r\n$" + strconv.Itoa(len(key)) + "\r\n" + key + "\r\n"
	for range 3 {
		roundTrip(t, conn, r, incr, 1)
	}
	roundTrip(t, conn, r, strings.Repeat(incr, 5), 5) // a pipeline
	roundTrip(t, conn, r, "PING\r\n", 1)              // the inline form
	roundTrip(t, conn, r, "*2\r\n$3\r\nDEL\r\n$"+strconv.Itoa(len(key))+"\r\n"+key+"\r\n", 1)
	want := map[string]int64{"incr": 8, "ping": 1, "del": 1}
	testenv.Eventually(t, time.Minute, fmt.Sprintf("counts %v in 6 round trips", want), func() bool {
		got := tap.Counts()
		return reflect.DeepEqual(got.Commands, want) && got.RoundTrips == 6
	})
}

func TestTap_scripts(t *testing.T) {
	ctx := context.Background()
	prefix := testenv.UniquePrefix(t)
	tap, c := tapClient(t)
	// A source of its own, so that no earlier run has cached it in Redis.
	script := redis.NewScript(luascript.Prelude() + "\n-- Probe.Get: read a key (" + prefix + ")\nreturn redis.call('GET', KEYS[1])")
	for range 3 {
		if err := script.Run(ctx, c, []string{prefix + ":k"}).Err(); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
	}
	// go-redis sends EVALSHA, and EVAL with the source after NOSCRIPT;
	// the failed EVALSHA is named once the source is seen.
	testenv.Eventually(t, time.Minute, "4 calls of Probe.Get (3 EVALSHA, 1 EVAL)", func() bool {
		return tap.Counts().Commands["script Probe.Get"] == 4
	})
}

func TestTap_Close(t *testing.T) {
	tap, _ := tapClient(t)
	conn, err := net.Dial("tcp", tap.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+PONG") {
		t.Fatalf("inline PING through the tap: %q, %v", line, err)
	}
	// Close ends relays whose clients are still connected.
	if err := tap.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadString('\n'); err == nil {
		t.Errorf("the connection is still open after Close")
	}
}
