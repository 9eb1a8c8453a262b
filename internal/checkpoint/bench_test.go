package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCheckpointCall: the host time checkpointing adds to one call
// that changes one file, in a project of 2,000 source files (4 KiB each,
// 8 MiB) beside a 20,000-file node_modules that is not walked; and the
// store's size after 200 such calls.
//
//	go test -run '^$' -bench CheckpointCall -benchtime 200x ./internal/checkpoint/
func BenchmarkCheckpointCall(b *testing.B) {
	root := b.TempDir()
	data := make([]byte, 4096)
	for i := 0; i < 2000; i++ {
		d := filepath.Join(root, "src", fmt.Sprintf("pkg%02d", i%50))
		os.MkdirAll(d, 0o755)
		for j := range data {
			data[j] = byte(i + j)
		}
		os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.go", i)), data, 0o644)
	}
	for i := 0; i < 20000; i++ {
		d := filepath.Join(root, "node_modules", fmt.Sprintf("m%03d", i%200))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, fmt.Sprintf("i%05d.js", i)), []byte("x"), 0o644)
	}
	journal := filepath.Join(b.TempDir(), "checkpoints", "s.jsonl")
	s, err := Open(journal, root)
	if err != nil {
		b.Fatal(err)
	}
	s.StartTurn()
	base := dirSize(blobDir(journal))
	b.ResetTimer()
	i := 0
	for b.Loop() {
		end := s.Begin(fmt.Sprint(i), "bash")
		p := filepath.Join(root, "src", fmt.Sprintf("pkg%02d", i%50), fmt.Sprintf("f%04d.go", i%2000))
		os.WriteFile(p, []byte(fmt.Sprintf("changed %d\n", i)), 0o644)
		end()
		i++
	}
	b.StopTimer()
	b.ReportMetric(float64(base)/(1<<20), "MiB-at-open")
	b.ReportMetric(float64(dirSize(blobDir(journal))-base)/1024, "KiB-added")
	if fi, err := os.Stat(journal); err == nil {
		b.ReportMetric(float64(fi.Size())/1024, "KiB-journal")
	}
}
