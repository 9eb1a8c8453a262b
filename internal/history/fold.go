package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/llm"
)

// foldMin is the least a fold must hide: a shorter repeat is cheaper to
// keep than to mark.
const foldMin = 100

// Trimming of old assistant text (Config.TrimText): a text block over
// trimOver chars is cut to about trimTo.
const (
	trimOver = 900
	trimTo   = 500
)

// blockText returns the text a feedback block carries: a tool result's
// content or a text block's text.
func blockText(b llm.Block) string {
	if b.Type == llm.BlockToolResult {
		return b.Content
	}
	return b.Text
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// splitFeedback splits feedback into its first line (newline included),
// which says what was wrong this time, and the rest, which is usually the
// same instructions every time.
func splitFeedback(s string) (first, rest string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1], s[i+1:]
	}
	return s, ""
}

func foldMarker(hidden string, whole bool) string {
	if whole {
		return fmt.Sprintf("[harness fold: the same feedback as earlier in this conversation, %d chars (#%s)]", len(hidden), shortHash(hidden))
	}
	return fmt.Sprintf("[harness fold: the rest of this feedback, %d chars, is as earlier in this conversation (#%s)]", len(hidden), shortHash(hidden))
}

var foldRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[harness fold: [^\]]*\(#([0-9a-f]{12})\)\]$`) })

// folds returns, for every feedback block after the summary that repeats
// an earlier one still shown in full, its folded text, keyed by message
// and block: the whole block when it is the same, else its first line and
// a marker when only the rest is. Only LayerFeedback blocks fold (the
// harness's own words, marked when written, never recognised by their
// text), and an original is never folded or stripped, so what a fold
// hides is always shown above it; a compaction that cuts the original
// restores the first fold after it (see compact).
func (h *History) folds() map[[2]int]string {
	if !h.layers().Refine {
		return nil
	}
	shown := map[string]bool{} // hashes of originals' whole texts and rests
	var out map[[2]int]string
	for i := h.floor + 1; i < len(h.msgs); i++ {
		for j, b := range h.msgs[i].Blocks {
			if b.Layer != LayerFeedback {
				continue
			}
			text := blockText(b)
			first, rest := splitFeedback(text)
			var folded string
			switch {
			case len(text) >= foldMin && shown[shortHash(text)]:
				folded = foldMarker(text, true)
			case len(rest) >= foldMin && shown[shortHash(rest)]:
				folded = first + foldMarker(rest, false)
			default:
				shown[shortHash(text)] = true
				if rest != "" {
					shown[shortHash(rest)] = true
				}
				continue
			}
			if out == nil {
				out = map[[2]int]string{}
			}
			out[[2]int{i, j}] = folded
		}
	}
	return out
}

// foldEdit is the BlockEdit that folds block j of message i to text.
func (h *History) foldEdit(i, j int, text string) BlockEdit {
	be := BlockEdit{Message: i, Block: j, Layer: LayerFold}
	if h.msgs[i].Blocks[j].Type == llm.BlockToolResult {
		be.Content = text
	} else {
		be.Text = text
	}
	return be
}

// unfold restores, in msgs (the messages a compaction keeps), every fold
// whose original is not among them, from cut (the messages it removes):
// the first such fold becomes the original again. It copies a message
// before changing it.
func unfold(cut, msgs []llm.Message) {
	hidden := map[string]string{}
	for _, m := range cut {
		for _, b := range m.Blocks {
			if b.Layer == LayerFeedback {
				text := blockText(b)
				_, rest := splitFeedback(text)
				hidden[shortHash(text)] = text
				hidden[shortHash(rest)] = rest
			}
		}
	}
	if len(hidden) == 0 {
		return
	}
	shown := map[string]bool{}
	for i := range msgs {
		for j, b := range msgs[i].Blocks {
			switch b.Layer {
			case LayerFeedback:
				text := blockText(b)
				_, rest := splitFeedback(text)
				shown[shortHash(text)], shown[shortHash(rest)] = true, true
				continue
			case LayerFold:
			default:
				continue
			}
			text := blockText(b)
			ref := foldRef().FindStringSubmatch(text)
			if ref == nil || shown[ref[1]] || hidden[ref[1]] == "" {
				continue
			}
			full := text[:strings.LastIndex(text, "[harness fold:")] + hidden[ref[1]]
			m := msgs[i]
			m.Blocks = append([]llm.Block(nil), m.Blocks...)
			if b.Type == llm.BlockToolResult {
				m.Blocks[j].Content = full
			} else {
				m.Blocks[j].Text = full
			}
			m.Blocks[j].Layer = LayerFeedback
			msgs[i] = m
			_, rest := splitFeedback(full)
			shown[shortHash(full)], shown[shortHash(rest)] = true, true
		}
	}
}

// trimBlock returns the trimmed text of an old assistant text block, when
// Config.TrimText is on and the block is over trimOver chars; message i
// must not be the answer that ended a user's turn (the user read it and
// may refer to it).
func (h *History) trimBlock(i int, b llm.Block) (string, bool) {
	if !h.cfg.TrimText || !h.layers().Refine ||
		b.Type != llm.BlockText || b.Layer != "" || len(b.Text) <= trimOver || h.msgs[i].Role != llm.RoleAssistant || h.endsTurn(i) {
		return "", false
	}
	head := cutAt(b.Text, trimTo, false)
	return head + fmt.Sprintf("\n[harness trim: %d more chars of this old message removed]", len(b.Text)-len(head)), true
}

// endsTurn reports whether assistant message i answered the user: it
// calls no tool and the user's own prompt follows it.
func (h *History) endsTurn(i int) bool {
	for _, b := range h.msgs[i].Blocks {
		if b.Type == llm.BlockToolUse {
			return false
		}
	}
	if i+1 >= len(h.msgs) {
		return true
	}
	next := h.msgs[i+1]
	for _, b := range next.Blocks {
		if b.Type == llm.BlockToolResult || b.Layer == LayerFeedback {
			return false
		}
	}
	return true
}
