// Server-sent events, read the way the HTML standard's event-stream parser reads them
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
// so that any framing a server or a proxy may choose reads the same (SPEC 13.16):
//   - a line ends at CR LF, LF or CR, even when the CR and the LF come in two network reads;
//   - `data:` with or without one space after it;
//   - comments (`:`…) and other fields (`id:`, `event:`, `retry:`) are skipped;
//   - the data lines of one event are joined with LF and the event ends at a blank line;
//   - bytes are decoded as one UTF-8 stream, so a character cut between two reads stays whole.
// The event type (`event:`) is ignored on purpose: every event's data is handed on, and what the
// page does not understand is skipped by the page.

export class SSEParser {
  /** @param {(data: string) => void} onData called once per complete event with its data */
  constructor(onData) {
    this.onData = onData;
    this.partial = '';      // the start of a line whose end has not arrived yet
    this.data = [];         // the data lines of the event being read
    this.skipLF = false;    // the last read ended with CR: an LF at the start of the next is its pair
    this.decoder = new TextDecoder('utf-8'); // strips a leading BOM, as the SSE standard asks
  }

  /** Feed one network read (a Uint8Array). */
  pushBytes(bytes) {
    this.pushText(this.decoder.decode(bytes, { stream: true }));
  }

  /** Feed decoded text. */
  pushText(text) {
    if (!text) return;
    let i = 0;
    if (this.skipLF) {
      this.skipLF = false;
      if (text.charCodeAt(0) === 10) i = 1;
    }
    let start = i;
    const n = text.length;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.partial + text.slice(start, i);
      this.partial = '';
      if (c === 13) {
        if (i + 1 < n) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.skipLF = true;
        }
      }
      start = i + 1;
      this.line(line);
    }
    if (start < n) this.partial += text.slice(start);
  }

  /**
   * The stream ended. Per the standard an event not closed by a blank line is dropped; the one
   * exception kept here is a last `data: [DONE]` whose blank line never came.
   * @returns {boolean} whether such a trailing [DONE] was seen
   */
  end() {
    this.pushText(this.decoder.decode());
    if (this.partial) {
      // An unterminated last line is not a line; drop it.
      this.partial = '';
    }
    const pending = this.data.join('\n');
    this.data = [];
    return pending === '[DONE]';
  }

  line(line) {
    if (line === '') {
      if (this.data.length) {
        const data = this.data.join('\n');
        this.data = [];
        this.onData(data);
      }
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment (keep-alive)
    const colon = line.indexOf(':');
    let field;
    let value;
    if (colon === -1) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    if (field === 'data') this.data.push(value);
    // `event`, `id`, `retry` and unknown fields change nothing the page shows.
  }
}
