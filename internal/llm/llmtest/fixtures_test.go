package llmtest_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

type call struct{ name, args string }

// want is what one recorded response must decode to. Tool arguments are
// compared as parsed JSON, so the recordings' spacing does not matter.
type want struct {
	text, thinking string
	calls          []call
	usage          llm.Usage
	stop           llm.StopReason
}

// fixtures lists every cassette in testdata/providers with the values read
// from its recorded responses, one want per interaction.
var fixtures = []struct {
	file string
	want []want
}{
	{"TestAnthropicCommon/claude-sonnet-4/multi_tool.yaml", []want{
		{text: "I'll add and multiply the numbers 2 and 3 for you.", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 507, Output: 137}, stop: llm.StopToolUse},
		{text: "The results are:\n- 2 + 3 = 5\n- 2 × 3 = 6", usage: llm.Usage{Input: 705, Output: 31}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommon/claude-sonnet-4/multi_tool_streaming.yaml", []want{
		{text: "I'll add and multiply the numbers 2 and 3 for you.", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 502, Output: 137}, stop: llm.StopToolUse},
		{text: "The results are:\n- 2 + 3 = 5\n- 2 × 3 = 6", usage: llm.Usage{Input: 700, Output: 31}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommon/claude-sonnet-4/simple.yaml", []want{
		{text: "Olá! \n\n(That's \"hello\" in Portuguese. You could also say \"Oi!\" for a more casual \"hi!\")", usage: llm.Usage{Input: 16, Output: 34}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommon/claude-sonnet-4/simple_streaming.yaml", []want{
		{text: "Olá! (That's \"hi\" in Portuguese)\n\nYou could also say \"Oi!\" which is a more casual way to say hi in Portuguese.", usage: llm.Usage{Input: 16, Output: 38}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommon/claude-sonnet-4/tool.yaml", []want{
		{text: "I'll check the weather in Florence, Italy for you.", calls: []call{{"weather", "{\"location\":\"Florence,Italy\"}"}}, usage: llm.Usage{Input: 394, Output: 66}, stop: llm.StopToolUse},
		{text: "The current weather in Florence, Italy is 40°C (104°F). That's quite hot! It would be a good idea to stay hydrated and seek shade or air conditioning if you're planning to be outdoors.", usage: llm.Usage{Input: 475, Output: 50}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommon/claude-sonnet-4/tool_streaming.yaml", []want{
		{text: "I'll get the weather information for Florence, Italy for you.", calls: []call{{"weather", "{\"location\":\"Florence,Italy\"}"}}, usage: llm.Usage{Input: 394, Output: 67}, stop: llm.StopToolUse},
		{text: "The current weather in Florence, Italy shows a temperature of 40°C (104°F). That's quite hot! Make sure to stay hydrated and seek shade if you're planning to be outdoors.", usage: llm.Usage{Input: 476, Output: 46}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommonWithCacheControl/claude-sonnet-4/multi_tool.yaml", []want{
		{text: "I'll add and multiply the numbers 2 and 3 for you.", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 507, Output: 137}, stop: llm.StopToolUse},
		{text: "The results are:\n- 2 + 3 = 5\n- 2 × 3 = 6", usage: llm.Usage{Input: 705, Output: 31}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommonWithCacheControl/claude-sonnet-4/multi_tool_streaming.yaml", []want{
		{text: "I'll add and multiply the numbers 2 and 3 for you.", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 502, Output: 137}, stop: llm.StopToolUse},
		{text: "The results are:\n- 2 + 3 = 5\n- 2 × 3 = 6", usage: llm.Usage{Input: 700, Output: 31}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommonWithCacheControl/claude-sonnet-4/simple.yaml", []want{
		{text: "Olá! \n\n(That's \"hi\" in Portuguese - you can also say \"Oi!\" for a more casual greeting)", usage: llm.Usage{Input: 16, Output: 33}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommonWithCacheControl/claude-sonnet-4/simple_streaming.yaml", []want{
		{text: "Olá! (Oh-LAH)\n\nThat's \"hello\" in Portuguese. You can also say \"Oi!\" (Oy) for a more casual \"hi!\"", usage: llm.Usage{Input: 16, Output: 43}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommonWithCacheControl/claude-sonnet-4/tool.yaml", []want{
		{text: "I'll get the weather information for Florence, Italy for you.", calls: []call{{"weather", "{\"location\":\"Florence,Italy\"}"}}, usage: llm.Usage{Input: 394, Output: 67}, stop: llm.StopToolUse},
		{text: "The weather in Florence, Italy is currently 40°C (104°F). That's quite hot! Make sure to stay hydrated and seek shade if you're planning to be outdoors.", usage: llm.Usage{Input: 476, Output: 43}, stop: llm.StopEnd},
	}},
	{"TestAnthropicCommonWithCacheControl/claude-sonnet-4/tool_streaming.yaml", []want{
		{text: "I'll check the weather in Florence, Italy for you.", calls: []call{{"weather", "{\"location\":\"Florence,Italy\"}"}}, usage: llm.Usage{Input: 394, Output: 66}, stop: llm.StopToolUse},
		{text: "The current weather in Florence, Italy is 40°C (104°F). That's quite hot! Make sure to stay hydrated and seek shade if you're planning to be outdoors.", usage: llm.Usage{Input: 475, Output: 43}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-4o/multi_tool.yaml", []want{
		{text: "", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 110, Output: 50}, stop: llm.StopToolUse},
		{text: "The result of adding 2 and 3 is 5, and the result of multiplying 2 and 3 is 6.", usage: llm.Usage{Input: 176, Output: 28}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-4o/multi_tool_streaming.yaml", []want{
		{text: "", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 106, Output: 50}, stop: llm.StopToolUse},
		{text: "The sum of 2 and 3 is 5, and the product is 6.", usage: llm.Usage{Input: 172, Output: 20}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-4o/simple.yaml", []want{
		{text: "Oi!", usage: llm.Usage{Input: 20, Output: 2}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-4o/simple_streaming.yaml", []want{
		{text: "Olá!", usage: llm.Usage{Input: 20, Output: 2}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-4o/tool.yaml", []want{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 61, Output: 16}, stop: llm.StopToolUse},
		{text: "The weather in Florence, Italy is currently 40°C.", usage: llm.Usage{Input: 86, Output: 13}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-4o/tool_streaming.yaml", []want{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 61, Output: 16}, stop: llm.StopToolUse},
		{text: "The current temperature in Florence, Italy is 40°C.", usage: llm.Usage{Input: 86, Output: 13}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-5/multi_tool.yaml", []want{
		{text: "", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 194, Output: 315, Reasoning: 256}, stop: llm.StopToolUse},
		{text: "- Sum (2 + 3): 5\n- Product (2 × 3): 6", usage: llm.Usage{Input: 266, Output: 24}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-5/multi_tool_streaming.yaml", []want{
		{text: "", calls: []call{{"add", "{\"a\":2,\"b\":3}"}, {"multiply", "{\"a\":2,\"b\":3}"}}, usage: llm.Usage{Input: 190, Output: 379, Reasoning: 320}, stop: llm.StopToolUse},
		{text: "Addition: 2 + 3 = 5\nMultiplication: 2 × 3 = 6", usage: llm.Usage{Input: 262, Output: 25}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-5/simple.yaml", []want{
		{text: "Olá!", usage: llm.Usage{Input: 19, Output: 139, Reasoning: 128}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-5/simple_streaming.yaml", []want{
		{text: "Olá!", usage: llm.Usage{Input: 19, Output: 75, Reasoning: 64}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-5/tool.yaml", []want{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 145, Output: 153, Reasoning: 128}, stop: llm.StopToolUse},
		{text: "It’s currently about 40°C (104°F) in Florence, Italy. Would you like a forecast or more details like wind and humidity?", usage: llm.Usage{Input: 176, Output: 230, Reasoning: 192}, stop: llm.StopEnd},
	}},
	{"TestOpenAICommon/openai-gpt-5/tool_streaming.yaml", []want{
		{text: "", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 145, Output: 89, Reasoning: 64}, stop: llm.StopToolUse},
		{text: "It’s currently about 40°C (104°F) in Florence, Italy. Want a forecast or more details like wind and humidity?", usage: llm.Usage{Input: 176, Output: 228, Reasoning: 192}, stop: llm.StopEnd},
	}},
	{"TestOpenAICompatibleCommon/llama-cpp-gpt-oss/simple.yaml", []want{
		{text: "Olá!", thinking: "The user says: \"Say hi in Portuguese\". So answer: \"Olá\" or \"Oi\". Likely \"Olá\". Probably a friendly greeting. Just respond with that.", usage: llm.Usage{Input: 84, Output: 47}, stop: llm.StopEnd},
	}},
	{"TestOpenAICompatibleCommon/llama-cpp-gpt-oss/simple_streaming.yaml", []want{
		{text: "Olá!", thinking: "The user: \"Say hi in Portuguese\". They want a greeting in Portuguese. Simple: \"Olá!\" or \"Oi!\". Probably respond with \"Olá!\" or \"Oi!\".\n\nWe should keep it concise. We'll respond.", usage: llm.Usage{Input: 1, CacheRead: 83, Output: 57}, stop: llm.StopEnd},
	}},
	{"TestOpenAICompatibleCommon/llama-cpp-gpt-oss/tool.yaml", []want{
		{text: "", thinking: "The user asks: \"What's the weather in Florence, Italy?\" We have a tool \"functions.weather\" that can get weather information. We should call it.", calls: []call{{"weather", "{\"location\":\"Florence,Italy\"}"}}, usage: llm.Usage{Input: 80, CacheRead: 59, Output: 58}, stop: llm.StopToolUse},
		{text: "The current weather in Florence, Italy is **40\u202f°C**.", usage: llm.Usage{Input: 36, CacheRead: 177, Output: 18}, stop: llm.StopEnd},
	}},
	{"TestOpenAICompatibleCommon/llama-cpp-gpt-oss/tool_streaming.yaml", []want{
		{text: "", thinking: "User wants weather in Florence, Italy. We can use the weather function.", calls: []call{{"weather", "{\"location\":\"Florence, Italy\"}"}}, usage: llm.Usage{Input: 1, CacheRead: 138, Output: 41}, stop: llm.StopToolUse},
		{text: "The current weather in Florence, Italy is **40\u202f°C**.", usage: llm.Usage{Input: 36, CacheRead: 160, Output: 18}, stop: llm.StopEnd},
	}},
}

// TestFixtures runs every recorded provider response through the adapters:
// streams through the real adapter against the cassette served over HTTP,
// whole JSON responses through the adapters' DecodeResponse.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/providers/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 28 || len(fixtures) != 28 {
		t.Fatalf("%d cassettes on disk, %d in the table; want 28 of each (30 files with LICENSE and README)", len(files), len(fixtures))
	}
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			in, err := llmtest.LoadCassette(filepath.Join("testdata/providers", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(in) != len(fx.want) {
				t.Fatalf("%d interactions, table has %d", len(in), len(fx.want))
			}
			isAnthropic := strings.HasPrefix(fx.file, "TestAnthropic")
			streaming := strings.HasSuffix(fx.file, "_streaming.yaml")
			var p llm.Provider
			if streaming {
				url := llmtest.ServeCassette(t, in).URL
				if isAnthropic {
					p = anthropic.New(anthropic.Config{BaseURL: url, APIKey: "k"})
				} else {
					p = openai.New(openai.Config{BaseURL: url + "/v1"})
				}
			}
			for i, w := range fx.want {
				var got *llm.Reply
				var streamed []string
				onEvent := func(e llm.Event) {
					if e.Type == llm.EventToolCall {
						streamed = append(streamed, e.Block.Name)
					}
				}
				switch {
				case streaming:
					got, err = p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, onEvent)
				case isAnthropic:
					got, err = anthropic.DecodeResponse([]byte(in[i].Body), onEvent)
				default:
					got, err = openai.DecodeResponse([]byte(in[i].Body), onEvent)
				}
				if err != nil {
					t.Fatalf("interaction %d: %v", i, err)
				}
				checkReply(t, i, got, w)
				if len(streamed) != len(w.calls) {
					t.Errorf("interaction %d: %d tool call events, want %d", i, len(streamed), len(w.calls))
				}
			}
		})
	}
}

func checkReply(t *testing.T, i int, got *llm.Reply, w want) {
	t.Helper()
	if s := got.Message.PlainText(); s != w.text {
		t.Errorf("interaction %d: text %q, want %q", i, s, w.text)
	}
	var thinking string
	var calls []llm.Block
	for _, b := range got.Message.Blocks {
		switch b.Type {
		case llm.BlockThinking:
			thinking += b.Thinking
		case llm.BlockToolUse:
			calls = append(calls, b)
		}
	}
	if thinking != w.thinking {
		t.Errorf("interaction %d: thinking %q, want %q", i, thinking, w.thinking)
	}
	if len(calls) != len(w.calls) {
		t.Fatalf("interaction %d: %d tool calls, want %d", i, len(calls), len(w.calls))
	}
	for k, c := range calls {
		if c.Name != w.calls[k].name || c.ID == "" {
			t.Errorf("interaction %d: call %d is %q (id %q), want %q", i, k, c.Name, c.ID, w.calls[k].name)
		}
		var g, e any
		if err := json.Unmarshal(c.Input, &g); err != nil {
			t.Errorf("interaction %d: call %d input %s: %v", i, k, c.Input, err)
		}
		if err := json.Unmarshal([]byte(w.calls[k].args), &e); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, e) {
			t.Errorf("interaction %d: call %d arguments %s, want %s", i, k, c.Input, w.calls[k].args)
		}
	}
	if got.Usage != w.usage {
		t.Errorf("interaction %d: usage %+v, want %+v", i, got.Usage, w.usage)
	}
	if got.StopReason != w.stop {
		t.Errorf("interaction %d: stop %q, want %q", i, got.StopReason, w.stop)
	}
}
