package permission

import "strings"

// modeDenied refuses what plan mode cannot hold in the walls. Plan mode
// (walls.Policy.ProjectReadOnly) makes the project read-only in the
// kernel for every command and file tool; an MCP server's tool runs in the
// server's own process (started before the switch, or remote), where the
// walls of this moment do not reach, so only a tool that declares itself
// read-only (readOnlyHint) is let through. The refusal is a Deny: no rule,
// hook, answer or --yolo lifts it while the mode holds.
func (g *Gate) modeDenied(req Request) (Decision, bool) {
	if !strings.HasPrefix(req.Tool, mcpPrefix) || req.DeclaredReadOnly || !g.pol.Policy().ProjectReadOnly() {
		return Decision{}, false
	}
	return Decision{
		Verdict: Deny,
		Rule:    "plan mode: an MCP tool not declared read-only",
		Reason: "Not run: the session is in plan mode, where the project is read-only, and the MCP tool " + req.Tool +
			" does not declare itself read-only (no readOnlyHint annotation), so harness cannot keep it from writing. " +
			"Plan with read-only tools; once the user accepts the plan and leaves plan mode, this tool can be called again.",
	}, true
}
