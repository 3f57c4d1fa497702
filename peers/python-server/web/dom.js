// Small DOM and storage helpers shared by the page's modules. Everything untrusted is put into the
// page as text (textContent, attribute values), never as markup (13.22).

export const $ = (id) => document.getElementById(id);

/** An element with attributes (`class`, `text`, or any attribute) and children (strings are text). */
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c); // strings become text nodes
  }
  return node;
}

export function storageGet(name) {
  try {
    return localStorage.getItem(name);
  } catch {
    return null;
  }
}

export function storageSet(name, value) {
  try {
    if (value === null) localStorage.removeItem(name);
    else localStorage.setItem(name, value);
    return true;
  } catch {
    return false;
  }
}
