package ui

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"
)

type keyKind int

const (
	keyNone keyKind = iota
	keyRune
	keyEnter
	keyNewline // Esc-Enter / Alt-Enter: insert a newline
	keyBackspace
	keyDelete
	keyLeft
	keyRight
	keyUp
	keyDown
	keyHome
	keyEnd
	keyWordLeft
	keyWordRight
	keyKillEnd   // Ctrl-K
	keyKillStart // Ctrl-U
	keyKillWord  // Ctrl-W, Alt-Backspace
	keyDeleteWord
	keyYank // Ctrl-Y
	keyInterrupt
	keyEOF // Ctrl-D
	keyTab
	keyClear // Ctrl-L
	keyPasteStart
	keyPasteEnd
	keySearch // Ctrl-R: reverse incremental history search
	keyCancel // Ctrl-G
	keyEscape // a lone Esc
	keyResize // the terminal changed size
	keyPageUp
	keyPageDown
	keyBackTab // Shift+Tab
	keyPoke    // the front end wants the screen for a moment (Input.Poke)
)

type key struct {
	kind keyKind
	r    rune
}

// readKey decodes one key from in. Unknown escape sequences decode to
// keyNone so they are ignored rather than inserted as text.
func readKey(ctx context.Context, in *Input) (key, error) {
	b, err := in.NextKey(ctx)
	if errors.Is(err, ErrResized) {
		return key{kind: keyResize}, nil
	}
	if errors.Is(err, ErrPoked) {
		return key{kind: keyPoke}, nil
	}
	if err != nil {
		return key{}, err
	}
	switch b {
	case 0x01:
		return key{kind: keyHome}, nil
	case 0x02:
		return key{kind: keyLeft}, nil
	case 0x03:
		return key{kind: keyInterrupt}, nil
	case 0x04:
		return key{kind: keyEOF}, nil
	case 0x05:
		return key{kind: keyEnd}, nil
	case 0x06:
		return key{kind: keyRight}, nil
	case 0x08, 0x7f:
		return key{kind: keyBackspace}, nil
	case 0x09:
		return key{kind: keyTab}, nil
	case 0x0d:
		return key{kind: keyEnter, r: rune(b)}, nil
	case 0x0a: // Ctrl-J
		return key{kind: keyNewline, r: rune(b)}, nil
	case 0x0b:
		return key{kind: keyKillEnd}, nil
	case 0x0c:
		return key{kind: keyClear}, nil
	case 0x0e:
		return key{kind: keyDown}, nil
	case 0x10:
		return key{kind: keyUp}, nil
	case 0x07:
		return key{kind: keyCancel}, nil
	case 0x12:
		return key{kind: keySearch}, nil
	case 0x15:
		return key{kind: keyKillStart}, nil
	case 0x17:
		return key{kind: keyKillWord}, nil
	case 0x19:
		return key{kind: keyYank}, nil
	case 0x1b:
		return readEscape(ctx, in)
	}
	if b < 0x20 {
		return key{}, nil
	}
	if b < utf8.RuneSelf {
		return key{kind: keyRune, r: rune(b)}, nil
	}
	// A UTF-8 sequence: collect its continuation bytes.
	p := []byte{b}
	for !utf8.FullRune(p) && len(p) < utf8.UTFMax {
		c, err := in.Next(ctx)
		if err != nil {
			return key{}, err
		}
		p = append(p, c)
	}
	r, _ := utf8.DecodeRune(p)
	return key{kind: keyRune, r: r}, nil
}

// EscWait is how long an Esc waits for the rest of a sequence: keys and
// Alt-combinations arrive as one burst, a person's next key much later.
// A lone Esc never combines with a key typed after it.
const EscWait = 40 * time.Millisecond

// readEscape decodes what follows an ESC: a key sequence, Alt with a key,
// or nothing within EscWait (a lone Esc).
func readEscape(ctx context.Context, in *Input) (key, error) {
	if !in.Wait(ctx, EscWait) {
		if ctx.Err() != nil {
			return key{}, ctx.Err()
		}
		return key{kind: keyEscape}, nil
	}
	b, err := in.Next(ctx)
	if err != nil {
		return key{}, err
	}
	switch b {
	case 0x0d, 0x0a:
		return key{kind: keyNewline}, nil
	case 0x7f, 0x08:
		return key{kind: keyKillWord}, nil
	case 'b', 'B':
		return key{kind: keyWordLeft}, nil
	case 'f', 'F':
		return key{kind: keyWordRight}, nil
	case 'd', 'D':
		return key{kind: keyDeleteWord}, nil
	case 'O': // SS3: application-mode cursor keys
		c, err := in.Next(ctx)
		if err != nil {
			return key{}, err
		}
		return ss3Key(c), nil
	case '[':
	default:
		return key{}, nil
	}
	// CSI: parameter bytes 0x30–0x3f, intermediates 0x20–0x2f, final 0x40–0x7e.
	var params []byte
	for {
		c, err := in.Next(ctx)
		if err != nil {
			return key{}, err
		}
		if c >= 0x40 && c <= 0x7e {
			return csiKey(string(params), c), nil
		}
		if len(params) > 32 { // not a key; give up on it
			return key{}, nil
		}
		params = append(params, c)
	}
}

func ss3Key(c byte) key {
	switch c {
	case 'A':
		return key{kind: keyUp}
	case 'B':
		return key{kind: keyDown}
	case 'C':
		return key{kind: keyRight}
	case 'D':
		return key{kind: keyLeft}
	case 'H':
		return key{kind: keyHome}
	case 'F':
		return key{kind: keyEnd}
	}
	return key{}
}

func csiKey(params string, final byte) key {
	// Modifier suffix: ;3 is Alt, ;5 is Ctrl — both move by word.
	word := params == "1;5" || params == "1;3"
	switch final {
	case 'Z':
		return key{kind: keyBackTab}
	case 'A':
		return key{kind: keyUp}
	case 'B':
		return key{kind: keyDown}
	case 'C':
		if word {
			return key{kind: keyWordRight}
		}
		return key{kind: keyRight}
	case 'D':
		if word {
			return key{kind: keyWordLeft}
		}
		return key{kind: keyLeft}
	case 'H':
		return key{kind: keyHome}
	case 'F':
		return key{kind: keyEnd}
	case '~':
		switch params {
		case "1", "7":
			return key{kind: keyHome}
		case "4", "8":
			return key{kind: keyEnd}
		case "3":
			return key{kind: keyDelete}
		case "5":
			return key{kind: keyPageUp}
		case "6":
			return key{kind: keyPageDown}
		case "200":
			return key{kind: keyPasteStart}
		case "201":
			return key{kind: keyPasteEnd}
		}
	case 'u':
		// CSI u (kitty/xterm modifyOtherKeys): 13;2u or 13;3u is
		// Shift/Alt-Enter.
		if params == "13;2" || params == "13;3" {
			return key{kind: keyNewline}
		}
	}
	return key{}
}
