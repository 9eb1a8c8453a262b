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
//     Input.Poke makes the Editor step aside (EditorOptions.OnPoke): the
//     input leaves the screen, the front end shows news or asks a
//     question that came from elsewhere (an MCP server's start), and the
//     input comes back as it was.
//   - Renderer implements the agent's Observer (structurally: ui never
//     imports agent) and accounts usage in a Meter for the status line.
//   - Prompter implements permission.Prompter on top of Editor.Choose,
//     and remembers "all edits this session". Its preview of a change
//     gets the rows the screen has left after the box and the list of
//     answers; one that does not fit keeps its changed rows in view.
//     Prompter.Elicit shows an MCP server's question as a form with the
//     same box and lists (a field's default prefilled through
//     Editor.ReadLineInitial); the server's strings pass through Sanitize.
//   - Fit wraps harness's own lines at words to the width (Renderer.Print
//     does it for every block it prints); Notifier rings the bell and
//     sends OSC 9/777 desktop notifications.
//
// The libraries under the look, which is harness's own:
//
//   - Markdown is parsed by goldmark (CommonMark, with GFM tables,
//     strikethrough, task lists and autolinks) and drawn by RenderMarkdown
//     over its syntax tree. A streaming reply is cut only where the parse
//     says a block, or an item of a list, is complete (completeUpTo); a
//     fenced code block streams a line at a time.
//   - Highlight lexes with chroma's lexers (by fence language or file
//     name) and colours tokens in the palette below. Not chroma's lexers
//     package, which builds all its lexers at every process start: the
//     common languages' definitions are copied into lexers/, unchanged
//     (a test compares them with the module's), and built on first use.
//   - Widths are measured by grapheme cluster (uniseg): emoji sequences,
//     flags and combining marks are as wide as a terminal draws them,
//     and no row ends inside a cluster. Rows end at the Unicode line
//     breaking algorithm's opportunities after a space or next to a wide
//     character, never after a / or - (paths, URLs and flags stay whole).
//   - EditPreview and WritePreview show go-udiff's minimal diff (gopls's)
//     with two lines of context, less when the prompt is short, so the
//     changed lines stay in view, changed words marked; Full keeps all.
//
// Colours are used only when output is a terminal, NO_COLOR is unset or
// empty and TERM is not dumb.
// The width is re-queried on every redraw, so resizing just works. Text
// from the model or from tools goes through Sanitize before it reaches the
// terminal: a reply cannot move the cursor, retitle the window or hide text.
package ui
