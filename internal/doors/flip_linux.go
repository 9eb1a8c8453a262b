package doors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/checkpoint"
)

func init() {
	register(probe{
		name: "checkpoints: a file flipped to a secret",
		run: func(ctx context.Context, w *world) (string, string) {
			const races = 300
			var flips atomic.Int64
			for i := range races {
				root := filepath.Join(w.project, fmt.Sprint(i))
				os.MkdirAll(root, 0o755)
				f, alt := filepath.Join(root, "notes.txt"), filepath.Join(root, "notes.alt")
				os.WriteFile(f, []byte("harmless\n"), 0o644)
				os.Symlink(w.secret, alt)
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					// A command swapping the file and a link to the key,
					// one atomic exchange at a time, as fast as it can.
					defer close(done)
					for {
						select {
						case <-stop:
							return
						default:
						}
						if unix.Renameat2(unix.AT_FDCWD, f, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE) == nil {
							flips.Add(1)
						}
					}
				}()
				// A fresh store reads every file it finds: the scan of a
				// session's first call.
				store, err := checkpoint.Open(filepath.Join(w.base, "store", fmt.Sprintf("s%d.jsonl", i)), root)
				if err != nil {
					close(stop)
					<-done
					return "", "no checkpoint store: " + err.Error()
				}
				end := store.Begin("c", "bash")
				end()
				close(stop)
				<-done
			}
			if p := holds(filepath.Join(w.base, "store"), secretText[:30]); p != "" {
				return "the key outside the project was copied into the checkpoint store (" + filepath.Base(p) + ")", ""
			}
			return "", fmt.Sprintf("%d races, %d flips", races, flips.Load())
		},
	})
}
