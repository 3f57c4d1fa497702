// The reference chat page (SPEC §13): ES modules, no build step. This module wires the controls;
// state.js keeps what the browser stores, stream.js reads the event stream, events.js applies it to
// the message being written, request.js builds the next request, render.js and pictures.js draw.

import { applyChunk, endCalls, markStopped } from "./events.js";
import { forgetPictures } from "./pictures.js";
import { renderAll, renderOne } from "./render.js";
import { requestMessages } from "./request.js";
import { authHeaders, saveApiKey, saveMessages, saveSettings, state } from "./state.js";
import { readStream } from "./stream.js";

const el = (id) => document.getElementById(id);
const chatEl = el("chat");
const input = el("input");
const sendBtn = el("send-btn");
const stopBtn = el("stop-btn");

let modelName; // as /health names it (13.20); left out of a request sent before it is known
let running = null; // { controller, message }

async function send(text) {
  state.messages.push({ role: "user", text });
  const message = { segments: [], reasoning: "" }; // an answer: every message but the user's
  state.messages.push(message);
  saveMessages();
  renderAll(chatEl, state.messages, true);
  const controller = new AbortController();
  running = { controller, message };
  setBusy(true);
  try {
    // The message being written adds nothing to the request: it has no segments yet.
    const body = { model: modelName, messages: requestMessages(state.messages), stream: true };
    if (state.settings.mcp && (await listTools()) > 0) body.strata_mcp = true;
    const response = await fetch("v1/chat/completions", {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) {
      // The refusal's own message (13.15), or its status when its body is not the JSON error.
      const error = await response.json().catch(() => ({}));
      message.notice = "The request failed: " + ((error.error && error.error.message) || response.status);
    } else {
      await readStream(response, (chunk) => applyChunk(chunk, message), () => renderOne(message));
    }
  } catch (error) {
    // Stop is not a failure (13.6); a stream that broke is.
    if (error.name !== "AbortError") message.notice = "The request failed: " + error.message;
  } finally {
    endCalls(message); // after a broken stream, calls still written or running never ran (13.6)
    running = null;
    setBusy(false);
    saveMessages();
    renderOne(message);
  }
}

function stop() {
  if (!running) return; // no turn runs: nothing to stop (New chat calls this either way)
  const { controller, message } = running;
  controller.abort();
  markStopped(message);
  saveMessages();
  renderOne(message);
}

function setBusy(busy) {
  sendBtn.disabled = busy;
  stopBtn.hidden = !busy;
}

async function discoverModel() {
  try {
    const health = await (await fetch("health")).json();
    modelName = health.model;
  } catch {
    /* keep the default name */
  }
}

// How many tools GET /mcp lists (13.20), asked again before every turn, so that servers still
// starting when the page opened are used once they are ready; the tools switch is shown only when
// the server has MCP servers. A refusal (no key yet) lists none.
async function listTools() {
  try {
    const status = await (await fetch("mcp", { headers: authHeaders() })).json();
    el("mcp-toggle").hidden = !(status.servers && status.servers.length);
    return status.tools || 0;
  } catch {
    // the page works without MCP: no tools
  }
}

el("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text || running) return;
  input.value = "";
  send(text);
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    el("composer").requestSubmit();
  }
});
stopBtn.addEventListener("click", stop);
el("new-chat").addEventListener("click", () => {
  stop();
  state.messages = [];
  saveMessages();
  forgetPictures();
  renderAll(chatEl, state.messages);
});
el("s-mcp").checked = state.settings.mcp !== false;
el("s-mcp").addEventListener("change", (event) => {
  state.settings.mcp = event.target.checked;
  saveSettings();
});
el("settings-btn").addEventListener("click", () => {
  el("api-key").value = state.apiKey;
  el("settings").showModal();
});
// Only Save keeps a key (13.7): Escape and Cancel close the dialog with another returnValue.
el("settings").addEventListener("close", () => {
  if (el("settings").returnValue !== "save") return;
  saveApiKey(el("api-key").value.trim());
  forgetPictures();
  listTools();
  renderAll(chatEl, state.messages);
});

// A turn cut short by a reload or by closing the page is over: its unfinished calls never ran (13.6).
for (const message of state.messages) if (message.segments) endCalls(message);
renderAll(chatEl, state.messages); // at the end (13.21): the empty page is at its end until drawn
discoverModel();
listTools();
