// A small ACP client for the end-to-end tests, built on the real client library
// (@zed-industries/agent-client-protocol, whose dist folder ACP_SDK names). It spawns the agent
// (the arguments after "--"), opens one session in the scenario's cwd and runs its steps,
// writing every event as one JSON line to the log file:
//
//   node acp_client.mjs SCENARIO LOG -- AGENT ARGS...
//
// The scenario: {"cwd": DIR, "load": SESSION_ID, "steps": [STEP...]}; with "load" the session
// is an earlier one, opened with session/load (the updates it replays come before the first
// "prompt" event), else a new one. Each step is
//   {"prompt": TEXT, "permission": ANSWER, "cancel_on": EVENT, "cancel_after_permission_ms": MS}
// ANSWER says what to do with each permission request during the step: an option kind
// (allow_once, allow_always, reject_once), "cancelled" (answer with the cancelled outcome), or
// "cancel_turn" (send session/cancel and leave the request unanswered until the turn ends).
// EVENT is a sessionUpdate type (tool_call, tool_call_update, agent_message_chunk): send
// session/cancel when the step's first update of that type arrives. MS: send it that long
// after answering a permission request.
//
// The library validates every request and notification the agent sends; the responses to
// the client's own requests are validated here with the library's schemas. Anything the
// library reports on console.error (a validation error above all) is logged as
// {"event":"console_error"}, and the test fails on it.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [scenarioPath, logPath, separator, ...agent] = process.argv.slice(2);
if (separator !== "--" || agent.length === 0) {
  console.log("usage: node acp_client.mjs SCENARIO LOG -- AGENT ARGS...");
  process.exit(2);
}
const acp = await import(pathToFileURL(path.join(process.env.ACP_SDK, "acp.js")).href);
const scenario = JSON.parse(fs.readFileSync(scenarioPath, "utf8"));
const log = fs.openSync(logPath, "w");
const record = (event) => fs.writeSync(log, JSON.stringify(event) + "\n");

console.error = (...args) =>
  record({ event: "console_error", text: args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ") });

const child = spawn(agent[0], agent.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
child.on("exit", (code, signal) => record({ event: "agent_exit", code, signal }));

let step = null;             // the step that runs now
let sessionId = null;
let connection = null;
const unanswered = [];       // resolvers of requests held back by "cancel_turn"

function cancelTurn(why) {
  if (step.cancelled) return;
  step.cancelled = true;
  record({ event: "cancel_sent", why });
  connection.cancel({ sessionId });
}

const client = {
  async requestPermission(params) {
    record({ event: "permission", params });
    const answer = step.permission;
    if (answer === "cancelled") return { outcome: { outcome: "cancelled" } };
    if (answer === "cancel_turn") {
      cancelTurn("permission");
      return new Promise((resolve) => unanswered.push(resolve));
    }
    if (step.cancel_after_permission_ms) setTimeout(() => cancelTurn("after permission"), step.cancel_after_permission_ms);
    const option = params.options.find((o) => o.kind === answer);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  },
  async sessionUpdate(params) {
    record({ event: "update", params });
    if (step && step.cancel_on === params.update.sessionUpdate) cancelTurn(step.cancel_on);
  },
};

connection = new acp.ClientSideConnection(
  () => client,
  acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
);

function validated(schema, name, value) {
  const parsed = schema.safeParse(value);
  if (!parsed.success) record({ event: "console_error", text: `${name}: ${JSON.stringify(parsed.error.format())}` });
  return value;
}

try {
  const init = validated(acp.initializeResponseSchema, "initialize",
    await connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } }));
  record({ event: "initialized", result: init });
  if (scenario.load) {
    const loaded = validated(acp.loadSessionResponseSchema, "session/load",
      await connection.loadSession({ sessionId: scenario.load, cwd: scenario.cwd, mcpServers: [] }));
    record({ event: "loaded", result: loaded });
    sessionId = scenario.load;
  } else {
    const session = validated(acp.newSessionResponseSchema, "session/new",
      await connection.newSession({ cwd: scenario.cwd, mcpServers: [] }));
    sessionId = session.sessionId;
  }
  record({ event: "session", sessionId });
  for (const [index, s] of scenario.steps.entries()) {
    step = { ...s, index, cancelled: false };
    record({ event: "prompt", index, text: s.prompt });
    const started = Date.now();
    try {
      const result = validated(acp.promptResponseSchema, "session/prompt",
        await connection.prompt({ sessionId, prompt: [{ type: "text", text: s.prompt }] }));
      record({ event: "stop", index, stopReason: result.stopReason, ms: Date.now() - started });
    } catch (error) {
      record({ event: "prompt_error", index, error });
    }
    // The spec wants an answer to every request; after the turn ended it comes too late.
    while (unanswered.length) unanswered.shift()({ outcome: { outcome: "cancelled" } });
  }
} catch (error) {
  record({ event: "client_error", error: String(error && (error.stack || JSON.stringify(error))) });
}
child.stdin.end();
await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on("exit", resolve)));
fs.closeSync(log);
