// What a stream chunk does to the assistant message being written (SPEC 6.2): text and reasoning
// deltas, and the strata_mcp events that open, run and close tool blocks. A message is a list of
// segments in the order they streamed: text, and tool calls.

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

function applyEvent(event, message) {
  if (event.event === "start") {
    message.segments.push({ type: "tool", tool: { id: event.id, name: event.name, state: "writing" } });
  } else if (event.event === "call") {
    const tool = findTool(message, event.id);
    if (tool) Object.assign(tool, { state: "running", server: event.server, tool: event.tool, arguments: event.arguments, round: event.round });
  } else if (event.event === "result") {
    const tool = findTool(message, event.id);
    if (!tool) return;
    Object.assign(tool, { result: event.text, ok: event.ok, chars: event.chars, truncated: event.truncated, ms: event.ms });
    tool.state = event.skipped ? "skipped" : event.ok ? "done" : "error";
    // Only the references are kept (8.6): never bytes, whatever else an entry carries.
    if (event.media) tool.media = event.media.map(({ ref, url, mime, bytes, width, height }) => ({ ref, url, mime, bytes, width, height }));
  } else if (event.event === "limit") {
    message.limit = event.max_rounds;
  }
}

// A chunk of the stream (SPEC 4.4). A refusal before the stream is an error answer (app.js shows its
// message, 13.15); a later pass refused (its prompt leaves no room, 4.7) ends the stream with 2.8's
// JSON error in place of a chunk, said the same way (13.16); a broken stream is a failed read.
export function applyChunk(chunk, message) {
  if (chunk.error) {
    message.notice = "The request failed: " + (chunk.error.message || "the server ended the answer with an error");
    return;
  }
  if (chunk.strata_mcp) {
    applyEvent(chunk.strata_mcp, message);
    return;
  }
  const delta = chunk.choices[0].delta; // every other chunk has one choice and a delta (4.4)
  if (delta.reasoning_content) message.reasoning += delta.reasoning_content;
  // The text as it streamed, nothing added: it goes back to the model so in the next turn (13.14).
  if (delta.content) lastText(message).text += delta.content;
}

// The end of a turn (13.6): calls still being written or running never ran, so they become "Not run"
// (after Stop, or a stream that broke before their results).
export function endCalls(message) {
  for (const segment of message.segments) {
    if (segment.type === "tool" && (segment.tool.state === "writing" || segment.tool.state === "running")) segment.tool.state = "skipped";
  }
}

// Stop (13.6): the answer is marked stopped and its unfinished calls end.
export function markStopped(message) {
  message.stopped = true;
  endCalls(message);
}
