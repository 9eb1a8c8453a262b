package walls

import (
	"runtime"
	"testing"
)

func TestBounds(t *testing.T) {
	wantMem := int64(DefaultMaxMemory)
	if half := physicalMemory() / 2; half > 0 && half < wantMem {
		wantMem = half
	}
	if runtime.GOOS == "linux" && physicalMemory() <= 0 {
		t.Fatal("physicalMemory found no MemTotal in /proc/meminfo")
	}
	for _, c := range []struct {
		env   []string
		procs int
		mem   int64
		bad   bool
	}{
		{env: nil, procs: DefaultMaxProcs, mem: wantMem},
		{env: []string{MaxProcsEnv + "=64", MaxMemoryEnv + "=1G"}, procs: 64, mem: 1 << 30},
		{env: []string{MaxMemoryEnv + "=512M"}, procs: DefaultMaxProcs, mem: 512 << 20},
		{env: []string{MaxMemoryEnv + "=20G"}, procs: DefaultMaxProcs, mem: 20 << 30}, // asked for, above the default: allowed
		{env: []string{MaxProcsEnv + "=0", MaxMemoryEnv + "=0"}, procs: 0, mem: 0},
		{env: []string{MaxProcsEnv + "=-1"}, bad: true},
		{env: []string{MaxMemoryEnv + "=lots"}, bad: true},
	} {
		procs, mem, err := bounds(c.env)
		if c.bad {
			if err == nil {
				t.Errorf("%v: no error", c.env)
			}
			continue
		}
		if err != nil || procs != c.procs || mem != c.mem {
			t.Errorf("%v: got %d, %d, %v; want %d, %d", c.env, procs, mem, err, c.procs, c.mem)
		}
	}
}
