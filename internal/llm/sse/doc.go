// Package sse reads a server-sent events stream (the text/event-stream
// format of the WHATWG HTML spec) as the Anthropic and OpenAI-style APIs send
// it: "event:" and "data:" fields, ":" comment lines used as keep-alives, a
// blank line ending each event, LF or CRLF line ends.
//
// It is deliberately small and allocation-light: the provider adapters call
// Next in a loop and decode each event's Data themselves. A stream that ends
// cleanly (io.EOF) without a final blank line still yields its last event; a
// stream that breaks mid-way returns the transport error so the adapter can
// report a cut stream. A line over MaxLine or an event over MaxEvent is a
// *TooLargeError as soon as it goes over, never buffered whole; the
// exchange (package llm) reports it, with the limit, as not retryable.
package sse
