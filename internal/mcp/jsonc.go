package mcp

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code, opencode and Cursor accept in their files, into plain JSON.
// Comments become spaces and newlines stay, so a decoder's offsets still
// point at the same line.
func stripJSONC(in []byte) []byte {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(in) && in[j] != '"' {
				if in[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(in) {
				return append(out, in[i:]...) // unterminated: the decoder says so
			}
			out = append(out, in[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(in) && in[i+1] == '/':
			for i < len(in) && in[i] != '\n' {
				out = append(out, ' ')
				i++
			}
			if i < len(in) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(in) && in[i+1] == '*':
			out = append(out, ' ', ' ')
			i += 2
			for i < len(in) && !(in[i] == '*' && i+1 < len(in) && in[i+1] == '/') {
				if in[i] == '\n' {
					out = append(out, '\n')
				} else {
					out = append(out, ' ')
				}
				i++
			}
			i++ // past the '/'
			out = append(out, ' ', ' ')
		case c == ',':
			// A comma followed (past blanks and comments) by } or ] is a
			// trailing one: dropped.
			if trailingComma(in[i+1:]) {
				out = append(out, ' ')
			} else {
				out = append(out, c)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

func trailingComma(rest []byte) bool {
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '/' && i+1 < len(rest) && rest[i+1] == '/':
			for i < len(rest) && rest[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(rest) && rest[i+1] == '*':
			i += 2
			for i < len(rest) && !(rest[i] == '*' && i+1 < len(rest) && rest[i+1] == '/') {
				i++
			}
			i++
		default:
			return c == '}' || c == ']'
		}
	}
	return false
}
