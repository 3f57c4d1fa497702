// Reading a server-sent-event body (SPEC 4.4): each `data:` line's JSON goes to `onChunk`; comments
// (": keep-alive") and `[DONE]` are skipped; `onRead` runs after every network read.

export async function readStream(response, onChunk, onRead) {
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
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") continue;
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      onChunk(chunk);
    }
    onRead();
  }
}
