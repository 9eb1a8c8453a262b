// Package termsafe is the one sanitiser: every string that comes from
// outside harness (a model, a tool's output, an MCP server's name, command
// and environment, a file name, a settings or command file, an error that
// quotes any of them) passes Text, Line or Visible before it reaches a
// terminal, in the chat and in every subcommand, whichever package formats
// it. Guard is the backstop at the other end: the writer the plain
// subcommands print through, which lets no control sequence but colours
// and erasing the line through, so a string a caller forgot to sanitise
// can at most change a colour. All of them decide what is a control in
// one place (isControl, SkipEscape): C0 and C1 controls, DEL, escape
// sequences, bidirectional overrides and bytes that are not UTF-8.
//
// It imports nothing of harness's, so any package may use it.
package termsafe
