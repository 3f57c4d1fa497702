// What the page keeps in this browser (SPEC 13.5): the API key, the tools switch and the conversation,
// each under its own localStorage key. The conversation holds text, arguments, results and the small
// media references the server announced — never image bytes.

const KEYS = { apiKey: "strata.apikey", chat: "strata.chat", settings: "strata.sampling" };

function readJson(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text === null ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

export const state = {
  apiKey: readJson(KEYS.apiKey, ""),
  settings: readJson(KEYS.settings, { mcp: true }),
  messages: readJson(KEYS.chat, []),
};

export function saveMessages() {
  localStorage.setItem(KEYS.chat, JSON.stringify(state.messages));
}

export function saveApiKey(key) {
  state.apiKey = key;
  localStorage.setItem(KEYS.apiKey, JSON.stringify(key));
}

export function saveSettings() {
  localStorage.setItem(KEYS.settings, JSON.stringify(state.settings));
}

// Request headers with the key, when there is one: the key travels in a header, never in a URL.
export function authHeaders(extra) {
  const headers = Object.assign({}, extra || {});
  if (state.apiKey) headers.Authorization = "Bearer " + state.apiKey;
  return headers;
}
