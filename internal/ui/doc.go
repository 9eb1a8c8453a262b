// Package ui draws harness in a terminal: a line editor for the prompt, a
// renderer that streams the model's reply and then re-renders it as Markdown,
// one line per tool call, a spinner while waiting, the status line after each
// reply, the banner, the /context view and the permission prompt.
//
// Everything stays in the terminal's normal scrollback: no alternate screen,
// no full-screen layout, so a session can be scrolled, searched and copied
// like any other command's output. The only in-place redraws are the prompt
// line being edited, the spinner's own line, and the one-time replacement of
// a streamed reply by its rendered form (skipped when the reply has already
// scrolled off the screen).
//
// Colours are used only when output is a terminal and NO_COLOR is unset.
// The width is re-queried on every redraw, so resizing just works.
// Text from the model or from tools is stripped of control sequences before
// it reaches the terminal: a reply cannot move the cursor or retitle the
// window.
//
// ui depends on llm (and permission, for the prompter) but never on agent:
// Renderer satisfies agent.Observer structurally.
package ui
