// Drawing the conversation (SPEC 13.2–13.6, 13.13, 13.21). Tool blocks are collapsed <details> with
// their pictures outside them; while a turn streams only its message is drawn again. The data-strata
// attributes are the page contract of 13.7, what a browser-driven suite finds things by; app.css
// styles by them and by the elements' places (a summary's spans, a bubble's paragraphs), so a class
// is given only where neither tells. Elements with nothing to say are drawn empty, and app.css hides
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

// A long text under its label, in its own scrolling box (SPEC 13.5), reachable by keyboard so it can
// be scrolled without a mouse (a scroll region that cannot take focus is an accessibility failure:
// SPEC 13.8).
function labelled(label, text) {
  const box = node("pre", null, text);
  box.tabIndex = 0;
  box.setAttribute("aria-label", label);
  return [node("h4", null, label), box];
}

function atBottom() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
}

// The whole conversation, staying at the end when the reader was there (or when asked).
export function renderAll(chatEl, messages, toEnd) {
  const follow = toEnd || atBottom();
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
  const article = node("article");
  article.dataset.role = message.role; // "user"; an answer has none
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
    if (segment.type === "text") bubble.append(node("div", "text", segment.text));
    else bubble.append(...renderTool(segment.tool));
  }
  // A bubble's paragraphs: the failure, then the notes (app.css tells them apart by place).
  bubble.append(node("p", null, message.notice));
  if (message.limit) bubble.append(node("p", null, "Ended at the tool-round limit, mcp.max_rounds = " + message.limit));
  if (message.stopped) bubble.append(node("p", null, "Stopped"));
  return article;
}

// A tool block and, outside it, its pictures.
function renderTool(tool) {
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
  const name = node("span", null, tool.tool || tool.name);
  name.title = tool.name;
  name.dataset.strata = "tool-name";
  // Its name, server, state and (for a call that ran) time, in that order: app.css styles them by place.
  summary.append(name, node("span", null, tool.server), node("span", null, STATE_LABEL[tool.state]));
  if (tool.ms !== undefined && tool.state !== "skipped") summary.append(node("span", null, (tool.ms / 1000).toFixed(1) + " s"));
  const body = node("div");
  // A call still being written has no arguments yet (13.2).
  if (tool.arguments !== undefined) body.append(...labelled("Arguments", JSON.stringify(tool.arguments, null, 2)));
  if (tool.result !== undefined) {
    let label = (tool.ok ? "Result" : "Error") + " · " + tool.chars.toLocaleString("en") + " characters";
    if (tool.truncated) label += ", cut for the model";
    const [heading, result] = labelled(label, tool.result);
    result.dataset.strata = "tool-result";
    body.append(heading, result);
  }
  details.append(summary, body);
  return tool.media && tool.media.length ? [details, renderMedia(tool.media)] : [details];
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
    const link = node("a", null, "Download");
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
        const refused = error.status === 401;
        const note = node("p", null, refused ? "Add the API key under Settings to see this picture." : "This picture is no longer available.");
        if (!refused) note.dataset.strata = "picture-gone";
        figure.replaceWith(note);
      },
    );
  }
  return box;
}
