// Package ui draws harness in a terminal: a line editor for the prompt, a
// renderer that streams the model's reply and then re-renders it as
// Markdown, one line per tool call with a short result under it, a spinner
// while waiting, the status line after each turn, the banner, the /context
// and /cost views and the permission prompt.
//
// Everything stays in the terminal's normal scrollback: no alternate
// screen, no full-screen layout, so a session can be scrolled, searched and
// copied like any other command's output. The only in-place redraws are the
// prompt line being edited, the spinner's own line, the row of keys typed
// ahead during a turn (kept below the spinner or the streaming reply,
// redrawn as the reply grows, gone when the turn ends), and the
// replacement of a streaming block by its rendering.
//
// The pieces:
//
//   - Input is the single reader of the terminal's input, shared by the
//     Editor and the Prompter so no abandoned read ever swallows keys;
//     Input.Quiet turns echo and line buffering off while a turn runs
//     (Enter stays CR, so a line typed ahead is sent at the prompt).
//   - Editor reads a line: raw mode, Emacs keys, history in a file,
//     Ctrl-R search (Ctrl-G cancels it), \-Enter, Ctrl-J or Alt-Enter for
//     a newline, bracketed paste (a long one shown collapsed), Tab
//     completion (CommandCompleter with descriptions, PathCompleter, @file
//     mentions). A lone Esc is a key of its own, never the start of the
//     next one (at the permission prompt it interrupts, as Ctrl-C). Without a terminal it reads plain lines.
//     A Popup (NewPopup: slash commands from CommandSources, @ files from
//     ProjectFiles) opens a menu under the input as a word is typed,
//     filtered by FuzzyScore; it is redrawn with the input and gone when
//     the line is sent. Choose reads one answer from a list, a key (or
//     the arrows and Enter) at a time, and leaves one row naming it.
//   - Renderer implements the agent's Observer (structurally: ui never
//     imports agent) and accounts usage in a Meter for the status line.
//   - Prompter implements permission.Prompter on top of Editor.Choose,
//     and remembers "all edits this session".
//   - Fit wraps harness's own lines at words to the width (Renderer.Print
//     does it for every block it prints); Notifier rings the bell and
//     sends OSC 9/777 desktop notifications.
//
// Colours are used only when output is a terminal, NO_COLOR is unset or
// empty and TERM is not dumb.
// The width is re-queried on every redraw, so resizing just works. Text
// from the model or from tools goes through Sanitize before it reaches the
// terminal: a reply cannot move the cursor, retitle the window or hide text.
package ui
