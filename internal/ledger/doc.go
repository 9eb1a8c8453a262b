// Package ledger says where a session's money went: for every model
// request, the input tokens by cache tier (cache read, cache write,
// uncached) and by content kind (system prompt, tool definitions, tool
// results, the model's earlier text and calls, user text, reminders,
// thinking, summaries), the output and reasoning tokens, the dollars at the
// catalogue's price, and — where a cause is known — why the request cost
// more than it needed to: a cache miss and its reason (a model switch, an
// edit at message N by a named context layer, a TTL expiry after an idle
// gap, a change of tools or system prompt), a large tool result, a
// compaction's own cost, thinking.
//
// The provider's reported usage is the truth: the tiers and the total are
// exactly what it reported. The split by kind is an estimate (characters
// per token, scaled so the kinds add up to the reported total) and is
// labelled so wherever it is shown. The tiers are laid over the kinds by
// position in the prompt (tools, system, then messages in order: the order
// a prefix cache reads them), which gives each kind its dollars.
//
// A Book holds one session's Records; the agent adds one per request and
// the session log keeps each (sessionlog.TypeLedger), so a past session's
// ledger is read back from its log alone (FromEntries).
package ledger
