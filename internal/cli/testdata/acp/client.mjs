// An editor driving harness acp through the official TypeScript SDK
// (@agentclientprotocol/sdk, pinned in .ci/run), for TestACPWithOfficialSDK.
// stdin and stdout are the ACP stream; what it found goes to stderr, and
// the exit status says whether every check held.
import { Readable, Writable } from "node:stream";

const sdk = await import(process.env.ACP_SDK);
const project = process.env.ACP_PROJECT;
let failed = false;
const fail = (m) => { failed = true; console.error("FAIL: " + m); };
const t00 = Date.now();
const log = (m) => console.error(`${Date.now() - t00} ms: ${m}`);

const updates = [];
const asked = [];
let answer = "allow_once";
const waiters = [];
const app = sdk.client()
  .onRequest("session/request_permission", async ({ params }) => {
    asked.push(params);
    return { outcome: { outcome: "selected", optionId: answer } };
  })
  .onNotification("session/update", async ({ params }) => {
    updates.push(params.update);
    for (const w of waiters.splice(0)) w();
  });

const take = () => updates.splice(0);
const ofKind = (us, k) => us.filter((u) => u.sessionUpdate === k);
const until = async (pred, ms) => {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) return false;
    await new Promise((r) => { waiters.push(r); setTimeout(r, 50); });
  }
  return true;
};

const stream = sdk.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
await app.connectWith(stream, async (cx) => {
  const init = await cx.request("initialize", { protocolVersion: sdk.PROTOCOL_VERSION, clientCapabilities: {} });
  if (init.protocolVersion !== 1 || !init.agentCapabilities.loadSession) fail("initialize: " + JSON.stringify(init));
  const ns = await cx.request("session/new", { cwd: project, mcpServers: [] });
  const sessionId = ns.sessionId;
  if (ns.modes?.currentModeId !== "default" || ns.modes.availableModes.map((m) => m.id).join() !== "default,acceptEdits,plan") fail("modes: " + JSON.stringify(ns.modes));
  const prompt = (text) => cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

  // Streaming.
  log("Streaming.");
  let r = await prompt("hello");
  let us = take();
  const text = ofKind(us, "agent_message_chunk").map((u) => u.content.text).join("");
  if (r.stopReason !== "end_turn" || text !== "hello from the fake") fail(`streaming: ${r.stopReason} ${JSON.stringify(text)}`);

  // A command: kind execute, statuses through to completed.
  log("A command: kind execute, statuses through to completed.");
  r = await prompt("run");
  us = take();
  const call = ofKind(us, "tool_call")[0];
  const statuses = us.filter((u) => u.toolCallId === "b1").map((u) => u.status).filter(Boolean);
  if (call?.kind !== "execute" || statuses.join() !== "pending,in_progress,completed") fail(`execute: ${JSON.stringify(call)} ${statuses}`);

  // An edit: diff content.
  log("An edit: diff content.");
  r = await prompt("edit");
  us = take();
  const diff = us.flatMap((u) => u.content ?? []).find((c) => c.type === "diff");
  if (!diff || diff.path !== project + "/main.go" || !diff.newText.includes("println(1)") || !diff.oldText.includes("func main() {}")) fail("diff: " + JSON.stringify(diff));
  if (asked.length !== 1) fail(`edit asked ${asked.length} times`);

  // A reject ends the turn.
  log("A reject ends the turn.");
  answer = "reject_once";
  r = await prompt("write");
  us = take();
  if (r.stopReason !== "end_turn" || asked.length !== 2 || asked[1].toolCall.toolCallId !== "w1") fail(`reject: ${r.stopReason} ${JSON.stringify(asked[1])}`);
  if (!asked[1].options.map((o) => o.kind).join().includes("allow_once,allow_always,reject_once,reject_always")) fail("options: " + JSON.stringify(asked[1].options));

  // Cancel within 2 s.
  log("Cancel within 2 s.");
  answer = "allow_once";
  const running = prompt("sleep");
  if (!(await until(() => updates.some((u) => u.toolCallId === "s1" && u.status === "in_progress"), 20000))) fail("the command never started");
  await new Promise((res) => setTimeout(res, 500));
  const t0 = Date.now();
  await cx.notify("session/cancel", { sessionId });
  r = await running;
  const took = Date.now() - t0;
  log(`cancel answered in ${took} ms`);
  if (r.stopReason !== "cancelled" || took > 2000) fail(`cancel: ${r.stopReason} after ${took} ms`);
  take();
  r = await prompt("after");
  if (r.stopReason !== "end_turn") fail("the session after a cancel: " + r.stopReason);

  // Modes.
  log("Modes.");
  await cx.request("session/set_mode", { sessionId, modeId: "plan" });
  await cx.request("session/set_mode", { sessionId, modeId: "default" });
  take();

  // Load replays the conversation before answering.
  log("Load replays the conversation before answering.");
  await cx.request("session/load", { sessionId, cwd: project, mcpServers: [] });
  us = take();
  const said = ofKind(us, "user_message_chunk").map((u) => u.content.text).join("|");
  const answered = ofKind(us, "agent_message_chunk").map((u) => u.content.text).join("|");
  if (!said.includes("hello") || !said.includes("after") || !answered.includes("hello from the fake") || !answered.includes("after cancel")) fail(`replay: ${said} / ${answered}`);
  if (!ofKind(us, "tool_call").some((u) => u.toolCallId === "e1" && u.kind === "edit")) fail("replay lacks the edit");
  r = await prompt("after load");
  if (r.stopReason !== "end_turn") fail("a prompt after load: " + r.stopReason);
  take();
});
log(failed ? "some checks failed" : "all checks held");
process.exit(failed ? 1 : 0);
