package ui

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/testenv"
)

// askForm is a server's form: a required string, a bounded integer with
// a default, an enum with titles and a default, a boolean with a
// default; its message carries a terminal escape a server should not
// get to the screen.
func askForm() *mcp.Elicitation {
	lo, hi := 0.0, 150.0
	return &mcp.Elicitation{Server: "go", Message: "Who are you?\x1b]0;pwned\x07",
		Fields: []mcp.Field{
			{Name: "name", Title: "Your name", Description: "as you like to be called", Type: "string", Required: true},
			{Name: "age", Type: "integer", Default: 30.0, Min: &lo, Max: &hi},
			{Name: "color", Type: "string", Options: []mcp.Choice{{Value: "r", Title: "Red"}, {Value: "g", Title: "Green"}}, Default: "g"},
			{Name: "subscribe", Type: "boolean", Default: true},
		}}
}

// TestElicitForm: the form is shown in a box (the server's strings
// sanitised), each field asked in turn with its default prefilled or
// highlighted, a refused value asked again with why; decline and
// Ctrl-C (cancel) end it at once.
func TestElicitForm(t *testing.T) {
	testenv.Slow(t)
	for _, tc := range []struct {
		name, keys string
		want       mcp.ElicitAnswer
		screen     []string
	}{
		{"filled in", "y" + settled + "\r" + settled + "Ann\r" + settled + "\x7f\x7f200\r" + settled + "\x7f\x7f7\r" + settled + "1" + settled + "n",
			mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ann", "age": 7.0, "color": "r", "subscribe": false}},
			[]string{"this field is required", "the value must be at most 150", "Your name *: Ann", "age: 7"}},
		{"defaults kept", "y" + settled + "Ann\r" + settled + "\r" + settled + "\r" + settled + "\r",
			mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ann", "age": 30.0, "color": "g", "subscribe": true}},
			[]string{"age: 30", "Green (g)", "yes"}},
		{"declined", "n", mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil},
		{"cancelled", "\x03", mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil},
		{"cancelled in a field", "y" + settled + "Ann\r" + settled + "\r" + settled + "\x03", mcp.ElicitAnswer{Action: mcp.ElicitCancel}, []string{"the form was cancelled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scr := newScreen(80, 24)
			var raw strings.Builder
			tm := &Term{Out: io.MultiWriter(scr, &raw), TTY: true, Size: func() (int, int) { return 80, 24 }}
			r := NewRenderer(tm, nil)
			defer r.Close()
			p := &Prompter{R: r, Editor: NewEditor(NewInput(&pausedReader{parts: strings.Split(tc.keys, settled)}), tm, EditorOptions{ForceRaw: true, NoHistory: true})}
			got, err := p.Elicit(context.Background(), askForm())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
			shown := StripANSI(raw.String())
			for _, want := range append([]string{"╭ MCP server go asks you", "│ Who are you?", "• Your name (string, required) as you like to be called",
				"• age (integer) [30]", "• color (one of 2) [g]", "╰ answer?"}, tc.screen...) {
				if !strings.Contains(shown, want) {
					t.Errorf("the screen lacked %q:\n%s", want, shown)
				}
			}
			if strings.Contains(raw.String(), "]0;pwned") && strings.Contains(raw.String(), "\x1b]0;") {
				t.Errorf("the server's escape reached the terminal: %q", raw.String())
			}
		})
	}
}
