// The conversation's model: what a turn is made of, how the stream's chunks change it, what a later
// turn sends back (SPEC 13.14) and how the stored copy is read back (13.3, 13.19). No DOM here.

export const STORAGE_KEY = 'strata.chat';
export const MEDIA_PREFIX = 'strata-tool-media:';
const MEDIA_NAME = /^[0-9a-f]{64}\.(png|jpg|webp)$/;

/** A media name (`<sha256>.<ext>`) from a `result` event's media entry, or null. */
export function mediaName(entry) {
  if (!entry || typeof entry !== 'object') return null;
  if (typeof entry.ref === 'string' && entry.ref.startsWith(MEDIA_PREFIX)) {
    const name = entry.ref.slice(MEDIA_PREFIX.length);
    if (MEDIA_NAME.test(name)) return name;
  }
  if (typeof entry.url === 'string') {
    const m = /^\/?tool-media\/([^/?#]+)$/.exec(entry.url);
    if (m && MEDIA_NAME.test(m[1])) return m[1];
  }
  if (typeof entry.name === 'string' && MEDIA_NAME.test(entry.name)) return entry.name;
  return null;
}

export function isMediaName(name) {
  return typeof name === 'string' && MEDIA_NAME.test(name);
}

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function str(v) {
  return typeof v === 'string' ? v : null;
}

/** Length in characters (Unicode scalar values), as SPEC counts. */
export function charLength(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export function newUserMessage(text) {
  return { role: 'user', text };
}

export function newAssistantTurn() {
  return {
    role: 'assistant',
    status: 'streaming', // streaming | done | stopped | failed | interrupted
    error: null,         // what a failed request says, as the server said it (its `message`)
    errorStatus: null,   // the HTTP status of a refused request
    lost: false,         // the stream broke before its end (the connection was lost)
    limit: null,         // max_rounds of a `limit` event (a number), or true when it named none
    items: [],           // display order: {k:'reasoning'|'text', text} and {k:'tool', id}
    calls: {},           // id -> call
    rounds: [],          // {round, content, ids:[]} one per round of calls that ran
    pending: '',         // delta.content streamed since the last round began (for 13.14)
    newPass: false,      // a call was named since the last `call` event
    tail: null,          // set when the turn ends: the text streamed after the last round
  };
}

function newCall(id, name) {
  return {
    id,
    name,            // the name the model called (namespaced)
    tool: null,      // the tool's own name, once the call runs
    server: null,
    hasServer: false,
    args: null,
    hasArgs: false,
    round: null,
    state: 'writing', // writing | running | done | error | skipped
    text: null,
    chars: null,
    truncated: false,
    ms: null,
    media: [],       // [{name, mime, bytes, width, height}]
    open: false,
  };
}

function appendItem(turn, kind, text) {
  const last = turn.items[turn.items.length - 1];
  if (last && last.k === kind) last.text += text;
  else turn.items.push({ k: kind, text });
}

/**
 * Apply one event's parsed JSON to a streaming turn.
 * @returns {'ok'|'done'|'error'|'ignored'}
 */
export function applyChunk(turn, obj) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return 'ignored';
  if (obj.error !== undefined && obj.error !== null && !Array.isArray(obj.choices)) {
    turn.error = errorMessage(obj);
    return 'error';
  }
  let finished = false;
  if (Array.isArray(obj.choices) && obj.choices.length) {
    const choice = obj.choices[0];
    if (choice && typeof choice === 'object') {
      const delta = choice.delta;
      if (delta && typeof delta === 'object') {
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
          appendItem(turn, 'reasoning', delta.reasoning_content);
        }
        if (typeof delta.content === 'string' && delta.content !== '') {
          appendItem(turn, 'text', delta.content);
          turn.pending += delta.content;
        }
      }
      if (typeof choice.finish_reason === 'string' && choice.finish_reason) finished = true;
    }
  }
  const ev = obj.strata_mcp;
  if (ev && typeof ev === 'object' && !Array.isArray(ev)) applyToolEvent(turn, ev);
  return finished ? 'done' : 'ok';
}

function applyToolEvent(turn, ev) {
  const id = str(ev.id);
  switch (ev.event) {
    case 'start': {
      if (id === null || Object.prototype.hasOwnProperty.call(turn.calls, id)) return;
      turn.calls[id] = newCall(id, str(ev.name) ?? '');
      turn.items.push({ k: 'tool', id });
      turn.newPass = true;
      return;
    }
    case 'call': {
      const call = id !== null && Object.prototype.hasOwnProperty.call(turn.calls, id) ? turn.calls[id] : null;
      if (!call || call.state === 'skipped' || call.state === 'done' || call.state === 'error') return;
      if (typeof ev.name === 'string') call.name = ev.name;
      if (typeof ev.tool === 'string') call.tool = ev.tool;
      call.server = typeof ev.server === 'string' ? ev.server : null;
      call.hasServer = true;
      if (ev.arguments !== undefined) {
        call.args = ev.arguments;
        call.hasArgs = true;
      }
      call.state = 'running';
      const round = Number.isInteger(ev.round) ? ev.round : null;
      const last = turn.rounds[turn.rounds.length - 1];
      // Calls of one round share its assistant message. Rounds are told by `round`; a server that
      // gives none starts a new round when the model named a call (a `start`) since the last `call`.
      const same = last && (round !== null ? last.round === round : !turn.newPass);
      if (same) {
        call.round = last.round;
        last.ids.push(id);
      } else {
        const r = round === null ? (last && last.round !== null ? last.round + 1 : 1) : round;
        turn.rounds.push({ round: r, content: turn.pending, ids: [id] });
        turn.pending = '';
        call.round = r;
      }
      turn.newPass = false;
      return;
    }
    case 'result': {
      const call = id !== null && Object.prototype.hasOwnProperty.call(turn.calls, id) ? turn.calls[id] : null;
      if (!call || call.state === 'skipped' || call.state === 'done' || call.state === 'error') return;
      if (ev.skipped === true) {
        // 13.7n: a call not run has a result too (the server's skipped result, "not run")
        call.state = 'skipped';
        call.text = typeof ev.text === 'string' ? ev.text : '';
        call.chars = num(ev.chars) !== null && num(ev.chars) >= 0 ? Math.floor(ev.chars) : charLength(call.text);
        return;
      }
      call.state = ev.ok === true ? 'done' : 'error';
      call.text = typeof ev.text === 'string' ? ev.text : (ev.text == null ? '' : JSON.stringify(ev.text));
      call.chars = num(ev.chars) !== null && num(ev.chars) >= 0 ? Math.floor(ev.chars) : charLength(call.text);
      call.truncated = ev.truncated === true;
      call.ms = num(ev.ms) !== null && ev.ms >= 0 ? ev.ms : null;
      const media = [];
      if (Array.isArray(ev.media)) {
        for (const m of ev.media) {
          const name = mediaName(m);
          if (!name || media.some((x) => x.name === name)) continue;
          media.push({
            name,
            mime: str(m.mime),
            bytes: num(m.bytes),
            width: num(m.width) !== null && m.width > 0 ? Math.round(m.width) : null,
            height: num(m.height) !== null && m.height > 0 ? Math.round(m.height) : null,
          });
        }
      }
      call.media = media;
      return;
    }
    case 'limit': {
      turn.limit = num(ev.max_rounds) !== null ? ev.max_rounds : true;
      return;
    }
    default:
      // An event of a kind this page does not know (a newer server's): skipped.
      return;
  }
}

/** The message of 2.8's JSON error, or null when the body is not that JSON. */
export function errorMessage(obj) {
  if (!obj || typeof obj !== 'object') return null;
  const e = obj.error;
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object') {
    if (typeof e.message === 'string') return e.message;
    if (typeof e.type === 'string') return e.type;
  }
  return null;
}

/**
 * End a turn: calls still being written or running become "Not run" (13.6b, 13.6h, 13.6j), and
 * the text after the last round is set aside for the next request (13.14h).
 */
export function finishTurn(turn, status) {
  turn.status = status;
  for (const id of Object.keys(turn.calls)) {
    const c = turn.calls[id];
    if (c.state === 'writing' || c.state === 'running') c.state = 'skipped';
  }
  turn.tail = turn.pending;
}

/** What a later request sends back for the whole conversation (SPEC 13.14). */
export function requestMessages(messages) {
  const out = [];
  for (const m of messages) {
    if (m.role === 'user') {
      out.push({ role: 'user', content: m.text });
    } else if (m.role === 'assistant') {
      out.push(...assistantMessages(m));
    }
  }
  return out;
}

export function assistantMessages(turn) {
  const out = [];
  let sentRound = false;
  for (const r of turn.rounds) {
    const ran = r.ids.map((id) => turn.calls[id]).filter((c) => c && (c.state === 'done' || c.state === 'error'));
    if (ran.length) {
      sentRound = true;
      out.push({
        role: 'assistant',
        content: r.content,
        tool_calls: ran.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.hasArgs && c.args !== undefined ? c.args : {}) },
        })),
      });
      for (const c of ran) {
        const text = c.text ?? '';
        const content = c.media.length
          ? [{ type: 'text', text }, ...c.media.map((p) => ({ type: 'image_url', image_url: { url: MEDIA_PREFIX + p.name } }))]
          : text;
        out.push({ role: 'tool', tool_call_id: c.id, content });
      }
    } else if (r.content !== '') {
      sentRound = true;
      out.push({ role: 'assistant', content: r.content });
    }
  }
  const tail = turn.tail ?? turn.pending;
  if (tail !== '') out.push({ role: 'assistant', content: tail });
  else if (!sentRound && turn.status === 'done') out.push({ role: 'assistant', content: '' });
  return out;
}

// ---- storage ---------------------------------------------------------------------------------

export function serialize(messages) {
  return JSON.stringify({ v: 1, messages });
}

const STATES = new Set(['writing', 'running', 'done', 'error', 'skipped']);
const STATUSES = new Set(['streaming', 'done', 'stopped', 'failed', 'interrupted']);

/**
 * Read the stored conversation. Anything it cannot read gives null (start a new conversation,
 * 13.19). A turn that was still streaming when the page went away is marked interrupted: it is not
 * resumed and none of its calls stays Writing or Running (13.6j).
 */
export function deserialize(raw) {
  if (typeof raw !== 'string' || raw === '') return null;
  let data;
  try {
    data = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!data || typeof data !== 'object' || !Array.isArray(data.messages)) return null;
  const out = [];
  for (const m of data.messages) {
    const clean = cleanMessage(m);
    if (clean) out.push(clean);
  }
  return out;
}

function cleanMessage(m) {
  if (!m || typeof m !== 'object') return null;
  if (m.role === 'user') {
    return typeof m.text === 'string' ? { role: 'user', text: m.text } : null;
  }
  if (m.role !== 'assistant') return null;
  const t = newAssistantTurn();
  t.status = STATUSES.has(m.status) ? m.status : 'done';
  t.error = typeof m.error === 'string' ? m.error : null;
  t.errorStatus = Number.isInteger(m.errorStatus) ? m.errorStatus : null;
  t.lost = m.lost === true;
  t.limit = num(m.limit) !== null ? m.limit : (m.limit === true ? true : null);
  t.pending = typeof m.pending === 'string' ? m.pending : '';
  t.tail = typeof m.tail === 'string' ? m.tail : null;
  const calls = m.calls && typeof m.calls === 'object' ? m.calls : {};
  if (Array.isArray(m.items)) {
    for (const it of m.items) {
      if (!it || typeof it !== 'object') continue;
      if ((it.k === 'text' || it.k === 'reasoning') && typeof it.text === 'string') {
        t.items.push({ k: it.k, text: it.text });
      } else if (it.k === 'tool' && typeof it.id === 'string' && !Object.prototype.hasOwnProperty.call(t.calls, it.id)) {
        const c = cleanCall(it.id, Object.prototype.hasOwnProperty.call(calls, it.id) ? calls[it.id] : null);
        t.calls[it.id] = c;
        t.items.push({ k: 'tool', id: it.id });
      }
    }
  }
  if (Array.isArray(m.rounds)) {
    for (const r of m.rounds) {
      if (!r || typeof r !== 'object' || !Array.isArray(r.ids)) continue;
      const ids = r.ids.filter((id) => typeof id === 'string' && Object.prototype.hasOwnProperty.call(t.calls, id));
      t.rounds.push({
        round: num(r.round),
        content: typeof r.content === 'string' ? r.content : '',
        ids,
      });
    }
  }
  if (t.status === 'streaming') finishTurn(t, 'interrupted');
  else {
    for (const id of Object.keys(t.calls)) {
      const c = t.calls[id];
      if (c.state === 'writing' || c.state === 'running') c.state = 'skipped';
    }
    if (t.tail === null) t.tail = t.pending;
  }
  return t;
}

function cleanCall(id, c) {
  const call = newCall(id, '');
  if (!c || typeof c !== 'object') {
    call.state = 'skipped';
    return call;
  }
  call.name = typeof c.name === 'string' ? c.name : '';
  call.tool = typeof c.tool === 'string' ? c.tool : null;
  call.server = typeof c.server === 'string' ? c.server : null;
  call.hasServer = c.hasServer === true;
  call.hasArgs = c.hasArgs === true;
  call.args = call.hasArgs ? c.args : null;
  call.round = num(c.round);
  call.state = STATES.has(c.state) ? c.state : 'skipped';
  call.text = typeof c.text === 'string' ? c.text : null;
  call.chars = num(c.chars);
  call.truncated = c.truncated === true;
  call.ms = num(c.ms);
  call.open = c.open === true;
  call.media = [];
  if (Array.isArray(c.media)) {
    for (const p of c.media) {
      if (!p || typeof p !== 'object' || !isMediaName(p.name)) continue;
      if (call.media.some((x) => x.name === p.name)) continue;
      call.media.push({
        name: p.name,
        mime: str(p.mime),
        bytes: num(p.bytes),
        width: num(p.width) !== null && p.width > 0 ? p.width : null,
        height: num(p.height) !== null && p.height > 0 ? p.height : null,
      });
    }
  }
  if ((call.state === 'done' || call.state === 'error') && call.text === null) call.text = '';
  return call;
}

// ---- words -----------------------------------------------------------------------------------

export const STATE_LABEL = {
  writing: 'Writing',
  running: 'Running',
  done: 'Done',
  error: 'Error',
  skipped: 'Not run',
};

/** A duration in ms, shown in ms under a second and in seconds (one decimal) from there. */
export function formatMs(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

export function groupDigits(n) {
  const s = String(Math.floor(Math.abs(n)));
  return (n < 0 ? '-' : '') + s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
