// Package session is the append-only JSONL log of one conversation: every
// message, history edit, permission decision and usage record, one JSON
// object per line, synced before the agent goes on. Replaying a log rebuilds
// the exact history, so a resumed session sends the same request bytes and
// the provider's prefix cache keeps hitting.
//
// A crash can leave at most one torn last line; readers skip it and say so.
// Configured API keys are redacted before anything reaches the disk.
package session
