package ui

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spinner draws "⠋ label 3s" on the current line of a terminal while
// something is pending. It shares the renderer's mutex: every draw and
// every erase happens under it, and stopping never waits for the ticker
// goroutine (which may itself be waiting for the mutex): a generation
// number tells a late tick that its spinner is gone.
type spinner struct {
	mu    *sync.Mutex // the renderer's
	write func(string)
	now   func() time.Time
	tick  time.Duration
	hint  string     // shown after the time when it fits, e.g. "· Ctrl-C interrupts"
	width func() int // the terminal's width: a spinner line must never wrap

	above      []string // rows shown above the spinner (a command's last lines), each narrower than the width
	aboveDrawn int      // how many of them are on screen
	below      []string // rows shown below it (what the user typed ahead), each narrower than the width
	belowDrawn int      // how many of them are on screen: the cursor ends on the last

	gen     int
	label   string
	started time.Time
	drawn   bool
	wg      sync.WaitGroup
}

// start shows label (replacing any spinner already shown). Call with mu held.
func (s *spinner) start(label string) {
	s.stop()
	s.gen++
	s.label = label
	s.started = s.now()
	s.draw()
	gen := s.gen
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.tick)
		defer t.Stop()
		for range t.C {
			s.mu.Lock()
			if s.gen != gen {
				s.mu.Unlock()
				return
			}
			s.draw()
			s.mu.Unlock()
		}
	}()
}

func (s *spinner) draw() {
	el := s.now().Sub(s.started)
	frame := spinFrames[int(el/(100*time.Millisecond))%len(spinFrames)]
	line := fmt.Sprintf("%s %s %s", frame, s.label, formatElapsed(el))
	if s.hint != "" && s.width != nil && StringWidth(line)+1+StringWidth(s.hint) < s.width() {
		line += " " + s.hint
	}
	var b strings.Builder
	if up := s.aboveDrawn + s.belowDrawn; up > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", up)
	}
	b.WriteString("\r\x1b[J")
	for _, l := range s.above {
		b.WriteString(l + "\r\n")
	}
	b.WriteString(line)
	for _, l := range s.below {
		b.WriteString("\r\n" + l)
	}
	s.aboveDrawn, s.belowDrawn = len(s.above), len(s.below)
	s.write(b.String())
	s.drawn = true
}

// stop erases the spinner. Call with mu held.
func (s *spinner) stop() {
	if s.label == "" {
		return
	}
	s.gen++
	s.label = ""
	if s.drawn {
		if up := s.aboveDrawn + s.belowDrawn; up > 0 {
			s.write(fmt.Sprintf("\x1b[%dA", up))
		}
		s.write("\r\x1b[J")
		s.drawn = false
		s.aboveDrawn, s.belowDrawn = 0, 0
	}
}

// running reports whether a spinner is shown, and its label.
func (s *spinner) running() (string, bool) { return s.label, s.label != "" }

func formatElapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
