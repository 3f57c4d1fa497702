// Drawing the conversation (SPEC 13.2–13.6). Tool blocks are collapsed <details> with their pictures
// outside them; while a turn streams only its message is drawn again. The data-strata attributes are
// the page contract of 13.7, what a browser-driven suite finds things by.

import { pictureUrl } from "./pictures.js";
import { saveMessages } from "./state.js";

const STATE_LABEL = { writing: "Writing", running: "Running", done: "Done", error: "Error", skipped: "Not run" };

const drawn = new WeakMap(); // message -> its <article>

function node(tag, className, text) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (text !== undefined) n.textContent = text;
  return n;
}

// A long text in its own scrolling box (SPEC 13.5), reachable by keyboard so it can be scrolled without
// a mouse (a scroll region that cannot take focus is an accessibility failure: SPEC 13.8).
function scrollBox(className, text, label) {
  const box = node("pre", className, text);
  box.tabIndex = 0;
  box.setAttribute("aria-label", label);
  return box;
}

function atBottom() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
}

// The whole conversation, staying at the bottom when the reader was there (or when asked).
export function renderAll(chatEl, messages, toBottom) {
  const follow = toBottom || atBottom();
  chatEl.replaceChildren(...messages.map(renderMessage));
  if (follow) window.scrollTo(0, document.documentElement.scrollHeight);
}

// One message drawn again in place (the one being streamed).
export function renderOne(chatEl, message) {
  const follow = atBottom();
  const old = drawn.get(message);
  const fresh = renderMessage(message);
  if (old && old.parentNode === chatEl) old.replaceWith(fresh);
  else chatEl.append(fresh);
  if (follow) window.scrollTo(0, document.documentElement.scrollHeight);
}

function renderMessage(message) {
  const article = node("article", "msg " + message.role);
  drawn.set(message, article);
  const bubble = node("div", "bubble");
  bubble.dataset.strata = "bubble";
  article.append(bubble);
  if (message.role === "user") {
    bubble.append(node("div", "text", message.text));
    return article;
  }
  if (message.reasoning) bubble.append(node("div", "reasoning", message.reasoning));
  for (const segment of message.segments) {
    if (segment.type === "text") {
      // Newlines a pass's text starts with are not drawn: the blocks already stand apart.
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
  details.dataset.strata = "tool";
  details.dataset.state = tool.state;
  details.dataset.tool = tool.id;
  details.open = !!tool.open;
  details.addEventListener("toggle", () => {
    if (tool.open === details.open) return;
    tool.open = details.open;
    saveMessages();
  });
  const summary = node("summary");
  const name = node("span", "tool-name", tool.tool || tool.name);
  name.title = tool.name;
  name.dataset.strata = "tool-name";
  summary.append(name);
  if (tool.server) summary.append(node("span", "tool-server", tool.server));
  summary.append(node("span", "badge", STATE_LABEL[tool.state] || tool.state));
  if (tool.ms !== undefined && tool.state !== "skipped") summary.append(node("span", "time", (tool.ms / 1000).toFixed(1) + " s"));
  details.append(summary);
  const body = node("div", "tool-body");
  body.append(node("h4", "", "Arguments"));
  body.append(scrollBox("arguments", tool.arguments === undefined ? "(being written)" : JSON.stringify(tool.arguments, null, 2), "Arguments"));
  if (tool.result !== undefined) {
    let heading = (tool.ok ? "Result" : "Error") + " · " + (tool.chars || 0).toLocaleString() + " characters";
    if (tool.truncated) heading += ", cut for the model";
    body.append(node("h4", "", heading));
    const result = scrollBox("result", tool.result, heading);
    result.dataset.strata = "tool-result";
    body.append(result);
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
    figure.dataset.strata = "picture";
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
    pictureUrl(item.url).then(
      (url) => {
        img.src = url;
        link.href = url;
      },
      (error) => {
        const note = error.status === 401
          ? node("p", "media-locked", "Add the API key under Settings to see this picture.")
          : node("p", "media-gone", "This picture is no longer available.");
        if (error.status !== 401) note.dataset.strata = "picture-gone";
        figure.replaceWith(note);
      },
    );
  }
  return box;
}

function sizeText(bytes) {
  if (bytes >= 1 << 20) return (bytes / (1 << 20)).toFixed(1) + " MB";
  return Math.max(1, Math.round(bytes / 1024)) + " KB";
}
