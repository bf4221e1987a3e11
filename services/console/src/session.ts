// The API key lives in sessionStorage only: it goes when the tab closes, is never written to a URL,
// a cookie or localStorage, and leaves the page only as the Authorization header.

const KEY_ITEM = "qrp.console.apiKey";

/** The key this tab signed in with, if any. */
export function storedKey(storage: Storage = sessionStorage): string | null {
  return storage.getItem(KEY_ITEM);
}

/** Keeps the key for this tab. */
export function rememberKey(key: string, storage: Storage = sessionStorage): void {
  storage.setItem(KEY_ITEM, key);
}

/** Forgets the key: signing out. */
export function forgetKey(storage: Storage = sessionStorage): void {
  storage.removeItem(KEY_ITEM);
}
