package llmtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The Messages API's request-validation rules for thinking and tool use, as
// the docs and other clients' bug reports give them (doc.go lists each with
// its source; the IDs are those of shared/notes/thinking-rules.md). Every
// Anthropic-format request is checked, in every mode: the real server has
// no switch for them. The message texts are copied from the reports.

// Rule texts. %d/%s are filled with the message index, the block index or
// the type found.
const (
	// A1 (n8n-io/n8n#22550, Kilo-Org/kilocode#5219).
	msgA1 = "messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
	// A2 (anthropics/claude-code#20705).
	msgA2 = "messages.%d.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found %s."
	// A3 (anthropics/claude-code#19539, vybestack/llxprt-code#1653).
	msgA3 = "messages.%d.content.%d: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response."
	// A4 (vybestack/llxprt-code#2335, caozhiyuan/copilot-api#73).
	msgA4 = "messages.%d.content.%d: Invalid `signature` in `thinking` block"
	// A6 (tailcallhq/forgecode#1853).
	msgA6 = "messages.%d.content.%d: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
	// A7 (tailcallhq/forgecode#2107, router-for-me/CLIProxyAPI#5322).
	msgA7 = "messages.%d: The final block in an assistant message cannot be `thinking`."
	// A8 (Kilo-Org/kilocode#11194; danny-avila/LibreChat#13704;
	// anthropics/claude-code#51212).
	msgA8Enabled  = `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`
	msgA8Disabled = `"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode when not specified; use "thinking.type.enabled" with "budget_tokens" for extended thinking.`
	msgA8Adaptive = "adaptive thinking is not supported on this model"
	// A9 (mastra-ai/mastra#7507, verified live in workglow-dev/libs#746;
	// can1357/oh-my-pi#12939).
	msgA9Thinking = "Thinking may not be enabled when tool_choice forces tool use."
	msgA9Model    = `tool_choice: type "tool" and "any" are not supported for this model.`
	// A10 (workglow-dev/libs#746 live probes; dotCipher/opencode-claude-bridge#1;
	// quarkiverse/quarkus-langchain4j#1812; liuw1535/antigravity2api-nodejs#149).
	msgA10Temperature = "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode"
	msgA10TopK        = "`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking"
	// The docs allow top_p from 0.95 to 1 with thinking; this text is
	// not verified in any report.
	msgA10TopP      = "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled"
	msgA10MinBudget = "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
	msgA10Budget    = "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
	// A11 (router-for-me/CLIProxyAPI#4957).
	msgA11 = "`clear_thinking_20251015` strategy requires `thinking` to be enabled or adaptive"
	// A12 (anthropics/claude-code#5989, Kilo-Org/kilocode#5163;
	// anthropics/claude-code#13460, router-for-me/CLIProxyAPI#497).
	msgA12Use    = "messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
	msgA12Result = "messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
	// Blank text (nick1udwig/kibitz#87); also AnthropicRejectsBlank.
	msgBlank = "messages: text content blocks must contain non-whitespace text"
)

// betaInterleaved lets budget_tokens exceed max_tokens (docs:
// extended-thinking, "interleaved thinking").
const betaInterleaved = "interleaved-thinking-2025-05-14"

// Model families, by the normalised name (see modelKey).
var (
	// Reject manual "enabled" thinking: Opus 4.7/4.8, Fable 5 and later,
	// Opus 5.5 (A8).
	noManual = []string{"claude-opus-4-7", "claude-opus-4-8", "claude-fable-5", "claude-opus-5-5"}
	// Cannot disable thinking, and think adaptively when the request
	// names no mode (A8; docs whats-new-opus-5-5).
	alwaysThinking = []string{"claude-fable-5", "claude-mythos-5", "claude-opus-5-5"}
	// Reject a forced tool_choice outright (A9).
	noForcedTools = []string{"claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1", "claude-mythos-5-1"}
	// Before adaptive thinking (Claude 3.x and 4.0 to 4.5).
	reNoAdaptive = regexp.MustCompile(`^claude-(3|(opus|sonnet|haiku)-4(-[0-5])?$)`)
	reDate       = regexp.MustCompile(`(-\d{8}|@.*|-v\d+:\d+)$`)
)

// modelKey normalises a model id: no router prefix, dots as dashes, no
// date or version suffix, lower case.
func modelKey(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.ReplaceAll(m, ".", "-")
	return reDate.ReplaceAllString(m, "")
}

func inFamily(model string, fams []string) bool {
	k := modelKey(model)
	for _, f := range fams {
		if k == f || strings.HasPrefix(k, f+"-") {
			return true
		}
	}
	return false
}

// wireAnthropic is the part of a Messages request the rules read.
type wireAnthropic struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Thinking  *struct {
		Type         string `json:"type"`
		BudgetTokens *int   `json:"budget_tokens"`
	} `json:"thinking"`
	Temperature *float64 `json:"temperature"`
	TopP        *float64 `json:"top_p"`
	TopK        *int     `json:"top_k"`
	ToolChoice  *struct {
		Type string `json:"type"`
	} `json:"tool_choice"`
	ContextManagement *struct {
		Edits []struct {
			Type string `json:"type"`
		} `json:"edits"`
	} `json:"context_management"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// wireBlock is one content block as the rules read it.
type wireBlock struct {
	Type      string  `json:"type"`
	Text      *string `json:"text"`
	Thinking  *string `json:"thinking"`
	Signature string  `json:"signature"`
	Data      string  `json:"data"`
	ID        string  `json:"id"`
	ToolUseID string  `json:"tool_use_id"`
}

func blocksOf(raw json.RawMessage) []wireBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []wireBlock{{Type: "text", Text: &s}}
	}
	var bs []wireBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

func isThinking(typ string) bool { return typ == "thinking" || typ == "redacted_thinking" }

// thinkingOn reports whether the request runs with thinking: named
// enabled or adaptive, or unnamed on a model that thinks by default (and
// on every model while the server emulates preserved thinking, whose
// models think adaptively by default).
func thinkingOn(w *wireAnthropic, preserved bool) bool {
	if w.Thinking != nil && w.Thinking.Type != "" {
		return w.Thinking.Type == "enabled" || w.Thinking.Type == "adaptive"
	}
	return preserved || inFamily(w.Model, alwaysThinking)
}

// anthropicRules returns the 400 message for the first rule body breaks,
// or "". Signatures (A3, A4) and the prefix check (A5) are checked after
// it, by checkSignatures and checkThinking.
func anthropicRules(w *wireAnthropic, header map[string][]string, preserved bool) string {
	on := thinkingOn(w, preserved)
	mode := ""
	if w.Thinking != nil {
		mode = w.Thinking.Type
	}
	claude := strings.HasPrefix(modelKey(w.Model), "claude-")
	// A8: the mode must be one the model takes.
	switch {
	case claude && mode == "enabled" && inFamily(w.Model, noManual):
		return msgA8Enabled
	case claude && mode == "disabled" && inFamily(w.Model, alwaysThinking):
		return msgA8Disabled
	case claude && mode == "adaptive" && reNoAdaptive.MatchString(modelKey(w.Model)):
		return msgA8Adaptive
	}
	// A10: budget, then sampling.
	if mode == "enabled" && w.Thinking.BudgetTokens != nil {
		b := *w.Thinking.BudgetTokens
		if b < 1024 {
			return msgA10MinBudget
		}
		if b >= w.MaxTokens && !hasBeta(header, betaInterleaved) {
			return msgA10Budget
		}
	}
	if on {
		switch {
		case w.Temperature != nil && *w.Temperature != 1:
			return msgA10Temperature
		case w.TopK != nil:
			return msgA10TopK
		case w.TopP != nil && *w.TopP < 0.95:
			return msgA10TopP
		}
	}
	// A9: forced tool use.
	if tc := w.ToolChoice; tc != nil && (tc.Type == "any" || tc.Type == "tool") {
		if claude && inFamily(w.Model, noForcedTools) {
			return msgA9Model
		}
		if mode == "enabled" {
			return msgA9Thinking
		}
	}
	// A11: server-side thinking edits need thinking.
	if cm := w.ContextManagement; cm != nil && !on {
		for _, e := range cm.Edits {
			if e.Type == "clear_thinking_20251015" {
				return msgA11
			}
		}
	}
	return messageRules(w, on)
}

// messageRules checks the messages' structure: tool pairs (A12), blank
// text, thinking placement (A2, A7), the final position with thinking off
// (A6) and the open tool loop with thinking on (A1).
func messageRules(w *wireAnthropic, on bool) string {
	msgs := make([][]wireBlock, len(w.Messages))
	for i, m := range w.Messages {
		msgs[i] = blocksOf(m.Content)
	}
	for i, m := range w.Messages {
		bs := msgs[i]
		for _, b := range bs {
			if b.Type == "text" && b.Text != nil && strings.TrimSpace(*b.Text) == "" {
				return msgBlank
			}
		}
		switch m.Role {
		case "assistant":
			var uses []string
			for _, b := range bs {
				if b.Type == "tool_use" {
					uses = append(uses, b.ID)
				}
			}
			if len(uses) > 0 {
				answered := map[string]bool{}
				if i+1 < len(msgs) && w.Messages[i+1].Role == "user" {
					for _, b := range msgs[i+1] {
						if b.Type == "tool_result" {
							answered[b.ToolUseID] = true
						}
					}
				}
				var missing []string
				for _, id := range uses {
					if !answered[id] {
						missing = append(missing, id)
					}
				}
				// A trailing assistant message (a prefill) has no next
				// message yet; the API only pairs calls that are followed.
				if len(missing) > 0 && i+1 < len(msgs) {
					return fmt.Sprintf(msgA12Use, i, strings.Join(missing, ", "))
				}
			}
			has := false
			for _, b := range bs {
				has = has || isThinking(b.Type)
			}
			if has && !isThinking(bs[0].Type) {
				return fmt.Sprintf(msgA2, i, bs[0].Type)
			}
			if n := len(bs); n > 0 && isThinking(bs[n-1].Type) {
				return fmt.Sprintf(msgA7, i)
			}
		case "user":
			called := map[string]bool{}
			if i > 0 && w.Messages[i-1].Role == "assistant" {
				for _, b := range msgs[i-1] {
					if b.Type == "tool_use" {
						called[b.ID] = true
					}
				}
			}
			for j, b := range bs {
				if b.Type == "tool_result" && !called[b.ToolUseID] {
					return fmt.Sprintf(msgA12Result, i, j, b.ToolUseID)
				}
			}
		}
	}
	n := len(w.Messages)
	if n == 0 {
		return ""
	}
	last := msgs[n-1]
	// A6: with thinking off, a trailing assistant message holds none.
	if !on && w.Messages[n-1].Role == "assistant" {
		for j, b := range last {
			if isThinking(b.Type) {
				return fmt.Sprintf(msgA6, n-1, j)
			}
		}
	}
	// A1: with thinking on, the assistant message whose tool calls the
	// last user message answers must start with thinking.
	if on && n >= 2 && w.Messages[n-1].Role == "user" && w.Messages[n-2].Role == "assistant" {
		results := false
		for _, b := range last {
			results = results || b.Type == "tool_result"
		}
		prev := msgs[n-2]
		if results && len(prev) > 0 && !isThinking(prev[0].Type) {
			return fmt.Sprintf(msgA1, n-2, prev[0].Type)
		}
	}
	return ""
}
