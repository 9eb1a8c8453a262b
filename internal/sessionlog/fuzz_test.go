package sessionlog

import (
	"bytes"
	"testing"
)

// FuzzRead: a log damaged in any way is read without a panic, and what is
// returned is a prefix of the lines that parsed.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"type":"meta","meta":{"id":"x"}}` + "\n" + `{"type":"message","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` + "\n"))
	f.Add([]byte(`{"type":"notice","te`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _ := Read(bytes.NewReader(data))
		if len(entries) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d entries from %d lines", len(entries), bytes.Count(data, []byte("\n"))+1)
		}
	})
}
