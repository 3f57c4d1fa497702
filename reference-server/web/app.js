// The reference chat page (SPEC §13). Vanilla JS, no build step.
//
// State lives in localStorage["strata.chat"] as a list of messages. An assistant message is a list of
// segments in the order they streamed: text, and tool calls. A tool call keeps its arguments, result
// text and — for pictures — only the small `media` references the server announced, never image
// bytes. Pictures are fetched with the Authorization header, shown outside the collapsed tool details
// as blob URLs, and sent back on later turns as `strata-tool-media:` image parts.
"use strict";

const KEYS = { apiKey: "strata.apikey", chat: "strata.chat", settings: "strata.sampling" };
const STATE_LABEL = { writing: "Writing", running: "Running", done: "Done", error: "Error", skipped: "Not run" };

const el = (id) => document.getElementById(id);
const chatEl = el("chat");
const input = el("input");
const sendBtn = el("send-btn");
const stopBtn = el("stop-btn");

let apiKey = readJson(KEYS.apiKey, "");
let settings = readJson(KEYS.settings, { mcp: true });
let messages = readJson(KEYS.chat, []);
let mcpTools = 0;
let modelName = "mock";
let running = null; // { controller, message }
const blobUrls = new Map(); // media url -> object URL, so a re-render does not fetch again

function readJson(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text === null ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

function save() {
  // Only text, arguments, results and media references are stored: never image bytes.
  localStorage.setItem(KEYS.chat, JSON.stringify(messages));
}

function authHeaders(extra) {
  const headers = Object.assign({}, extra || {});
  if (apiKey) headers.Authorization = "Bearer " + apiKey;
  return headers;
}

// ---- rendering -------------------------------------------------------------------------------

function node(tag, className, text) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (text !== undefined) n.textContent = text;
  return n;
}

// Re-renders the conversation, staying at the bottom when the reader was there (or when asked).
function render(toBottom) {
  const atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
  chatEl.replaceChildren(...messages.map(renderMessage));
  if (toBottom || atBottom) window.scrollTo(0, document.documentElement.scrollHeight);
}

function renderMessage(message) {
  const article = node("article", "msg " + message.role);
  const bubble = node("div", "bubble");
  article.append(bubble);
  if (message.role === "user") {
    bubble.append(node("div", "text", message.text));
    return article;
  }
  if (message.reasoning) bubble.append(node("div", "reasoning", message.reasoning));
  for (const segment of message.segments) {
    if (segment.type === "text") {
      // A later round's text starts with the blank line that separates rounds; the layout already does.
      const text = segment.text.replace(/^\n+/, "");
      if (text) bubble.append(node("div", "text", text));
    } else {
      bubble.append(renderTool(segment.tool));
    }
  }
  if (message.notice) bubble.append(node("p", "notice", message.notice));
  const meta = metaLine(message);
  if (meta) bubble.append(node("div", "meta", meta));
  return article;
}

function metaLine(message) {
  const parts = [];
  const calls = message.segments.filter((s) => s.type === "tool").length;
  if (calls) parts.push(calls + (calls === 1 ? " tool call" : " tool calls"));
  if (message.limit) parts.push("stopped at the limit of " + message.limit + " tool rounds (mcp.max_rounds)");
  if (message.stopped) parts.push(parts.length ? "stopped" : "Stopped");
  return parts.join(" · ");
}

function renderTool(tool) {
  const wrap = node("div", "tool");
  const details = node("details", "tool-call");
  details.dataset.state = tool.state;
  details.dataset.tool = tool.id;
  details.open = !!tool.open;
  details.addEventListener("toggle", () => {
    tool.open = details.open;
    save();
  });
  const summary = node("summary");
  const name = node("span", "tool-name", tool.tool || tool.name);
  name.title = tool.name;
  summary.append(name);
  if (tool.server) summary.append(node("span", "tool-server", tool.server));
  summary.append(node("span", "badge", STATE_LABEL[tool.state] || tool.state));
  if (tool.ms !== undefined && tool.state !== "skipped") summary.append(node("span", "time", (tool.ms / 1000).toFixed(1) + " s"));
  details.append(summary);
  const body = node("div", "tool-body");
  body.append(node("h4", "", "Arguments"));
  body.append(node("pre", "arguments", tool.arguments === undefined ? "(being written)" : JSON.stringify(tool.arguments, null, 2)));
  if (tool.result !== undefined) {
    let heading = (tool.ok ? "Result" : "Error") + " · " + (tool.chars || 0).toLocaleString() + " characters";
    if (tool.truncated) heading += ", cut for the model";
    body.append(node("h4", "", heading));
    body.append(node("pre", "result", tool.result));
  }
  details.append(body);
  wrap.append(details);
  if (tool.media && tool.media.length) wrap.append(renderMedia(tool.media));
  return wrap;
}

// Pictures sit outside the collapsed details, so they are seen without opening anything.
function renderMedia(media) {
  const box = node("div", "tool-media");
  for (const item of media) {
    const figure = node("figure", "preview");
    const img = node("img");
    img.alt = "Picture from the tool (" + item.width + "×" + item.height + ")";
    img.width = item.width;
    img.height = item.height;
    const caption = node("figcaption");
    const link = node("a", "download", "Download");
    link.download = item.url.split("/").pop();
    caption.append(link, node("span", "", item.width + "×" + item.height + " · " + sizeText(item.bytes)));
    figure.append(img, caption);
    box.append(figure);
    showPicture(item, figure, img, link);
  }
  return box;
}

function sizeText(bytes) {
  if (bytes >= 1 << 20) return (bytes / (1 << 20)).toFixed(1) + " MB";
  return Math.max(1, Math.round(bytes / 1024)) + " KB";
}

async function showPicture(item, figure, img, link) {
  try {
    let url = blobUrls.get(item.url);
    if (!url) {
      // Relative URL, the page's own Authorization header; never a URL with the key in it.
      const response = await fetch(item.url.replace(/^\//, ""), { headers: authHeaders() });
      if (!response.ok) throw new Error("HTTP " + response.status);
      url = URL.createObjectURL(await response.blob());
      blobUrls.set(item.url, url);
    }
    img.src = url;
    link.href = url;
  } catch (error) {
    const gone = node("p", "media-gone", "This picture is no longer available.");
    figure.replaceWith(gone);
  }
}

// ---- requests --------------------------------------------------------------------------------

// The conversation in OpenAI shape: tool rounds replayed as assistant tool_calls plus tool messages,
// pictures as strata-tool-media references in the tool messages.
function requestMessages() {
  const out = [];
  for (const message of messages) {
    if (message.role === "user") {
      out.push({ role: "user", content: message.text });
      continue;
    }
    let text = "";
    let calls = [];
    const flush = () => {
      if (calls.length) {
        out.push({ role: "assistant", content: text, tool_calls: calls.map(toolCall) });
        for (const tool of calls) out.push({ role: "tool", tool_call_id: tool.id, content: toolContent(tool) });
        text = "";
        calls = [];
      }
    };
    for (const segment of message.segments) {
      if (segment.type === "text") {
        if (calls.length) flush();
        text += segment.text;
      } else if (segment.tool.result !== undefined && segment.tool.state !== "skipped") {
        calls.push(segment.tool);
      }
    }
    flush();
    if (text) out.push({ role: "assistant", content: text });
  }
  return out;
}

function toolCall(tool) {
  return { id: tool.id, type: "function", function: { name: tool.name, arguments: JSON.stringify(tool.arguments || {}) } };
}

function toolContent(tool) {
  if (!tool.media || !tool.media.length) return tool.result;
  const parts = [{ type: "text", text: tool.result }];
  for (const item of tool.media) parts.push({ type: "image_url", image_url: { url: item.ref } });
  return parts;
}

async function send(text) {
  messages.push({ role: "user", text });
  const message = { role: "assistant", segments: [], reasoning: "" };
  messages.push(message);
  save();
  render(true);
  const controller = new AbortController();
  running = { controller, message };
  setBusy(true);
  const body = { model: modelName, messages: requestMessages(), stream: true };
  if (settings.mcp && mcpTools > 0) body.strata_mcp = true;
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
      await readStream(response, message);
    }
  } catch (error) {
    if (error.name !== "AbortError") message.notice = "The request failed: " + error.message;
  } finally {
    running = null;
    setBusy(false);
    save();
    render();
  }
}

async function readStream(response, message) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (!line.startsWith("data:")) continue; // comments such as ": keep-alive"
      const data = line.slice(5).trim();
      if (data === "[DONE]") continue;
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      apply(chunk, message);
    }
    save();
    render();
  }
}

function lastText(message) {
  const last = message.segments[message.segments.length - 1];
  if (last && last.type === "text") return last;
  const segment = { type: "text", text: "" };
  message.segments.push(segment);
  return segment;
}

function findTool(message, id) {
  const segment = message.segments.find((s) => s.type === "tool" && s.tool.id === id);
  return segment && segment.tool;
}

function apply(chunk, message) {
  if (chunk.error) {
    message.notice = "The request failed: " + chunk.error.message;
    return;
  }
  const event = chunk.strata_mcp;
  if (event) {
    if (event.event === "start") {
      const startsRound = message.segments.length && message.segments[message.segments.length - 1].type === "tool";
      if (!startsRound) lastText(message);
      message.segments.push({ type: "tool", tool: { id: event.id, name: event.name, state: "writing" } });
    } else if (event.event === "call") {
      const tool = findTool(message, event.id);
      if (tool) Object.assign(tool, { state: "running", server: event.server, tool: event.tool, arguments: event.arguments, started: Date.now() });
    } else if (event.event === "result") {
      const tool = findTool(message, event.id);
      if (tool) {
        Object.assign(tool, { result: event.text, ok: event.ok, chars: event.chars, truncated: event.truncated, ms: event.ms });
        tool.state = event.skipped ? "skipped" : event.ok ? "done" : "error";
        if (event.media) tool.media = event.media.map(({ ref, url, mime, bytes, width, height }) => ({ ref, url, mime, bytes, width, height }));
      }
    } else if (event.event === "limit") {
      message.limit = event.max_rounds;
    }
    return;
  }
  const delta = (chunk.choices && chunk.choices[0] && chunk.choices[0].delta) || {};
  if (delta.reasoning_content) message.reasoning += delta.reasoning_content;
  if (delta.content) {
    const segment = lastText(message);
    const separate = message.segments.length > 1 && segment.text === "" && message.segments.some((s) => s.type === "text" && s.text);
    segment.text += (separate ? "\n\n" : "") + delta.content;
  }
}

function stop() {
  if (!running) return;
  const { controller, message } = running;
  controller.abort();
  message.stopped = true;
  for (const segment of message.segments) {
    if (segment.type === "tool" && (segment.tool.state === "writing" || segment.tool.state === "running")) segment.tool.state = "skipped";
  }
  save();
  render();
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

// ---- wiring ----------------------------------------------------------------------------------

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
  messages = [];
  save();
  render();
});
el("s-mcp").checked = settings.mcp !== false;
el("s-mcp").addEventListener("change", (event) => {
  settings.mcp = event.target.checked;
  localStorage.setItem(KEYS.settings, JSON.stringify(settings));
});
el("settings-btn").addEventListener("click", () => {
  el("api-key").value = apiKey;
  el("settings").showModal();
});
el("settings").addEventListener("close", () => {
  if (el("settings").returnValue !== "save") return;
  apiKey = el("api-key").value.trim();
  localStorage.setItem(KEYS.apiKey, JSON.stringify(apiKey));
  blobUrls.clear();
  discoverMcp();
  render();
});

render(true);
discoverModel();
discoverMcp();
