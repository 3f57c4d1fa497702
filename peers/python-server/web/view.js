// Drawing the conversation: the bubbles, the answer's text and reasoning in stream order among
// the tool blocks (13.13, 13.15), each block's state, time, arguments and result (13.2), and a
// turn's notes (stopped, failed, the max_rounds limit: 13.6, 13.13d, 13.15e–g).

import { h } from './dom.js';
import { attachSlot, clearSlots, pictureSlot } from './pictures.js';
import { STATE_LABEL, formatMs, groupDigits } from './turn.js';

let onCallToggled = () => {};

/** What to do when the reader opens or closes a tool block (the page saves the conversation). */
export function setOnCallToggled(fn) {
  onCallToggled = fn;
}

const views = new WeakMap(); // assistant turn -> its view

/** Draw the whole conversation into the log (its empty note when there is none). */
export function renderAll(log, empty, messages) {
  clearSlots();
  log.replaceChildren();
  if (!messages.length) {
    log.append(empty);
    return;
  }
  for (const m of messages) log.append(m.role === 'user' ? userBubble(m) : assistantBubble(m));
}

export function userBubble(m) {
  return h('div', { class: 'bubble bubble-user', 'data-strata': 'bubble' },
    h('p', { class: 'who', text: 'You' }),
    h('p', { class: 'user-text', text: m.text }));
}

export function assistantBubble(turn) {
  const body = h('div', { class: 'bubble-body' });
  const notes = h('div', { class: 'bubble-notes' });
  const root = h('div', { class: 'bubble bubble-assistant', 'data-strata': 'bubble' },
    h('p', { class: 'who', text: 'Assistant' }), body, notes);
  const view = { root, body, notes, nodes: [], waiting: null, noteSig: null };
  views.set(turn, view);
  updateAssistant(turn);
  return root;
}

export function updateAssistant(turn) {
  const view = views.get(turn);
  if (!view) return;
  for (let i = 0; i < turn.items.length; i++) {
    const item = turn.items[i];
    let node = view.nodes[i];
    if (!node) {
      node = createItemNode(turn, item);
      view.nodes[i] = node;
      view.body.append(node.el);
    }
    node.update(item);
  }
  const waiting = turn.status === 'streaming' && turn.items.length === 0;
  if (waiting && !view.waiting) {
    view.waiting = h('p', { class: 'waiting', text: 'Waiting for the answer…' });
    view.body.append(view.waiting);
  } else if (!waiting && view.waiting) {
    view.waiting.remove();
    view.waiting = null;
  }
  updateNotes(turn, view);
}

function createItemNode(turn, item) {
  if (item.k === 'text') return textNode('answer-text');
  if (item.k === 'reasoning') {
    const t = textNode('reasoning-text');
    const el = h('div', { class: 'reasoning' }, h('p', { class: 'reasoning-label', text: 'Reasoning' }), t.el);
    return { el, update: t.update };
  }
  return toolNode(turn, turn.calls[item.id]);
}

function textNode(cls) {
  const text = document.createTextNode('');
  const el = h('p', { class: cls }, text);
  let shown = '';
  return {
    el,
    update(item) {
      if (item.text === shown) return;
      if (item.text.startsWith(shown)) text.appendData(item.text.slice(shown.length));
      else text.data = item.text;
      shown = item.text;
    },
  };
}

function toolNode(turn, call) {
  const name = h('span', { class: 'tool-name', 'data-strata': 'tool-name' });
  const server = h('span', { class: 'tool-server' });
  const state = h('span', { class: 'tool-state' });
  const time = h('span', { class: 'tool-time' });
  const summary = h('summary', null, name, server, state, time);
  const body = h('div', { class: 'tool-body' });
  const details = h('details', { class: 'tool', 'data-strata': 'tool' }, summary, body);
  const wrap = h('div', { class: 'tool-item' }, details);
  details.open = call.open === true;
  details.addEventListener('toggle', () => {
    if (call.open !== details.open) {
      call.open = details.open;
      onCallToggled();
    }
  });
  let sig = null;
  let picturesShown = false;
  return {
    el: wrap,
    update() {
      const shownName = call.state !== 'writing' && call.tool !== null ? call.tool : call.name;
      const newSig = JSON.stringify([call.state, shownName, call.server, call.hasServer, call.hasArgs, call.text, call.ms]);
      if (newSig !== sig) {
        sig = newSig;
        details.dataset.state = call.state;
        name.textContent = shownName;
        server.textContent = call.hasServer ? (call.server !== null ? `on ${call.server}` : 'no server') : '';
        server.hidden = !call.hasServer;
        state.textContent = STATE_LABEL[call.state] || '';
        const t = call.state === 'done' || call.state === 'error' ? formatMs(call.ms) : '';
        time.textContent = t;
        time.hidden = t === '';
        body.replaceChildren(...toolBody(call, shownName));
      }
      if (!picturesShown && call.media.length) {
        picturesShown = true;
        const row = h('div', { class: 'pictures' });
        const count = call.media.length;
        call.media.forEach((p, i) => {
          const slot = pictureSlot(p, shownName, i, count);
          row.append(slot.el);
          attachSlot(slot);
        });
        wrap.append(row);
      }
    },
  };
}

function toolBody(call, shownName) {
  const out = [];
  if (call.state === 'writing') {
    out.push(h('p', { class: 'tool-line', text: 'The model is writing this call.' }));
    return out;
  }
  if (call.name && call.name !== shownName) {
    out.push(h('p', { class: 'tool-line' }, 'Called as ', h('code', { text: call.name })));
  }
  if (call.hasArgs) {
    out.push(h('p', { class: 'tool-label', text: 'Arguments' }));
    out.push(h('pre', { class: 'tool-pre tool-args', tabindex: '0', text: argumentsText(call.args) }));
  }
  if (call.state === 'running') {
    out.push(h('p', { class: 'tool-line', text: 'The tool is running.' }));
  } else if (call.state === 'skipped' && call.text === null) {
    // cut by Stop, a broken stream or a reload: no result came
    out.push(h('p', { class: 'tool-line', text: 'This call was not run.' }));
  } else {
    if (call.state === 'skipped') out.push(h('p', { class: 'tool-line', text: 'This call was not run.' }));
    const text = call.text ?? '';
    const chars = typeof call.chars === 'number' && Number.isFinite(call.chars) ? call.chars : [...text].length;
    let label = `${call.state === 'error' ? 'Error' : 'Result'} · ${groupDigits(chars)} characters`;
    if (call.truncated) label += ' · cut for the model';
    out.push(h('p', { class: 'tool-label', text: label }));
    out.push(h('pre', { class: 'tool-pre', 'data-strata': 'tool-result', tabindex: '0', text }));
  }
  return out;
}

function argumentsText(args) {
  if (typeof args === 'string') return args;
  try {
    const s = JSON.stringify(args, null, 2);
    return typeof s === 'string' ? s : '';
  } catch {
    return '';
  }
}

function updateNotes(turn, view) {
  const notes = [];
  if (turn.limit !== null) {
    const n = typeof turn.limit === 'number'
      ? ` of ${groupDigits(turn.limit)} tool ${turn.limit === 1 ? 'round' : 'rounds'}` : ' of tool rounds';
    notes.push(['limit', `The answer reached the server's limit${n} (max_rounds): the calls after it were not run. To allow more rounds, raise mcp.max_rounds in the server's configuration.`]);
  }
  if (turn.status === 'stopped') {
    notes.push(['stopped', 'You stopped this answer.']);
  } else if (turn.status === 'failed') {
    notes.push(['failed', failureText(turn)]);
  } else if (turn.status === 'interrupted') {
    notes.push(['interrupted', 'This answer was cut short: the page was closed or reloaded while it came in.']);
  } else if (turn.status === 'done' && turn.items.length === 0) {
    notes.push(['plain', 'The answer is empty.']);
  }
  const sig = JSON.stringify(notes);
  if (sig === view.noteSig) return;
  view.noteSig = sig;
  view.notes.replaceChildren(...notes.map(([kind, text]) => h('p', { class: `turn-note turn-note-${kind}`, text })));
}

function failureText(turn) {
  if (turn.lost) return 'The request failed: the connection was lost before the answer ended.';
  const status = turn.errorStatus ? ` (HTTP ${turn.errorStatus})` : '';
  let text;
  if (turn.error !== null && turn.error !== '') text = `The request failed${status}: ${turn.error}`;
  else if (turn.errorStatus) text = `The request failed: the server answered with HTTP status ${turn.errorStatus}.`;
  else text = 'The request failed.';
  if (turn.errorStatus === 401) text += '\nSave the server\'s API key under Settings, then send again.';
  return text;
}
