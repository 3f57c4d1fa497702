// Drawing the conversation (SPEC 13.2–13.6, 13.13, 13.21). Tool blocks are collapsed <details> with
// their pictures outside them; while a turn streams only its message is drawn again. The data-strata
// attributes are the page contract of 13.7, what a browser-driven suite finds things by, and the
// style's hooks for what they mark. Elements with nothing to say are drawn empty, and app.css hides
// an empty one.

import { pictureUrl } from "./pictures.js";
import { saveMessages } from "./state.js";

const STATE_LABEL = { writing: "Writing", running: "Running", done: "Done", error: "Error", skipped: "Not run" };

const drawn = new WeakMap(); // message -> its <article>

function node(tag, className, text) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  n.textContent = text; // undefined draws nothing
  return n;
}

// A long text in its own scrolling box (SPEC 13.5), reachable by keyboard so it can be scrolled without
// a mouse (a scroll region that cannot take focus is an accessibility failure: SPEC 13.8).
function scrollBox(text, label) {
  const box = node("pre", "", text);
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

// One message drawn again in place (the one being streamed; renderAll drew it first). Once New chat
// has taken it out of the page it stays out: replacing a node that has no parent does nothing.
export function renderOne(message) {
  const follow = atBottom();
  drawn.get(message).replaceWith(renderMessage(message));
  if (follow) window.scrollTo(0, document.documentElement.scrollHeight);
}

function renderMessage(message) {
  const article = node("article", "msg " + message.role);
  drawn.set(message, article);
  const bubble = node("div");
  bubble.dataset.strata = "bubble";
  article.append(bubble);
  if (message.role === "user") {
    bubble.append(node("div", "text", message.text));
    return article;
  }
  bubble.append(node("div", "reasoning", message.reasoning));
  for (const segment of message.segments) {
    // The text exactly as it streamed (13.13); white-space: pre-wrap keeps its lines.
    bubble.append(segment.type === "text" ? node("div", "text", segment.text) : renderTool(segment.tool));
  }
  bubble.append(node("p", "notice", message.notice));
  if (message.limit) bubble.append(node("p", "meta", "Ended at the limit of " + message.limit + " tool rounds (mcp.max_rounds)"));
  if (message.stopped) bubble.append(node("p", "meta", "Stopped"));
  return article;
}

function renderTool(tool) {
  const wrap = node("div", "tool");
  const details = node("details");
  details.dataset.strata = "tool";
  details.dataset.state = tool.state;
  details.dataset.tool = tool.id;
  // Open as the reader left it (13.2), through every redraw and reload.
  details.open = tool.open;
  details.addEventListener("toggle", () => {
    tool.open = details.open;
    saveMessages();
  });
  const summary = node("summary");
  // The tool's own name once the call runs (its server's listing); the name the model wrote before.
  const name = node("span", "", tool.tool || tool.name);
  name.title = tool.name;
  name.dataset.strata = "tool-name";
  summary.append(name, node("span", "tool-server", tool.server), node("span", "badge", STATE_LABEL[tool.state]));
  // How long the call ran: none while it runs, none for a call that never ran.
  if (tool.ms !== undefined && tool.state !== "skipped") summary.append(node("span", "time", (tool.ms / 1000).toFixed(1) + " s"));
  details.append(summary);
  const body = node("div", "tool-body");
  if (tool.arguments !== undefined) body.append(node("h4", "", "Arguments"), scrollBox(JSON.stringify(tool.arguments, null, 2), "Arguments"));
  if (tool.result !== undefined) {
    let heading = (tool.ok ? "Result" : "Error") + " · " + tool.chars.toLocaleString("en") + " characters";
    if (tool.truncated) heading += ", cut for the model";
    body.append(node("h4", "", heading));
    const result = scrollBox(tool.result, heading);
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
    const figure = node("figure");
    figure.dataset.strata = "picture";
    const img = node("img");
    img.alt = "Picture from the tool";
    img.width = item.width;
    img.height = item.height;
    const caption = node("figcaption");
    const link = node("a", "download", "Download");
    link.download = item.url.split("/").pop(); // the picture's own name, <sha256>.<ext>
    caption.append(link);
    figure.append(img, caption);
    box.append(figure);
    pictureUrl(item.url).then(
      (url) => {
        img.src = url;
        link.href = url;
      },
      (error) => {
        // A refused key is not a picture that is gone (13.4): the reader is asked for the key instead.
        const note = error.status === 401
          ? node("p", "media-note", "Add the API key under Settings to see this picture.")
          : node("p", "media-note", "This picture is no longer available.");
        if (error.status !== 401) note.dataset.strata = "picture-gone";
        figure.replaceWith(note);
      },
    );
  }
  return box;
}
