// The chat page (SPEC §13). Plain ES modules, no framework, no build step, nothing from a CDN.
// Everything the model, a tool, an MCP server or the server sends is put into the page as text
// (textContent, attribute values), never as markup (13.22). This module holds the page's state
// and wiring; dom.js, key.js, scroll.js, pictures.js, view.js, turn.js and sse.js the rest.

import { $, storageGet, storageSet } from './dom.js';
import { authHeaders, getKey, setKey } from './key.js';
import { refetchAllPictures, retryFailedPictures, revokeAllPictures } from './pictures.js';
import { mutate, redrawInPlace, scrollToEnd, watchScrolling } from './scroll.js';
import { SSEParser } from './sse.js';
import {
  STORAGE_KEY, applyChunk, deserialize, errorMessage, finishTurn, newAssistantTurn, newUserMessage,
  requestMessages, serialize,
} from './turn.js';
import { assistantBubble, renderAll, setOnCallToggled, updateAssistant, userBubble } from './view.js';

const TOOLS_STORAGE = 'strata.tools';

const ui = {
  log: $('log'),
  empty: $('empty'),
  message: $('message'),
  send: $('send'),
  stop: $('stop'),
  newChat: $('new-chat'),
  openSettings: $('open-settings'),
  settings: $('settings'),
  apiKey: $('api-key'),
  saveKey: $('save-key'),
  closeSettings: $('close-settings'),
  settingsNote: $('settings-note'),
  notice: $('notice'),
  modelLine: $('model-line'),
  toolsBox: $('tools-switch-box'),
  toolsSwitch: $('tools-switch'),
};

// ---- the conversation's storage (13.3, 13.19) ------------------------------------------------

let messages = [];
let saveTimer = 0;

function saveNow() {
  if (saveTimer) {
    clearTimeout(saveTimer);
    saveTimer = 0;
  }
  storageSet(STORAGE_KEY, serialize(messages));
}

function scheduleSave() {
  if (saveTimer) return;
  saveTimer = setTimeout(() => {
    saveTimer = 0;
    saveNow();
  }, 300);
}

setOnCallToggled(scheduleSave);

// ---- server information: /health and /mcp (13.20g–l) -------------------------------------------

let health = null;
let healthPromise = null;
let mcpInfo = null; // {servers, tools, starting}
let mcpPromise = null;
let mcpTimer = 0;

function loadHealth() {
  if (healthPromise) return healthPromise;
  healthPromise = (async () => {
    try {
      const resp = await fetch('health', { headers: authHeaders(), cache: 'no-store' });
      const data = await resp.json();
      if (resp.ok && data && typeof data === 'object') health = data;
    } catch {
      // the server cannot be reached; said in the model line
    } finally {
      healthPromise = null;
      showServerInfo();
    }
    return health;
  })();
  return healthPromise;
}

function loadMcp() {
  if (mcpPromise) return mcpPromise;
  mcpPromise = (async () => {
    let needsKey = false;
    try {
      const resp = await fetch('mcp', { headers: authHeaders(), cache: 'no-store' });
      if (resp.ok) {
        const data = await resp.json();
        const servers = Array.isArray(data && data.servers) ? data.servers : [];
        let tools = typeof data.tools === 'number' && Number.isFinite(data.tools) ? data.tools : null;
        if (tools === null) {
          tools = 0;
          for (const s of servers) if (s && Array.isArray(s.tools)) tools += s.tools.length;
        }
        mcpInfo = {
          servers: servers.length,
          tools,
          starting: servers.some((s) => s && s.status === 'starting'),
        };
      } else {
        needsKey = resp.status === 401;
        if (needsKey) mcpInfo = null;
      }
    } catch {
      // keep what was known
    } finally {
      mcpPromise = null;
    }
    showServerInfo(needsKey);
    if (mcpTimer) clearTimeout(mcpTimer);
    mcpTimer = mcpInfo && mcpInfo.starting ? setTimeout(() => { mcpTimer = 0; loadMcp(); }, 2000) : 0;
    return mcpInfo;
  })();
  return mcpPromise;
}

function withTimeout(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);
}

function toolsOn() {
  return storageGet(TOOLS_STORAGE) !== 'off';
}

let keyNotice = false;

function showServerInfo(needsKey) {
  redrawInPlace(() => drawServerInfo(needsKey));
}

function drawServerInfo(needsKey) {
  if (health && typeof health.model === 'string') {
    ui.modelLine.textContent = `Model: ${health.model}`;
  } else if (health) {
    ui.modelLine.textContent = 'Connected to the server.';
  } else {
    ui.modelLine.textContent = 'The server cannot be reached yet.';
  }
  ui.toolsBox.hidden = !(mcpInfo && mcpInfo.servers > 0);
  if (needsKey !== undefined) keyNotice = needsKey;
  const wantsKey = keyNotice || (health && health.api_key === true && !getKey());
  ui.notice.textContent = wantsKey
    ? (getKey() ? 'The server refused the saved API key: save the right key under Settings.'
      : 'This server needs an API key: save it under Settings.')
    : '';
}

// ---- a turn (13.6, 13.13–13.16, 13.20) -----------------------------------------------------------

let running = null; // {turn, controller, stopped, ended}

function setRunning(on) {
  ui.stop.hidden = !on;
  ui.send.disabled = on;
}

function endTurn(run, status) {
  if (run.ended || leaving) return;
  run.ended = true;
  finishTurn(run.turn, status);
  mutate(() => updateAssistant(run.turn));
  saveNow();
  if (running === run) {
    running = null;
    setRunning(false);
  }
}

async function send() {
  if (running) return;
  const text = ui.message.value.trim();
  if (!text) return;
  ui.message.value = '';
  const history = messages.slice();
  const user = newUserMessage(text);
  const turn = newAssistantTurn();
  messages.push(user, turn);
  if (ui.empty.isConnected) ui.empty.remove();
  ui.log.append(userBubble(user), assistantBubble(turn));
  scrollToEnd();
  saveNow();
  retryFailedPictures();

  const run = { turn, controller: new AbortController(), stopped: false, ended: false };
  running = run;
  setRunning(true);
  const signal = run.controller.signal;
  try {
    const [h0, tools] = await Promise.all([
      health ? health : withTimeout(loadHealth(), 5000),
      toolsOn() ? withTimeout(loadMcp(), 2000).then(() => !!(mcpInfo && mcpInfo.tools > 0)) : false,
    ]);
    if (run.ended) return;
    const body = { model: h0 && typeof h0.model === 'string' ? h0.model : undefined, messages: requestMessages([...history, user]), stream: true };
    if (tools && toolsOn()) body.strata_mcp = true;
    const resp = await fetch('v1/chat/completions', {
      method: 'POST',
      headers: authHeaders({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
      body: JSON.stringify(body),
      signal,
      cache: 'no-store',
    });
    if (!resp.ok) {
      const raw = await resp.text();
      let message = null;
      try {
        message = errorMessage(JSON.parse(raw));
      } catch {
        message = null;
      }
      turn.error = message;
      turn.errorStatus = resp.status;
      if (resp.status === 401) showServerInfo(true);
      endTurn(run, 'failed');
      return;
    }
    await readStream(run, resp);
  } catch {
    if (run.stopped || run.ended) return;
    turn.lost = true;
    endTurn(run, 'failed');
  }
}

async function readStream(run, resp) {
  const turn = run.turn;
  let done = false;
  let finished = false;
  let failed = false;
  const parser = new SSEParser((data) => {
    if (done || failed) return;
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let obj;
    try {
      obj = JSON.parse(data);
    } catch {
      return; // not JSON: skipped
    }
    const r = applyChunk(turn, obj);
    if (r === 'error') failed = true;
    else if (r === 'done') finished = true;
  });
  if (!resp.body) {
    parser.pushText(await resp.text());
  } else {
    const reader = resp.body.getReader();
    for (;;) {
      const { value, done: eof } = await reader.read();
      if (run.ended) return;
      if (eof) break;
      parser.pushBytes(value);
      mutate(() => updateAssistant(turn));
      scheduleSave();
      if (done || failed) {
        reader.cancel().catch(() => {});
        break;
      }
    }
  }
  if (run.ended) return;
  if (!done && !failed && parser.end()) done = true;
  if (failed) {
    if (turn.error === null) turn.error = 'the server reported an error';
    endTurn(run, 'failed');
  } else if (done || finished) {
    endTurn(run, 'done');
  } else {
    turn.lost = true;
    endTurn(run, 'failed');
  }
}

function stop() {
  const run = running;
  if (!run) return;
  run.stopped = true;
  run.controller.abort();
  endTurn(run, 'stopped');
  ui.message.focus();
}

function newChat() {
  if (running) stop();
  messages = [];
  saveNow();
  revokeAllPictures();
  renderAll(ui.log, ui.empty, messages);
  scrollToEnd();
  ui.message.focus();
}

// ---- settings (13.7c–h) --------------------------------------------------------------------------

function openSettings() {
  if (ui.settings.hidden) {
    ui.settings.hidden = false;
    ui.openSettings.setAttribute('aria-expanded', 'true');
    ui.apiKey.value = getKey();
    ui.settingsNote.textContent = '';
  }
  ui.apiKey.focus({ preventScroll: true });
}

function closeSettings() {
  ui.settings.hidden = true;
  ui.openSettings.setAttribute('aria-expanded', 'false');
  ui.apiKey.value = getKey(); // what was typed and not saved is let go (13.7g)
  ui.settingsNote.textContent = '';
  ui.openSettings.focus({ preventScroll: true });
}

function saveKey() {
  const value = ui.apiKey.value.trim();
  if (/[\x00-\x1f\x7f]/.test(value)) {
    ui.settingsNote.textContent = 'A key cannot hold line breaks or other control characters: it was not saved.';
    return;
  }
  setKey(value);
  // The panel closes once the key is kept: it sits over the page, so it must not stay in the way
  // of the header's controls or the conversation.
  closeSettings();
  keyNotice = false;
  // Pictures fetched with the earlier key are let go and asked for again with this one; the
  // page stays where the reader has it, or at the end when they were there (13.21e).
  redrawInPlace(() => {
    revokeAllPictures();
    refetchAllPictures();
    drawServerInfo();
  });
  loadHealth();
  loadMcp();
}

// ---- wiring ----------------------------------------------------------------------------------------

ui.send.addEventListener('click', () => {
  send();
});
ui.stop.addEventListener('click', stop);
ui.newChat.addEventListener('click', newChat);
ui.openSettings.addEventListener('click', openSettings);
ui.closeSettings.addEventListener('click', closeSettings);
ui.saveKey.addEventListener('click', saveKey);
ui.settings.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    e.preventDefault();
    closeSettings();
  }
});
ui.message.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' || e.shiftKey || e.isComposing || e.keyCode === 229) return;
  e.preventDefault();
  send();
});
ui.toolsSwitch.addEventListener('change', () => {
  storageSet(TOOLS_STORAGE, ui.toolsSwitch.checked ? 'on' : 'off');
});
// A turn cut short by a reload or by closing the page is not an answer that failed: it is kept as
// it streamed and read back as interrupted (13.6j).
let leaving = false;
function leave() {
  leaving = true;
  if (saveTimer || running) saveNow();
}
window.addEventListener('beforeunload', () => {
  leave();
  // A page that does not go after all (a download) goes on as before.
  setTimeout(() => {
    leaving = false;
  }, 1500);
});
window.addEventListener('pagehide', leave);
window.addEventListener('pageshow', () => {
  leaving = false;
});

// ---- start -------------------------------------------------------------------------------------------

function start() {
  watchScrolling(ui.log);
  if ('scrollRestoration' in history) history.scrollRestoration = 'manual'; // open at the end (13.21a)
  ui.toolsSwitch.checked = toolsOn();
  let stored = null;
  try {
    stored = deserialize(storageGet(STORAGE_KEY));
  } catch {
    stored = null;
  }
  messages = stored || [];
  try {
    renderAll(ui.log, ui.empty, messages);
  } catch {
    messages = [];
    renderAll(ui.log, ui.empty, messages);
  }
  if (stored && stored.some((m) => m.role === 'assistant' && m.status === 'interrupted')) saveNow();
  scrollToEnd();
  requestAnimationFrame(() => scrollToEnd());
  setRunning(false);
  loadHealth();
  loadMcp();
}

start();
