// kenning's OpenCode plugin (written by `kenning connect opencode`; `--uninstall` removes it).
// Dependency-free: only Node built-ins, so OpenCode needs no package for it. Every event goes to
// `kenning hook opencode <event>` (JSON on stdin, one short Python process, always exit 0), which
// reaches the kenning daemon; what it prints back is added to the system prompt through
// `experimental.chat.system.transform`. A session ends at `session.idle` (the whole conversation,
// read through OpenCode's own client, goes with it) and at dispose. A subagent's session (one with a
// parent) is not a conversation with the user: its prompt was written by the agent, so it is not
// sent as a prompt, its tool steps count as its parent session's, and it sees its parent's memories.
import { spawn } from "node:child_process";

const KENNING = __KENNING_ARGV__;
const KENNING_ENV = __KENNING_ENV__;
const TIMEOUTS_MS = { "session.created": 10000, "chat.message": 10000, "tool.execute.after": 5000,
  "session.compacted": 30000, "session.idle": 30000 };

function hook(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    const finish = (value) => { if (!done) { done = true; clearTimeout(timer); resolve(value); } };
    let child;
    try {
      child = spawn(KENNING[0], [...KENNING.slice(1), "hook", "opencode", event],
        { env: { ...process.env, ...KENNING_ENV }, stdio: ["pipe", "pipe", "ignore"] });
    } catch (err) {
      resolve({});
      return;
    }
    const timer = setTimeout(() => { try { child.kill("SIGKILL"); } catch (err) {} finish({}); },
      TIMEOUTS_MS[event] || 10000);
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", () => finish({}));
    child.on("close", () => { try { finish(JSON.parse(out || "{}")); } catch (err) { finish({}); } });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export const KenningPlugin = async ({ client, directory }) => {
  const started = new Map(); // sessionID -> promise of the session-start answer
  const context = new Map(); // sessionID -> {start, prompt, step}: text for the system prompt
  const active = new Set(); // sessions with activity since their last end
  const parents = new Map(); // sessionID -> promise of its parent's ID ("" for a top-level session)

  const parentOf = (sessionID) => {
    if (!parents.has(sessionID)) {
      parents.set(sessionID, client.session.get({ path: { id: sessionID } })
        .then((found) => (found && found.data && found.data.parentID) || "")
        .catch(() => ""));
    }
    return parents.get(sessionID);
  };
  const topOf = async (sessionID) => {
    let current = sessionID;
    for (let depth = 0; depth < 8; depth++) {
      const parent = await parentOf(current);
      if (!parent) return current;
      current = parent;
    }
    return current;
  };

  const base = (sessionID) => ({ session_id: sessionID, cwd: directory });
  const note = (sessionID, key, answer) => {
    const text = answer && typeof answer.additionalContext === "string" ? answer.additionalContext : "";
    const entry = context.get(sessionID) || {};
    entry[key] = text;
    context.set(sessionID, entry);
  };
  const start = (sessionID) => {
    if (!started.has(sessionID)) {
      started.set(sessionID, hook("session.created", base(sessionID)).then((answer) => note(sessionID, "start", answer)));
    }
    return started.get(sessionID);
  };
  const end = async (sessionID, reason) => {
    if (!active.has(sessionID)) return;
    active.delete(sessionID);
    let messages = [];
    try {
      const found = await client.session.messages({ path: { id: sessionID } });
      messages = (found && found.data) || [];
    } catch (err) {}
    await hook("session.idle", { ...base(sessionID), reason, messages });
  };

  return {
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      if ((await topOf(sessionID)) !== sessionID) return; // a subagent's prompt, written by the agent
      active.add(sessionID);
      await start(sessionID);
      const parts = (output && output.parts) || [];
      const prompt = parts.filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
      note(sessionID, "prompt", await hook("chat.message", { ...base(sessionID), prompt }));
    },
    "experimental.chat.system.transform": async (input, output) => {
      const entry = context.get(await topOf(input.sessionID)); // a subagent works on its parent's task
      if (!entry || !output || !Array.isArray(output.system)) return;
      const text = [entry.start, entry.prompt, entry.step].filter(Boolean).join("\n\n");
      if (text) output.system.push(text);
    },
    "tool.execute.after": async (input, output) => {
      const sessionID = await topOf(input.sessionID);
      active.add(sessionID);
      note(sessionID, "step", await hook("tool.execute.after", {
        ...base(sessionID), tool: input.tool, call_id: input.callID, args: input.args,
        title: output && output.title, output: output && output.output, metadata: output && output.metadata,
      }));
    },
    event: async ({ event }) => {
      const sessionID = event && event.properties && event.properties.sessionID;
      if (!sessionID) return;
      if ((await topOf(sessionID)) !== sessionID) return; // a subagent's session ends with its parent's
      if (event.type === "session.idle") await end(sessionID, "idle");
      else if (event.type === "session.compacted") await hook("session.compacted", base(sessionID));
    },
    dispose: async () => {
      for (const sessionID of [...active]) await end(sessionID, "exit");
    },
  };
};
