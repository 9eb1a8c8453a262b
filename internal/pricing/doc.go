// Package pricing knows what a model's tokens cost, so the status line and
// /cost can show dollars. The built-in table covers the Anthropic Claude 4.x
// and OpenAI gpt-4o / gpt-4.1 / gpt-5 families at list prices (standard
// tier, short context); anything else is unknown and costs 0, said as
// "price unknown" rather than guessed. The user overrides any part with
// PRICE_INPUT, PRICE_OUTPUT, PRICE_CACHE_READ and PRICE_CACHE_WRITE (dollars
// per million tokens), which the config package reads and passes in as an
// Override: this package never reads the environment.
package pricing
