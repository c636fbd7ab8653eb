import type { SocketLike } from './hub-connection.js';

/**
 * What of a WebSocket the connection uses: the browser's, or `ws`'s (its browser-style handlers) in a test. Generic in
 * the event types, which each implementation names its own way.
 */
export interface WebSocketish<O, M extends { data: unknown }, C extends { code: number; reason: string }, E> {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: O) => void) | null;
  onmessage: ((event: M) => void) | null;
  onclose: ((event: C) => void) | null;
  onerror: ((event: E) => void) | null;
}

/**
 * A WebSocket behind the small interface the connection uses. Its handlers take the DOM's event types, which are
 * wider than what the connection reads, so the events are passed on rather than the socket cast.
 */
export function wrapSocket<O, M extends { data: unknown }, C extends { code: number; reason: string }, E>(ws: WebSocketish<O, M, C, E>): SocketLike {
  const socket: SocketLike = {
    get readyState() {
      return ws.readyState;
    },
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
  };
  ws.onopen = (event) => socket.onopen?.(event);
  ws.onmessage = (event) => socket.onmessage?.({ data: event.data });
  ws.onclose = (event) => socket.onclose?.({ code: event.code, reason: event.reason });
  ws.onerror = (event) => socket.onerror?.(event);
  return socket;
}

export function openBrowserSocket(url: string, protocols: string[]): SocketLike {
  return wrapSocket(new WebSocket(url, protocols));
}
