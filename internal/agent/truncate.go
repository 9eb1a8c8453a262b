package agent

import (
	"encoding/json"
	"fmt"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
)

// refusedPlaceholder stands for a refused reply in the history.
const refusedPlaceholder = "(I declined the previous request; my reply is not kept.)"

// noticesTo passes a provider's events to obs, turning notices (a field
// the server rejected, say) into OnNotice so every UI shows them.
func noticesTo(obs Observer) func(llm.Event) {
	return func(e llm.Event) {
		if e.Type == llm.EventNotice {
			obs.OnNotice(notice.Info(notice.Provider, e.Text))
			return
		}
		obs.OnEvent(e)
	}
}

// dropCutInput replaces the arguments of the last tool call of a reply cut
// by the output limit, which are incomplete (and often a large file's
// first part), by a small marker: stored whole they would be re-sent with
// every request and teach nothing.
func dropCutInput(m llm.Message) llm.Message {
	out := llm.Message{Role: m.Role, Blocks: append([]llm.Block(nil), m.Blocks...)}
	for i := len(out.Blocks) - 1; i >= 0; i-- {
		if out.Blocks[i].Type == llm.BlockToolUse {
			out.Blocks[i].Input = json.RawMessage(`{"cut_off_at_output_limit":true}`)
			break
		}
	}
	return out
}

// cutResults answers every call of a reply cut by the output limit: none
// is run (the last is incomplete, and the others were part of a plan the
// model did not finish), and the model is told how to fit.
func cutResults(calls []llm.Block, limit int) []llm.Block {
	out := make([]llm.Block, len(calls))
	for i, c := range calls {
		msg := fmt.Sprintf("not run: your reply was cut off at the output limit (%d tokens) before this call was complete, so its arguments were lost. Split the work into smaller steps: write a large file in parts (a short write_file, then edit_file calls that add to it), make one edit per edit_file call, and keep each reply well under %d tokens.", limit, limit)
		if i < len(calls)-1 {
			msg = fmt.Sprintf("not run: your reply was cut off at the output limit (%d tokens) in a later call, so none of its calls were run; send this one again if it is still needed.", limit)
		}
		out[i] = llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: msg, IsError: true, Layer: llm.LayerFeedback}
	}
	return out
}

// raiseOutputLimit doubles the output limit once, up to the model's
// longest reply in the catalogue, when a turn's replies keep being cut.
// An unknown model is left alone: a limit over its maximum is a 400.
func (a *Agent) raiseOutputLimit(current int, obs Observer) {
	m, ok := llm.LookupModel(a.o.Model)
	if a.outputRaised || !ok || m.MaxOutput <= current || current <= 0 {
		return
	}
	a.outputRaised = true
	next := min(2*current, m.MaxOutput)
	a.o.MaxTokens = next
	// The window keeps room for the longer replies: the prompt's share
	// shrinks by as much (history.Config.Reserve).
	a.o.History.SetReserve(next)
	n := notice.Info(notice.OutputRaised, fmt.Sprintf("replies keep being cut at %d tokens: raised the output limit to %d for this session (MAX_TOKENS sets it)", current, next))
	n.Limit = next
	obs.OnNotice(n)
}
