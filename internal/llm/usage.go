package llm

// Usage is a provider's token count for one request. Input excludes cached
// tokens on every provider: adapters normalise OpenAI's prompt_tokens (which
// includes cached_tokens) to this shape.
type Usage struct {
	Input      int `json:"input_tokens"`
	CacheRead  int `json:"cache_read_tokens"`
	CacheWrite int `json:"cache_write_tokens"`
	Output     int `json:"output_tokens"`
	// Reasoning is the part of Output spent on reasoning, where the
	// provider reports it (OpenAI's completion_tokens_details); it is
	// billed as output and already counted there.
	Reasoning int `json:"reasoning_tokens,omitempty"`
}

// Prompt is the size of the prompt the provider saw: the truth for context
// accounting.
func (u Usage) Prompt() int { return u.Input + u.CacheRead + u.CacheWrite }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
		Output:     u.Output + v.Output,
		Reasoning:  u.Reasoning + v.Reasoning,
	}
}

// Price is dollars per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Cost returns the dollar cost of u at p.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
}
