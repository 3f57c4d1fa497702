// The conversation in OpenAI shape (SPEC 13.14): each round (the `round` of its calls) replayed as an
// assistant message with the text it streamed and its tool_calls, then one tool message per call that
// ran; a call's pictures go back as `strata-tool-media:` references in its tool message, never as
// bytes (13.3).

function toolCall(tool) {
  return { id: tool.id, type: "function", function: { name: tool.name, arguments: JSON.stringify(tool.arguments || {}) } };
}

function toolContent(tool) {
  if (!tool.media || !tool.media.length) return tool.result;
  const parts = [{ type: "text", text: tool.result }];
  for (const item of tool.media) parts.push({ type: "image_url", image_url: { url: item.ref } });
  return parts;
}

export function requestMessages(messages) {
  const out = [];
  for (const message of messages) {
    if (message.role === "user") {
      out.push({ role: "user", content: message.text });
      continue;
    }
    let text = "";
    let calls = [];
    const flush = () => {
      if (!calls.length) return;
      out.push({ role: "assistant", content: text, tool_calls: calls.map(toolCall) });
      for (const tool of calls) out.push({ role: "tool", tool_call_id: tool.id, content: toolContent(tool) });
      text = "";
      calls = [];
    };
    for (const segment of message.segments) {
      if (segment.type === "text") {
        flush();
        text += segment.text;
      } else if (segment.tool.state !== "skipped") {
        // Every call that ended without running is skipped (endCalls), so the rest have results.
        if (calls.length && calls[0].round !== segment.tool.round) flush();
        calls.push(segment.tool);
      }
    }
    flush();
    if (text) out.push({ role: "assistant", content: text });
  }
  return out;
}
