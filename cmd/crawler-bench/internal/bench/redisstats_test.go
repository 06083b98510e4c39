package bench

import (
	"reflect"
	"testing"
	"time"
)

const infoSample = "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.250000\r\nused_cpu_sys_children:9.000000\r\n" +
	"used_cpu_user_main_thread:2.000000\r\n\r\n# Commandstats\r\n" +
	"cmdstat_evalsha:calls=10,usec=500,usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_hget:calls=40,usec=40,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_client|setinfo:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_info:calls=5,usec=100,usec_per_call=20.00,rejected_calls=0,failed_calls=0\r\n"

func TestParseRedisStats(t *testing.T) {
	st, err := parseRedisStats(infoSample)
	if err != nil {
		t.Fatal(err)
	}
	if st.CPU != 3750*time.Millisecond {
		t.Errorf("CPU = %v, want 3.75s (user + sys of the server, not its children)", st.CPU)
	}
	want := map[string]CommandStat{"evalsha": {10, 500}, "hget": {40, 40}, "client|setinfo": {2, 3}, "info": {5, 100}}
	if !reflect.DeepEqual(st.Commands, want) || st.Calls() != 57 {
		t.Errorf("commands = %v (%d calls), want %v", st.Commands, st.Calls(), want)
	}
	if _, err := parseRedisStats("used_cpu_sys:x\r\n"); err == nil {
		t.Errorf("a bad number was accepted")
	}
}

func TestMeterReading_since(t *testing.T) {
	earlier := meterReading{
		stats: RedisStats{CPU: time.Second, Commands: map[string]CommandStat{"hget": {100, 100}, "info": {1, 20}, "get": {7, 7}}},
		own:   map[string]int64{"info": 1, "hget": 10},
	}
	later := meterReading{
		stats: RedisStats{CPU: 3 * time.Second, Commands: map[string]CommandStat{
			"hget": {150, 160}, "info": {2, 40}, "get": {7, 7}, "evalsha": {5, 50}}},
		own: map[string]int64{"info": 2, "hget": 30},
	}
	got := later.since(earlier)
	// hget: 50 calls, 20 of them the benchmark's; info: the earlier
	// reading's INFO, which is the benchmark's; get did not run.
	want := RedisStats{CPU: 2 * time.Second, Commands: map[string]CommandStat{"hget": {30, 60}, "evalsha": {5, 50}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("since = %+v, want %+v", got, want)
	}
}

func TestSteadyRate(t *testing.T) {
	var points []progressPoint
	// 1 s of start, 100 pages/s for 10 s, then a 2 s tail.
	points = append(points, progressPoint{0, 0}, progressPoint{time.Second, 0})
	for s := 1; s <= 10; s++ {
		points = append(points, progressPoint{time.Duration(1+s) * time.Second, int64(100 * s)})
	}
	points = append(points, progressPoint{13 * time.Second, 1000})
	if got := steadyRate(points); got != 100 {
		t.Errorf("steadyRate = %v, want 100", got)
	}
	if got := steadyRate([]progressPoint{{0, 0}, {2 * time.Second, 50}}); got != 25 {
		t.Errorf("steadyRate of one step = %v, want the overall 25", got)
	}
}
