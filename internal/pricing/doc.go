// Package pricing knows what a model's tokens cost, so the status line and
// /cost can show dollars. Prices come from the model catalogue in package
// llm (llm.LookupModel, or a catalogue merged with ~/.agents/models.json);
// a model the catalogue has no price for is unknown and costs 0, said as
// "price unknown" rather than guessed. Matching is exact or by dated
// snapshot, never by bare prefix, so a new model of a family is not given
// its predecessor's price. The user overrides any part with PRICE_INPUT,
// PRICE_OUTPUT, PRICE_CACHE_READ and PRICE_CACHE_WRITE (dollars per million
// tokens), which the config package reads and passes in as an Override: this
// package never reads the environment.
package pricing
