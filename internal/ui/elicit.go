package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/mcp"
)

// Elicit shows an MCP server's question (elicitation/create) as a form
// in the terminal, with the permission prompt's machinery: a box with
// the server's message and fields (every string of the server's through
// Sanitize), then the one-key list: fill in and send, decline, or Esc to
// cancel. Filling in asks each field in turn: a boolean or an enum as a
// one-key list with its default highlighted, any other field as a line
// prefilled with its default; a value the schema refuses is asked again
// with why. Esc (or Ctrl-C) at any point cancels, and the turn goes on.
func (p *Prompter) Elicit(ctx context.Context, q *mcp.Elicitation) (mcp.ElicitAnswer, error) {
	cancel := mcp.ElicitAnswer{Action: mcp.ElicitCancel}
	if ctx.Err() != nil {
		return cancel, nil
	}
	t := p.R.t
	p.R.Pause()
	defer p.R.Resume()
	io.WriteString(t.Out, RenderElicitation(t.Style, q, t.Width()))
	p.R.RememberFunc(func(w int) string { return RenderElicitation(t.Style, q, w) })
	if p.OnWait != nil {
		p.OnWait("an MCP server's question")
	}
	opts := []Option{{Key: 'y', Label: "fill in and send"}, {Key: 'n', Label: "decline"}}
	if len(q.Fields) == 0 {
		opts[0].Label = "accept"
	}
	ch, err := p.Editor.ChooseEsc(ctx, opts, 0, "Esc cancels")
	switch {
	case errors.Is(err, ErrInterrupt):
		p.R.Remember("  " + t.Style.BoldCyan("❯") + " cancelled")
		return cancel, nil
	case err != nil:
		return cancel, fmt.Errorf("reading the answer: %w", err)
	}
	p.R.Remember("  " + t.Style.BoldCyan("❯") + " " + opts[ch.Index].Label)
	if ch.Index == 1 {
		return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
	}
	content := map[string]any{}
	for _, f := range q.Fields {
		v, err := p.askField(ctx, f)
		if errors.Is(err, ErrInterrupt) {
			p.R.Print(t.Style.Dim("  the form was cancelled"))
			return cancel, nil
		}
		if err != nil {
			return cancel, fmt.Errorf("reading %s: %w", f.Name, err)
		}
		if v != nil {
			content[f.Name] = v
		}
	}
	return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: content}, nil
}

// askField reads one field's value; nil is none (an optional field left
// empty).
func (p *Prompter) askField(ctx context.Context, f mcp.Field) (any, error) {
	t := p.R.t
	label := SanitizeLine(f.Label())
	if f.Required {
		label += " *"
	}
	if f.Type == "boolean" || (f.Type == "string" && len(f.Options) > 0) {
		io.WriteString(t.Out, "  "+t.Style.Bold(label)+"\n")
		opts, values, def := fieldOptions(f)
		ch, err := p.Editor.ChooseEsc(ctx, opts, def, "Esc cancels the form")
		if err != nil {
			return nil, err
		}
		p.R.Remember("  " + label + ": " + opts[ch.Index].Label)
		return values[ch.Index], nil
	}
	hint := ""
	switch {
	case f.Type == "array":
		hint = " (comma separated)"
	case f.Format != "":
		hint = " (" + SanitizeLine(f.Format) + ")"
	}
	for {
		text, err := p.Editor.ReadLineInitial(ctx, "  "+t.Style.Bold(label)+t.Style.Dim(hint)+": ", SanitizeLine(f.DefaultText()))
		if err != nil {
			return nil, err
		}
		v, err := f.Parse(text)
		if err == nil {
			p.R.Remember("  " + label + ": " + SanitizeLine(text))
			return v, nil
		}
		// The error may quote the server's enum values.
		io.WriteString(t.Out, "  "+t.Style.Yellow(SanitizeLine(err.Error()))+"\n")
	}
}

// fieldOptions are the one-key list of a boolean or an enum: the
// values, what each sends, and the default's index (an optional field
// without a default offers to leave it empty, highlighted).
func fieldOptions(f mcp.Field) ([]Option, []any, int) {
	var opts []Option
	var values []any
	def := 0
	if f.Type == "boolean" {
		opts = []Option{{Key: 'y', Label: "yes"}, {Key: 'n', Label: "no"}}
		values = []any{true, false}
		if d, ok := f.Default.(bool); ok && !d {
			def = 1
		}
	} else {
		for i, c := range f.Options {
			label := SanitizeLine(c.Title)
			if c.Title != c.Value {
				label += " (" + SanitizeLine(c.Value) + ")"
			}
			opts = append(opts, Option{Label: label})
			values = append(values, c.Value)
			if d, ok := f.Default.(string); ok && d == c.Value {
				def = i
			}
		}
	}
	if !f.Required && f.Default == nil {
		opts = append(opts, Option{Key: '-', Label: "leave it empty"})
		values = append(values, nil)
		def = len(opts) - 1
	}
	return opts, values, def
}

// RenderElicitation is the box of an MCP server's question: who asks,
// its message, and each field with its type, whether it is required,
// its description and its default.
func RenderElicitation(st Style, q *mcp.Elicitation, width int) string {
	var b strings.Builder
	bar := st.Yellow("│ ")
	b.WriteString(st.Yellow("╭ ") + st.Bold("MCP server "+SanitizeLine(q.Server)+" asks you") + "\n")
	for _, para := range strings.Split(Sanitize(q.Message), "\n") {
		for _, l := range Wrap(para, max(width-2, 10)) {
			b.WriteString(bar + l + "\n")
		}
	}
	for _, f := range q.Fields {
		what := f.Type
		if len(f.Options) > 0 {
			what = "one of " + fmt.Sprint(len(f.Options))
			if f.Type == "array" {
				what = "some of " + fmt.Sprint(len(f.Options))
			}
		}
		if f.Required {
			what += ", required"
		}
		line := "• " + st.Bold(SanitizeLine(f.Label())) + st.Dim(" ("+what+")")
		if f.Description != "" {
			line += " " + SanitizeLine(f.Description)
		}
		if d := f.DefaultText(); d != "" {
			line += st.Dim(" [" + SanitizeLine(d) + "]")
		}
		for _, l := range wrapLine(line, max(width-2, 10)) {
			b.WriteString(bar + l + "\n")
		}
	}
	b.WriteString(st.Yellow("╰ ") + st.Bold("answer?") + "\n")
	return b.String()
}
