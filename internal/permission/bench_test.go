package permission

import (
	"strings"
	"testing"
)

func BenchmarkDecide(b *testing.B) {
	g := testGate(b, nil)
	for _, bc := range []struct{ name, cmd string }{
		{"typical", "cd sub && go test ./... 2>&1 | tail -n 20"},
		{"git", "git status --short && git log --oneline -5"},
		{"write", "sort -rno out.txt notes.txt && echo done >> src/log.txt"},
		{"arith", "for ((i=0;i<3;i++)); do [[ $i -eq 1 ]] && printf -v x '%s' $i; done"},
		{"adversarial", `bash -c "eval 'ls \$(printf %s c''url)'" | xargs -I{} sh -c 'cat {}' > /etc/x`},
		{"long", strings.Repeat("grep -rn 'TODO(x)' ./internal/pkg/file.go | head -n 3 && ", 500) + "echo done > out.txt"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := Request{Tool: "bash", Command: bc.cmd}
			b.SetBytes(int64(len(bc.cmd)))
			b.ReportAllocs()
			for b.Loop() {
				g.Decide(req)
			}
		})
	}
	b.Run("file", func(b *testing.B) {
		req := Request{Tool: "write_file", Path: "internal/pkg/file.go", Write: true}
		for b.Loop() {
			g.Decide(req)
		}
	})
}
