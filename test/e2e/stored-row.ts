import type { ReviewRequest } from '../../shared/review-request.js';

/** A request's row as the extension stores it, or undefined. */
export type StoredRow = { request: ReviewRequest; renderedTemplate: string | null };

/**
 * Reads a request's row from the extension's IndexedDB. Run in an extension page (`page.evaluate(readStoredRow, id)`,
 * Playwright's or Puppeteer's): self-contained, as both send it to the page as its source text.
 */
export function readStoredRow(key: string): Promise<StoredRow | undefined> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open('elicitly');
    open.onerror = () => reject(open.error ?? new Error('the database did not open'));
    open.onsuccess = () => {
      const get = open.result.transaction('requests').objectStore('requests').get(key);
      get.onerror = () => reject(get.error ?? new Error('the row could not be read'));
      get.onsuccess = () => {
        open.result.close();
        resolve(get.result as StoredRow | undefined);
      };
    };
  });
}
