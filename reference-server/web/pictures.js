// Tool pictures (SPEC 13.3, 13.4): fetched from their relative URL with the key in the Authorization
// header, shown as blob: URLs. One fetch per picture however often the page re-renders (the pending
// promise is shared), object URLs given back when the chat is cleared or the key changes, and a
// refused key (401) told apart from a picture that is gone (404).

import { authHeaders } from "./state.js";

const objectUrls = new Map(); // media url -> Promise<object URL>

// A fetch the server refused, with its status (what the note says depends on it).
export class PictureError extends Error {
  constructor(status) {
    super();
    this.status = status;
  }
}

export function pictureUrl(mediaUrl) {
  let pending = objectUrls.get(mediaUrl);
  if (!pending) {
    pending = fetch(mediaUrl.replace(/^\//, ""), { headers: authHeaders() }).then(async (response) => {
      if (!response.ok) throw new PictureError(response.status);
      return URL.createObjectURL(await response.blob());
    });
    // A failure is not kept: the next render asks again (after a new key, say).
    pending.catch(() => objectUrls.delete(mediaUrl));
    objectUrls.set(mediaUrl, pending);
  }
  return pending;
}

export function forgetPictures() {
  for (const pending of objectUrls.values()) pending.then((url) => URL.revokeObjectURL(url), () => {});
  objectUrls.clear();
}
