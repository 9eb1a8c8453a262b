package ui

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Notify modes: how a long turn's end, or a prompt that waits, is told to
// someone who looked away.
const (
	NotifyOff    = "off"
	NotifyBell   = "bell"   // the terminal bell (BEL)
	NotifyOSC9   = "osc9"   // bell + OSC 9 desktop notification (iTerm2, WezTerm, Ghostty, Windows Terminal)
	NotifyOSC777 = "osc777" // bell + OSC 777 notify (foot, urxvt, VTE terminals)
	NotifyAuto   = "auto"   // the best the terminal is known to show
)

// DefaultNotifyAfter is how long a turn must run before its end, or a
// prompt in it, is notified.
const DefaultNotifyAfter = 30 * time.Second

// Notifier rings the bell and sends desktop notifications as escape
// sequences the terminal shows. It is off unless the output is a
// terminal; "auto" picks from the terminal's identity (TERM_PROGRAM,
// VTE_VERSION, TERM), and inside tmux or screen, which do not pass the
// sequences on, uses the bell alone.
type Notifier struct {
	Out   io.Writer
	Mode  string        // one of the Notify modes, resolved (never auto)
	After time.Duration // a turn shorter than this is not notified
}

// NewNotifier resolves mode (empty means auto) for the terminal t and
// the environment getenv. A bad mode is an error naming the good ones.
func NewNotifier(t *Term, getenv func(string) string, mode string, after time.Duration) (*Notifier, error) {
	mode = strings.ToLower(strings.TrimSpace(mode))
	if after <= 0 {
		after = DefaultNotifyAfter
	}
	n := &Notifier{Out: t.Out, After: after}
	switch mode {
	case "", NotifyAuto:
		mode = detectNotify(getenv)
	case NotifyOff, NotifyBell, NotifyOSC9, NotifyOSC777:
	default:
		return nil, fmt.Errorf("HARNESS_NOTIFY is %q: use auto, bell, osc9, osc777 or off", mode)
	}
	if !t.TTY || getenv("TERM") == "dumb" {
		mode = NotifyOff // nothing there to show it
	}
	n.Mode = mode
	return n, nil
}

// detectNotify is the mode auto takes: a desktop notification where the
// terminal is known to show one, else the bell.
func detectNotify(getenv func(string) string) string {
	if getenv("TMUX") != "" || strings.HasPrefix(getenv("TERM"), "screen") {
		return NotifyBell
	}
	switch getenv("TERM_PROGRAM") {
	case "iTerm.app", "WezTerm", "ghostty":
		return NotifyOSC9
	}
	if getenv("WT_SESSION") != "" {
		return NotifyOSC9
	}
	if getenv("VTE_VERSION") != "" || strings.HasPrefix(getenv("TERM"), "foot") || strings.HasPrefix(getenv("TERM"), "rxvt") {
		return NotifyOSC777
	}
	return NotifyBell
}

// Due reports whether something that has run for d is worth a
// notification.
func (n *Notifier) Due(d time.Duration) bool {
	return n != nil && n.Mode != NotifyOff && d >= n.After
}

// Send notifies: the bell, and the desktop notification of the mode with
// title and body (sanitized: no escape can ride in them).
func (n *Notifier) Send(title, body string) {
	if n == nil || n.Mode == NotifyOff {
		return
	}
	clean := func(s string) string { return strings.NewReplacer(";", ",", "\n", " ").Replace(Sanitize(s)) }
	seq := "\a"
	switch n.Mode {
	case NotifyOSC9:
		seq = "\x1b]9;" + clean(title+": "+body) + "\x1b\\" + seq
	case NotifyOSC777:
		seq = "\x1b]777;notify;" + clean(title) + ";" + clean(body) + "\x1b\\" + seq
	}
	io.WriteString(n.Out, seq)
}
