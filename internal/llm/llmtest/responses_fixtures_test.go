package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/responses"
)

// rwant is what one recorded Responses interaction must decode to: the
// fields of want, and how many reasoning items the reply carries.
type rwant struct {
	text, thinking string
	calls          []call
	usage          llm.Usage
	stop           llm.StopReason
	reasoningItems int
}

// responseFixtures lists every cassette in testdata/responses with the
// values read from its recorded responses (the final response object's
// output and usage; for streams, the output_text deltas agree with it).
var responseFixtures = []struct {
	file string
	want []rwant
}{
	{"TestAzureResponsesCommon/azure-gpt-5-mini/simple_streaming.yaml", []rwant{
		{text: "Olá!", usage: llm.Usage{Input: 19, CacheRead: 0, Output: 208, Reasoning: 192}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestAzureResponsesCommon/azure-gpt-5-mini/tool.yaml", []rwant{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 63, CacheRead: 0, Output: 81, Reasoning: 0}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "Current temperature in Florence, Italy: 40°C (104°F).\n\nWould you like a forecast, or more details (humidity, wind, hourly)?", usage: llm.Usage{Input: 92, CacheRead: 0, Output: 223, Reasoning: 128}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestAzureResponsesCommon/azure-gpt-5-mini/tool_streaming.yaml", []rwant{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 63, CacheRead: 0, Output: 101, Reasoning: 64}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "Right now in Florence, Italy it’s 40°C (104°F). Would you like an hourly forecast, the next few days, or any weather alerts?", usage: llm.Usage{Input: 92, CacheRead: 0, Output: 230, Reasoning: 192}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-4o/simple.yaml", []rwant{
		{text: "Olá!", usage: llm.Usage{Input: 20, CacheRead: 0, Output: 3, Reasoning: 0}, stop: llm.StopEnd, reasoningItems: 0},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-4o/tool_streaming.yaml", []rwant{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 58, CacheRead: 0, Output: 17, Reasoning: 0}, stop: llm.StopToolUse, reasoningItems: 0},
		{text: "The current temperature in Florence, Italy is 40°C.", usage: llm.Usage{Input: 81, CacheRead: 0, Output: 14, Reasoning: 0}, stop: llm.StopEnd, reasoningItems: 0},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-5/multi_tool.yaml", []rwant{
		{text: "", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 113, CacheRead: 0, Output: 305, Reasoning: 192}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "Results:\n- Sum (2 + 3) = 5\n- Product (2 × 3) = 6", usage: llm.Usage{Input: 171, CacheRead: 0, Output: 29, Reasoning: 0}, stop: llm.StopEnd, reasoningItems: 0},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-5/multi_tool_streaming.yaml", []rwant{
		{text: "", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 109, CacheRead: 0, Output: 223, Reasoning: 128}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "Results:\n- Addition (2 + 3) = 5\n- Multiplication (2 × 3) = 6", usage: llm.Usage{Input: 167, CacheRead: 0, Output: 30, Reasoning: 0}, stop: llm.StopEnd, reasoningItems: 0},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-5/simple.yaml", []rwant{
		{text: "Olá!", usage: llm.Usage{Input: 19, CacheRead: 0, Output: 86, Reasoning: 64}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-5/simple_streaming.yaml", []rwant{
		{text: "Oi!", usage: llm.Usage{Input: 19, CacheRead: 0, Output: 118, Reasoning: 64}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-5/tool.yaml", []rwant{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 63, CacheRead: 0, Output: 132, Reasoning: 64}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "The current temperature in Florence, Italy is about 40°C (104°F).", usage: llm.Usage{Input: 92, CacheRead: 0, Output: 241, Reasoning: 192}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestOpenAIResponsesCommon/openai-gpt-5/tool_streaming.yaml", []rwant{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 63, CacheRead: 0, Output: 77, Reasoning: 0}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "Florence, Italy is currently about 40°C (104°F). It’s very hot—stay hydrated and avoid peak afternoon sun. Want a forecast for the next few days?", usage: llm.Usage{Input: 92, CacheRead: 0, Output: 194, Reasoning: 128}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestOpenAIResponsesWithSummaryThinking/openai-gpt-5/thinking-streaming.yaml", []rwant{
		{text: "", thinking: "**Getting weather info**\n\nI need to respond to the user's question about the weather in Florence, Italy. I'll use the weather tool, which requires the location string. According to the instructions, I can call functions.weather directly since I only need one tool for this task. There's no need for parallel execution here. I'll call the tool to retrieve the current weather information for Florence and see what it returns!", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 63, CacheRead: 0, Output: 121, Reasoning: 64}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "Right now in Florence, Italy, it’s about 40°C (104°F). Would you like a forecast or details like wind and humidity?", thinking: "**Finalizing the response**\n\nI can mention the time of day, but since that wasn't provided, I'll just stick with \"right now.\" I think it’s best not to overcomplicate things. The returned value could reflect the midday high or other specifics. I’ll keep the tone friendly and straightforward. It's important to me that the final response is clear and user-friendly without unnecessary complexity. Let’s get this right!", usage: llm.Usage{Input: 92, CacheRead: 0, Output: 456, Reasoning: 384}, stop: llm.StopEnd, reasoningItems: 1},
	}},
	{"TestOpenAIResponsesWithSummaryThinking/openai-gpt-5/thinking.yaml", []rwant{
		{text: "", thinking: "**Checking weather in Florence**\n\nI need to provide a weather update for Florence, Italy. To do this, I’ll call the weather function with the location specified. It seems that I only need to use one tool, so I’ll stick with that. Once I make the call, I’ll need to handle the response, which might come back as a JSON object. I’ll aim to present the key details like temperature and conditions in a simple format.", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 63, CacheRead: 0, Output: 212, Reasoning: 128}, stop: llm.StopToolUse, reasoningItems: 1},
		{text: "It’s currently about 40°C (104°F) in Florence, Italy. Want a forecast or more details like wind and humidity?", thinking: "**Clarifying weather details**\n\nFirst, I should ask the user what timeframe they want since they asked about the weather in Florence, Italy. They likely expect to know the current conditions. Right now, I can only provide the temperature of about 40°C, which is 104°F. I’ll say something like, “The current temperature is around 40°C (104°F).” I should also offer to fetch more details if they want a forecast or hourly breakdown. Keeping it brief and helpful is key!\n\n**Finalizing weather response**\n\nI need to ensure that the tool call is done correctly via the functions namespace, and it looks like I’ve got that covered. Now, I’ll keep the response simple. I can say, “It’s about 40°C (104°F) in Florence right now.” I might also add, “Want the forecast?” or mention, “If you want a 5-day forecast or tips, I can provide that.” I’ll keep it to just 1 or 2 sentences to maintain clarity!", usage: llm.Usage{Input: 92, CacheRead: 0, Output: 544, Reasoning: 448}, stop: llm.StopEnd, reasoningItems: 1},
	}},
}

// TestResponsesFixtures runs real recorded Responses API answers (OpenAI
// and Azure, gpt-4o, gpt-5 and gpt-5-mini, with reasoning summaries)
// through the adapter: streams through the real Provider against the
// cassette served over HTTP, whole responses through DecodeResponse.
func TestResponsesFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/responses/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(responseFixtures) || len(files) != 13 {
		t.Fatalf("%d cassettes on disk, %d in the table; want 13 of each", len(files), len(responseFixtures))
	}
	for _, fx := range responseFixtures {
		t.Run(fx.file, func(t *testing.T) {
			in, err := llmtest.LoadCassette(filepath.Join("testdata/responses", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(in) != len(fx.want) {
				t.Fatalf("%d interactions, table has %d", len(in), len(fx.want))
			}
			streaming := strings.Contains(fx.file, "streaming")
			var p *responses.Provider
			if streaming {
				// Azure's recordings were posted to its v1 path.
				base := llmtest.ServeCassette(t, in).URL + "/v1"
				if strings.HasPrefix(fx.file, "TestAzure") {
					base = strings.TrimSuffix(base, "/v1") + "/openai/v1"
				}
				p, _ = responses.New(responses.Config{BaseURL: base})
			}
			for i, w := range fx.want {
				var got *llm.Reply
				var streamed []string
				var thinking strings.Builder
				onEvent := func(e llm.Event) {
					switch e.Type {
					case llm.EventToolCall:
						streamed = append(streamed, e.Block.Name)
					case llm.EventThinking:
						thinking.WriteString(e.Text)
					}
				}
				if streaming {
					got, err = p.Stream(context.Background(), &llm.Request{Model: "gpt-5", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, onEvent)
				} else {
					got, err = responses.DecodeResponse([]byte(in[i].Body), onEvent)
				}
				if err != nil {
					t.Fatalf("interaction %d: %v", i, err)
				}
				checkReply(t, i, got, want{text: w.text, thinking: w.thinking, calls: w.calls, usage: w.usage, stop: w.stop})
				if len(streamed) != len(w.calls) {
					t.Errorf("interaction %d: %d tool call events, want %d", i, len(streamed), len(w.calls))
				}
				if thinking.String() != w.thinking {
					t.Errorf("interaction %d: streamed thinking %q, want %q", i, thinking.String(), w.thinking)
				}
				checkItems(t, i, got, in[i].Body, w.reasoningItems)
			}
		})
	}
}

// checkItems checks that each reasoning item is kept exactly as the server
// sent it: in a stream, as its output_item.done event has it (the server
// encrypts each copy anew, so response.completed carries the same item
// with other encrypted_content bytes); in a whole response, as its output
// has it.
func checkItems(t *testing.T, i int, got *llm.Reply, body string, n int) {
	t.Helper()
	var raws []json.RawMessage
	if strings.Contains(body, "event: ") {
		for _, line := range strings.Split(body, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || !strings.Contains(data, `"type":"response.output_item.done"`) {
				continue
			}
			var ev struct{ Item json.RawMessage }
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("interaction %d: %v", i, err)
			}
			raws = append(raws, ev.Item)
		}
	} else {
		var resp struct{ Output []json.RawMessage }
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("interaction %d: %v", i, err)
		}
		raws = resp.Output
	}
	byID := map[string]json.RawMessage{}
	for _, o := range raws {
		var h struct{ ID string }
		_ = json.Unmarshal(o, &h)
		var c bytes.Buffer
		_ = json.Compact(&c, o)
		byID[h.ID] = c.Bytes()
	}
	items := 0
	for _, b := range got.Message.Blocks {
		if b.Type != llm.BlockThinking {
			continue
		}
		items++
		var h struct{ ID, Type string }
		if err := json.Unmarshal(b.Item, &h); err != nil || h.Type != "reasoning" {
			t.Fatalf("interaction %d: reasoning block item %s", i, b.Item)
		}
		if !bytes.Equal(b.Item, byID[h.ID]) {
			t.Errorf("interaction %d: reasoning item\n%s\nis not the server's\n%s", i, b.Item, byID[h.ID])
		}
	}
	if items != n {
		t.Errorf("interaction %d: %d reasoning items, want %d", i, items, n)
	}
}
