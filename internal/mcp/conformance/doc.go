// Package conformance runs the official MCP conformance suite's client
// scenarios (npm @modelcontextprotocol/conformance, the version .ci/run
// pins) against harness's MCP client and, in the same run, against a
// minimal client on the official Go SDK, and holds harness to at least
// every scenario the SDK's client passes.
//
// The suite starts a test server for each scenario and runs the client
// command it is given with the server's URL as the last argument, the
// scenario's name in MCP_CONFORMANCE_SCENARIO and, for some, what the
// client needs (pre-registered OAuth credentials, tool calls to make) as
// JSON in MCP_CONFORMANCE_CONTEXT; its checks watch the wire and judge.
// Both clients (cmd/harnessclient on package mcp's exported API: Start,
// the tools, resources and prompts of the Manager,
// Options.Elicit for the plan's answer to a form; cmd/sdkclient on
// github.com/modelcontextprotocol/go-sdk) do what the same Plan says for
// the scenario, so they differ only in the client library: the Plan is
// the SDK's own conformance client (go-sdk's conformance/everything-client)
// written down once. A client exits 1 when a step the scenario needs
// fails, but the verdict is the suite's checks, not the exit code.
//
// The test (conformance_test.go) needs the npm package and a Node.js it
// runs on (22 or later: the suite uses fs.globSync), both installed in
// $HARNESS_MCP_CONFORMANCE_NPM by .ci/run; without them it skips, saying
// how to install them, unless HARNESS_REQUIRE names mcp-conformance. It
// reaches nothing but loopback: the suite's servers listen on localhost.
package conformance
