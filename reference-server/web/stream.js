// Reading a server-sent-event body (SPEC 4.4, 13.16): each `data:` line's JSON goes to `onChunk`;
// `onRead` runs after every network read. The stream may arrive cut anywhere (a character's bytes in
// two reads), with CR LF line ends, with or without the space after `data:`, and with comments and
// other fields between events: lines are cut at LF only, and JSON.parse takes the CR and the space
// as whitespace. What is not JSON — `[DONE]`, a comment, an `id:` — is skipped.

export async function readStream(response, onChunk, onRead) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split("\n");
    buffer = lines.pop();
    for (const line of lines) {
      if (!line.startsWith("data:")) continue;
      let chunk;
      try {
        chunk = JSON.parse(line.slice(5));
      } catch {
        continue;
      }
      onChunk(chunk);
    }
    onRead();
  }
}
