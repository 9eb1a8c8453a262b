package tools

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestBackgroundEndlessOutputBounded: a background command that prints
// without end keeps harness's heap bounded (no allocation per write once
// the kept output is full), and bash_output returns the latest 1 MiB with
// a note naming how much was dropped and the limit.
func TestBackgroundEndlessOutputBounded(t *testing.T) {
	env, _ := newEnv(t)
	jobs := &Jobs{Sandbox: env.Sandbox}
	t.Cleanup(jobs.Close)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	id, err := jobs.Start("yes harness-background-output", false)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	raw, _ := json.Marshal(map[string]any{"id": id})
	res := (&BashOutput{Jobs: jobs}).Run(context.Background(), raw)
	runtime.ReadMemStats(&after)
	if _, err := jobs.Stop(id); err != nil {
		t.Fatal(err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	jobs.mu.Lock()
	total := jobs.jobs[id].total
	jobs.mu.Unlock()
	t.Logf("%d MiB printed in 2 s; %d MiB allocated; %d KiB returned", total>>20, allocated>>20, len(res.Content)>>10)
	if allocated > 16<<20 {
		t.Errorf("%d MiB of endless output allocated %d MiB in harness", total>>20, allocated>>20)
	}
	if !strings.Contains(res.Content, "bytes of output were not kept: harness keeps the latest 1 MiB of a background command's output; they follow]") {
		t.Errorf("bash_output does not say what was dropped and the limit: %.200q", res.Content)
	}
	if len(res.Content) > 1<<20+512 {
		t.Errorf("bash_output returned %d bytes, over the 1 MiB kept", len(res.Content))
	}
}
