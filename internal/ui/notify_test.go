package ui

import (
	"strings"
	"testing"
	"time"
)

func TestNotifier(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name, mode string
		tty        bool
		getenv     func(string) string
		want       string // the mode resolved
		sent       string // what Send writes
	}{
		{"auto in iTerm2", "", true, env("TERM_PROGRAM", "iTerm.app", "TERM", "xterm-256color"), NotifyOSC9, "\x1b]9;harness: done, at last\x1b\\\a"},
		{"auto in a VTE terminal", "auto", true, env("VTE_VERSION", "7600", "TERM", "xterm-256color"), NotifyOSC777, "\x1b]777;notify;harness;done, at last\x1b\\\a"},
		{"auto in tmux", "", true, env("TMUX", "/tmp/x", "TERM_PROGRAM", "iTerm.app"), NotifyBell, "\a"},
		{"auto elsewhere", "", true, env("TERM", "xterm"), NotifyBell, "\a"},
		{"off", "off", true, env("TERM_PROGRAM", "iTerm.app"), NotifyOff, ""},
		{"no terminal", "osc9", false, env(), NotifyOff, ""},
		{"a dumb terminal", "bell", true, env("TERM", "dumb"), NotifyOff, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			n, err := NewNotifier(&Term{Out: &out, TTY: tt.tty}, tt.getenv, tt.mode, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if n.Mode != tt.want {
				t.Errorf("mode %q, want %q", n.Mode, tt.want)
			}
			n.Send("harness", "done; at last\x1b]0;evil\a")
			if out.String() != tt.sent {
				t.Errorf("sent %q, want %q", out.String(), tt.sent)
			}
			if strings.Contains(out.String(), "evil") {
				t.Errorf("an escape rode in the body: %q", out.String())
			}
		})
	}
	if _, err := NewNotifier(&Term{}, env(), "loud", 0); err == nil || !strings.Contains(err.Error(), "auto, bell, osc9, osc777 or off") {
		t.Errorf("a bad mode: %v", err)
	}
	n := &Notifier{Mode: NotifyBell, After: 30 * time.Second}
	if n.Due(10*time.Second) || !n.Due(31*time.Second) {
		t.Error("Due does not follow the threshold")
	}
}
