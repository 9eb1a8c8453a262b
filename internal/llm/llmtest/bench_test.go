package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// preservedBody is a Messages body of one turn of steps tool calls, each
// assistant message led by a thinking block bound to its prefix, as a
// long autonomous run sends it.
func preservedBody(steps int) []byte {
	const model = "claude-sonnet-5-5"
	msgs := []m{user(text("go"))}
	out := strings.Repeat("x", 1000)
	for i := 0; i < steps; i++ {
		b, _ := json.Marshal(m{"model": model, "messages": msgs})
		th := m{"type": "thinking", "thinking": "step", "signature": signReply(b, "step", true)}
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, assistant(th, use(id)),
			user(m{"type": "tool_result", "tool_use_id": id, "content": out}))
	}
	b, _ := json.Marshal(m{"model": model, "max_tokens": 4096, "messages": msgs})
	return b
}

// BenchmarkPreservedCheck is the fake's cost of checking every rule and
// every thinking block's prefix on one request late in a long turn.
func BenchmarkPreservedCheck(b *testing.B) {
	for _, steps := range []int{50, 300} {
		body := preservedBody(steps)
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				var w wireAnthropic
				_ = json.Unmarshal(body, &w)
				if msg := anthropicRules(&w, nil, true); msg != "" {
					b.Fatal(msg)
				}
				if tc := checkThinking(body, nil, true); tc.errBody != "" {
					b.Fatal(tc.errBody)
				}
			}
		})
	}
}
