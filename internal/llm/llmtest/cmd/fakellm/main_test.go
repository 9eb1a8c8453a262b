package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadScript(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	src := "# comment\n{\"text\":\"a\",\"delay\":\"50ms\"}\n\n{\"status\":429,\"retry_after\":\"2\",\"delay\":1000}\n" +
		`{"tool_calls":[{"name":"bash","input":"{\"cmd\":\"ls\"}"}],"usage":{"input_tokens":5,"output_tokens":2}}` + "\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readScript(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Text != "a" || got[0].Delay != 50*time.Millisecond ||
		got[1].Status != 429 || got[1].RetryAfter != "2" || got[1].Delay != time.Microsecond ||
		got[2].ToolCalls[0].Input != `{"cmd":"ls"}` || got[2].Usage.Input != 5 || got[2].Usage.Output != 2 {
		t.Errorf("script = %+v", got)
	}
	if err := os.WriteFile(p, []byte("{\"delay\":\"soon\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readScript(p); err == nil {
		t.Error("bad delay accepted")
	}
}
