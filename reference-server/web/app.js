// The reference chat page (SPEC §13): ES modules, no build step. This module wires the controls;
// state.js keeps what the browser stores, stream.js reads the event stream, events.js applies it to
// the message being written, request.js builds the next request, render.js and pictures.js draw.

import { applyChunk, markStopped } from "./events.js";
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

let mcpTools = 0;
let modelName = "mock";
let running = null; // { controller, message }

async function send(text) {
  state.messages.push({ role: "user", text });
  const message = { role: "assistant", segments: [], reasoning: "" };
  state.messages.push(message);
  saveMessages();
  renderAll(chatEl, state.messages, true);
  const controller = new AbortController();
  running = { controller, message };
  setBusy(true);
  const body = { model: modelName, messages: requestMessages(state.messages.slice(0, -1)), stream: true };
  if (state.settings.mcp && mcpTools > 0) body.strata_mcp = true;
  try {
    const response = await fetch("v1/chat/completions", {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (response.status === 401) {
      message.notice = "This server needs an API key: add it under Settings.";
    } else if (!response.ok) {
      const error = await response.json().catch(() => ({}));
      message.notice = "The request failed: " + ((error.error && error.error.message) || response.status);
    } else {
      await readStream(response, (chunk) => applyChunk(chunk, message), () => renderOne(chatEl, message));
    }
  } catch (error) {
    if (error.name !== "AbortError") message.notice = "The request failed: " + error.message;
  } finally {
    running = null;
    setBusy(false);
    saveMessages();
    renderOne(chatEl, message);
  }
}

function stop() {
  if (!running) return;
  const { controller, message } = running;
  controller.abort();
  markStopped(message);
  saveMessages();
  renderOne(chatEl, message);
}

function setBusy(busy) {
  sendBtn.disabled = busy;
  stopBtn.hidden = !busy;
}

async function discoverModel() {
  try {
    const health = await (await fetch("health")).json();
    if (health.model) modelName = health.model;
  } catch {
    /* keep the default name */
  }
}

async function discoverMcp() {
  try {
    const response = await fetch("mcp", { headers: authHeaders() });
    if (!response.ok) return;
    const status = await response.json();
    mcpTools = status.tools || 0;
    el("mcp-toggle").hidden = !(status.servers && status.servers.length);
    if ((status.servers || []).some((s) => s.status === "starting")) setTimeout(discoverMcp, 3000);
  } catch {
    /* the page works without MCP */
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
  if (running) stop();
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
el("settings").addEventListener("close", () => {
  if (el("settings").returnValue !== "save") return;
  saveApiKey(el("api-key").value.trim());
  forgetPictures();
  discoverMcp();
  renderAll(chatEl, state.messages);
});

renderAll(chatEl, state.messages, true);
discoverModel();
discoverMcp();
