package tools

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"
)

// seen remembers, per file, what the agent last saw of it: what read_file
// returned it whole from, or what write_file or edit_file left. A write or
// an edit whose file no longer holds that was changed by someone else
// since (the user in their editor, another session, a formatter the user
// runs): it is refused, and the model told to read the file again, so a
// line the user added is never overwritten from a stale copy. A file the
// agent never read is not judged (the model may write what it has not
// read, as before), and after the agent's own commands run, what they left
// counts as seen: the agent ran them.
type seen struct {
	mu    sync.Mutex
	files map[string]seenFile
}

type seenFile struct {
	sum   [sha256.Size]byte
	size  int64
	mtime time.Time
}

// record notes that the agent saw data at path.
func (s *seen) record(path string, data []byte) {
	fi, err := os.Stat(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]seenFile{}
	}
	sf := seenFile{sum: sha256.Sum256(data), size: int64(len(data))}
	if err == nil {
		sf.mtime = fi.ModTime()
	}
	s.files[path] = sf
}

// stale returns an error saying path changed since the agent saw it,
// when current (the file's content now) is not what it saw.
func (s *seen) stale(path, shown string, current []byte) error {
	s.mu.Lock()
	sf, ok := s.files[path]
	s.mu.Unlock()
	if !ok || sha256.Sum256(current) == sf.sum {
		return nil
	}
	return fmt.Errorf("%s changed since you last read it (someone else edited it: the user, another session or a tool they ran); nothing was written. Read it again and make your change on what it holds now", shown)
}

// refresh takes what the agent's own command left in the files it had
// seen as seen; a file whose size and time did not move is not read.
func (s *seen) refresh(read func(path string) ([]byte, error)) {
	s.mu.Lock()
	paths := make([]string, 0, len(s.files))
	for p, sf := range s.files {
		if fi, err := os.Stat(p); err != nil || fi.Size() != sf.size || !fi.ModTime().Equal(sf.mtime) {
			paths = append(paths, p)
		}
	}
	s.mu.Unlock()
	for _, p := range paths {
		data, err := read(p)
		if err != nil {
			s.mu.Lock()
			delete(s.files, p) // gone or unreadable: nothing to judge by
			s.mu.Unlock()
			continue
		}
		s.record(p, data)
	}
}
