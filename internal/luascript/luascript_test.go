package luascript

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/internal/testenv"
)

var errProbe = errors.New("probe failed")

// TestLoad runs one script on the real Redis and on miniredis (the embedded
// Redis of crawler run): the prelude's clock and integer formatting work,
// and an error reply comes back as the package's sentinel with its detail.
func TestLoad(t *testing.T) {
	mr := miniredis.RunT(t)
	real, _ := testenv.Redis(t)
	servers := map[string]redis.UniversalClient{
		"redis":     real,
		"miniredis": redis.NewClient(&redis.Options{Addr: mr.Addr()}),
	}
	script := Set{FS: os.DirFS("testdata")}.Load("probe.lua")
	codes := Codes{"PROBE": errProbe}
	ctx := context.Background()
	for name, rdb := range servers {
		t.Run(name, func(t *testing.T) {
			res, err := script.Run(ctx, rdb, nil, "", "").Slice()
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			now, _ := res[0].(int64)
			if d := time.Since(time.UnixMilli(now)); name == "redis" && (d > time.Minute || d < -time.Minute) {
				t.Errorf("now_ms = %d, %s away from the local clock", now, d)
			}
			if res[1] != "1000000000000000" {
				t.Errorf("int(1e15) = %v, want 1000000000000000", res[1])
			}

			err = codes.Translate(script.Run(ctx, rdb, nil, "PROBE", "it broke").Err())
			if !errors.Is(err, errProbe) || err.Error() != "probe failed: it broke" {
				t.Errorf("Translate = %v, want errProbe with its detail", err)
			}
			other := script.Run(ctx, rdb, nil, "OTHER", "x").Err()
			if got := codes.Translate(other); got != other {
				t.Errorf("Translate(unknown code) = %v, want the error unchanged", got)
			}
			if code, detail, ok := ErrorCode(other); !ok || code != "OTHER" || detail != "x" {
				t.Errorf("ErrorCode = %q %q %v, want OTHER x true", code, detail, ok)
			}
		})
	}
	if got := codes.Translate(nil); got != nil {
		t.Errorf("Translate(nil) = %v", got)
	}
	plain := errors.New("dial tcp: refused")
	if got := codes.Translate(plain); got != plain {
		t.Errorf("Translate(non-reply) = %v, want it unchanged", got)
	}
}

// TestSet_Consts: the header carries each constant's Go value to Lua
// unchanged, quotes, backslashes and bytes beyond ASCII included.
func TestSet_Consts(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	consts := Consts{"F_ODD": "it's a \\ field\n\xc3\xa9", "R_NONE": -1, "N_BIG": int64(1) << 40}
	set := Set{FS: os.DirFS("testdata"), Consts: consts}
	src := set.Source("consts.lua")
	res, err := redis.NewScript(src).Run(context.Background(), rdb, nil).Slice()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, src)
	}
	if res[0] != consts["F_ODD"] || res[1] != int64(-1) || res[2] != int64(1)<<40 {
		t.Errorf("script read %q, want %q, -1, 2^40", res, consts["F_ODD"])
	}
}

// TestSet_With: a set composed with another loads files of either, in the
// order named, with both sets' constants and codes; a file, constant or
// code both hold is refused.
func TestSet_With(t *testing.T) {
	own := Set{FS: fstest.MapFS{"lua/check.lua": {Data: []byte("local checked = A\n")}},
		Consts: Consts{"A": 1}, Codes: Codes{"PROBE": errProbe}}
	other := Set{FS: fstest.MapFS{"lua/tail.lua": {Data: []byte("return checked + B\n")}}, Consts: Consts{"B": 2}}
	both := own.With(other)
	src := both.Source("lua/check.lua", "lua/tail.lua")
	if want := "local A = 1\nlocal B = 2\n\nlocal checked = A\n\nreturn checked + B\n"; !strings.HasSuffix(src, want) {
		t.Errorf("source ends %q, want %q", src[len(prelude):], want)
	}
	if both.Codes["PROBE"] != errProbe {
		t.Errorf("codes %v, want PROBE from the first set", both.Codes)
	}
	for name, f := range map[string]func(){
		"a file both hold":     func() { own.With(Set{FS: own.FS}).Source("lua/check.lua") },
		"a constant both hold": func() { own.With(Set{FS: other.FS, Consts: Consts{"A": 3}}) },
		"a code both hold":     func() { own.With(Set{FS: other.FS, Codes: own.Codes}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
