// The API key (13.7c–h): kept in localStorage["strata.apikey"] (a JSON string), sent as
// `Authorization: Bearer <key>` on every request while one is saved, and nothing otherwise.

import { storageGet, storageSet } from './dom.js';

const KEY_STORAGE = 'strata.apikey';

function loadKey() {
  const raw = storageGet(KEY_STORAGE);
  if (raw === null) return '';
  try {
    const v = JSON.parse(raw);
    return typeof v === 'string' ? v.trim() : '';
  } catch {
    return '';
  }
}

let apiKey = loadKey();

export function getKey() {
  return apiKey;
}

/** Keep a key (already trimmed); an empty one forgets the key. */
export function setKey(value) {
  apiKey = value;
  storageSet(KEY_STORAGE, value ? JSON.stringify(value) : null);
}

/** A header value the browser can send: Latin-1 as it is, anything else as its UTF-8 bytes. */
function headerValue(s) {
  if (!/[^\x00-\xff]/.test(s)) return s;
  let out = '';
  for (const b of new TextEncoder().encode(s)) out += String.fromCharCode(b);
  return out;
}

/** The headers of every API request: `Authorization: Bearer <key>` while a key is saved, else none. */
export function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  if (apiKey) headers.Authorization = headerValue('Bearer ' + apiKey);
  return headers;
}
