package history

import (
	"encoding/json"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

var (
	anthropicIn = regexp.MustCompile(`"input_tokens":\s*(\d+),\s*"cache_creation_input_tokens":\s*(\d+),\s*"cache_read_input_tokens":\s*(\d+)`)
	openaiIn    = regexp.MustCompile(`"prompt_tokens":\s*(\d+)`)
)

// promptChars counts the text a provider tokenises in a recorded request
// body: message and system text, tool descriptions and schemas.
func promptChars(v any, key string) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for k, c := range x {
			switch k {
			case "input_schema", "parameters":
				b, _ := json.Marshal(c)
				n += len(b)
			case "model", "role", "type", "id", "tool_call_id", "tool_use_id", "stream", "max_tokens", "tool_choice", "stream_options", "cache_control":
			default:
				n += promptChars(c, k)
			}
		}
		return n
	case []any:
		n := 0
		for _, c := range x {
			n += promptChars(c, key)
		}
		return n
	case string:
		return len(x)
	}
	return 0
}

// TestEstimatorOnProviderFixtures states the estimator's error against the
// real prompt counts in the recorded provider streams. Their prompts are a
// few dozen tokens, where the chat template's fixed overhead (role markers,
// the tool-use preamble a provider adds) dominates, so the estimate of a
// whole prompt is far off there; that is why harness counts from the last
// reply's usage and estimates only what was added since (see
// internal/replay's TestEstimatorError for long sessions). The bound only
// catches a broken estimator.
func TestEstimatorOnProviderFixtures(t *testing.T) {
	root := filepath.Join("..", "llm", "llmtest", "testdata", "providers")
	var n int
	var sum, sumAbs float64
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		ints, err := llmtest.LoadCassette(path)
		if err != nil {
			return err
		}
		for _, in := range ints {
			real := 0
			if m := anthropicIn.FindStringSubmatch(in.Body); m != nil {
				for _, s := range m[1:] {
					v, _ := strconv.Atoi(s)
					real += v
				}
			} else if ms := openaiIn.FindAllStringSubmatch(in.Body, -1); ms != nil {
				real, _ = strconv.Atoi(ms[len(ms)-1][1])
			}
			var body any
			if real == 0 || json.Unmarshal([]byte(in.RequestBody), &body) != nil {
				continue
			}
			est := EstimateText(strings.Repeat("x", promptChars(body, "")))
			e := (float64(est) - float64(real)) / float64(real)
			sum += e
			sumAbs += math.Abs(e)
			n++
			t.Logf("%s: estimate %d, provider %d (%+.0f%%)", strings.TrimPrefix(path, root+"/"), est, real, 100*e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no recorded usage found in the provider fixtures")
	}
	t.Logf("%d recorded requests: whole-prompt estimate error %+.1f%% mean, %.1f%% mean absolute", n, 100*sum/float64(n), 100*sumAbs/float64(n))
	if mean := sum / float64(n); mean < -0.9 || mean > 3 {
		t.Errorf("mean estimate error %+.0f%%: the estimator is broken", 100*mean)
	}
}
