// Tool pictures (13.2m–p, 13.4, 13.17, 13.18): each fetched once per key with the page's
// `Authorization` header, shown as a blob with a download link named as the picture; a picture
// gone from the cache is noted, one refused for the key says a key is needed.

import { h } from './dom.js';
import { authHeaders } from './key.js';
import { mutate } from './scroll.js';

const pictures = {
  epoch: 0,
  entries: new Map(), // name -> {status: 'loading'|'ok', url}
  slots: new Map(),   // name -> Set of slots showing it
};

export function attachSlot(slot) {
  let set = pictures.slots.get(slot.name);
  if (!set) {
    set = new Set();
    pictures.slots.set(slot.name, set);
  }
  set.add(slot);
  const entry = pictures.entries.get(slot.name);
  if (entry && entry.status === 'ok') showPicture(slot, entry.url);
  else if (!entry) fetchPicture(slot.name);
}

/** Fetch a picture once for the key in use; a failure is not kept (13.17b). */
async function fetchPicture(name) {
  const epoch = pictures.epoch;
  const entry = { status: 'loading', url: null };
  pictures.entries.set(name, entry);
  let outcome = 'error';
  try {
    const resp = await fetch('tool-media/' + name, { headers: authHeaders(), cache: 'no-cache' });
    if (resp.ok) {
      const blob = await resp.blob();
      if (epoch !== pictures.epoch) return;
      entry.url = URL.createObjectURL(blob);
      entry.status = 'ok';
      for (const slot of pictures.slots.get(name) || []) showPicture(slot, entry.url);
      return;
    }
    outcome = resp.status === 401 ? 'key' : (resp.status === 404 || resp.status === 410) ? 'gone' : 'error';
  } catch {
    outcome = 'error';
  }
  if (epoch !== pictures.epoch) return;
  if (pictures.entries.get(name) === entry) pictures.entries.delete(name);
  for (const slot of pictures.slots.get(name) || []) showPictureNote(slot, outcome);
}

/** Let go of every picture's blob URL (13.18a, 13.18b). */
export function revokeAllPictures() {
  pictures.epoch++;
  for (const entry of pictures.entries.values()) {
    if (entry.url) URL.revokeObjectURL(entry.url);
  }
  pictures.entries.clear();
}

/** Ask again for every picture shown (after a key is saved, 13.4e, 13.18c). */
export function refetchAllPictures() {
  for (const name of pictures.slots.keys()) {
    if (!pictures.entries.has(name)) fetchPicture(name);
  }
}

/** Ask again for the pictures whose fetch failed (the conversation is drawn again, 13.17b). */
export function retryFailedPictures() {
  refetchAllPictures();
}

export function pictureSlot(picture, toolName, index, count) {
  const from = toolName ? `the tool ${toolName}` : 'a tool';
  const slot = {
    name: picture.name,
    picture,
    alt: count > 1 ? `Picture ${index + 1} of ${count} from ${from}` : `Picture from ${from}`,
    el: h('div', { class: 'picture-slot' }),
    img: null,
    link: null,
    state: null,
  };
  slot.el.append(h('p', { class: 'picture-note', text: 'Loading the picture…' }));
  return slot;
}

function showPicture(slot, url) {
  if (!slot.el.isConnected && slot.state !== null) {
    // A slot no longer on the page: forget it.
    const set = pictures.slots.get(slot.name);
    if (set) set.delete(slot);
    return;
  }
  if (slot.state === 'ok' && slot.img && slot.link) {
    slot.img.src = url;
    slot.link.href = url;
    return;
  }
  const p = slot.picture;
  const img = h('img', {
    src: url,
    alt: slot.alt,
    width: p.width || null,
    height: p.height || null,
    decoding: 'async',
  });
  img.addEventListener('error', () => {
    if (slot.img === img && img.src === url) showPictureNote(slot, 'broken');
  });
  const link = h('a', { href: url, download: slot.name }, 'Download ', slot.name);
  const figure = h('figure', { class: 'picture', 'data-strata': 'picture' }, img, link);
  slot.img = img;
  slot.link = link;
  slot.state = 'ok';
  mutate(() => slot.el.replaceChildren(figure));
}

const PICTURE_NOTES = {
  gone: 'This picture is no longer available.',
  key: 'This picture needs the API key: save the key under Settings to see it.',
  error: 'This picture could not be loaded. It is asked for again with the next message.',
  broken: 'This picture could not be shown.',
};

function showPictureNote(slot, outcome) {
  const attrs = { class: outcome === 'key' ? 'picture-note picture-note-key' : 'picture-note', text: PICTURE_NOTES[outcome] };
  if (outcome === 'gone') attrs['data-strata'] = 'picture-gone';
  slot.img = null;
  slot.link = null;
  slot.state = outcome;
  mutate(() => slot.el.replaceChildren(h('p', attrs)));
}
/** Forget every slot (the conversation is drawn from scratch). */
export function clearSlots() {
  pictures.slots.clear();
}
