package sessionlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// lazyStart is what a log made by CreateLazy holds until its first
// message: the meta line and every entry logged before (the prompt,
// notices). A session the user opened and left without a word leaves no
// file, so it is never listed or picked by --continue.
type lazyStart struct {
	mu   sync.Mutex
	held []Entry // the meta line first
	open bool    // the file exists and held was written
}

// CreateLazy is Create, except that nothing reaches the disk until the
// first message entry is appended: then the file is created and the held
// entries are written before it, with their own times. Closing a log that
// never got a message leaves no file.
func CreateLazy(path string, meta Meta, secrets []string, opts ...Option) *Log {
	l := newLog(nil, path, secrets, 0, opts)
	l.lazy = &lazyStart{held: []Entry{{Type: TypeMeta, Time: l.now().UTC(), Meta: &meta}}}
	return l
}

// Written reports whether the log has a file on disk.
func (l *Log) Written() bool { return l != nil && l.opened() }

func (l *Log) opened() bool {
	if l.lazy == nil {
		return true
	}
	l.lazy.mu.Lock()
	defer l.lazy.mu.Unlock()
	return l.lazy.open
}

// hold keeps e in memory while a lazy log has no message yet, and creates
// the file when e is the first message. held reports that e was kept.
func (l *Log) hold(e Entry) (held bool, err error) {
	z := l.lazy
	if z == nil {
		return false, nil
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.open {
		return false, nil
	}
	if e.Type != TypeMessage {
		if e.Time.IsZero() {
			e.Time = l.now().UTC()
		}
		z.held = append(z.held, e)
		return true, nil
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return false, fmt.Errorf("creating session directory: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return false, fmt.Errorf("creating session log: %w", err)
	}
	if err := lock(f, l.path); err != nil {
		f.Close()
		return false, err
	}
	l.f = f
	for _, h := range z.held {
		if err := l.append(h); err != nil {
			return false, err
		}
	}
	z.held, z.open = nil, true
	return false, nil
}
