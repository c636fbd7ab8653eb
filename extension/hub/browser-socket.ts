import type { SocketLike } from './hub-connection.js';

/**
 * The browser's WebSocket behind the small interface the connection uses. Its handlers take the DOM's event types,
 * which are wider than what the connection reads, so the events are passed on rather than the socket cast.
 */
export function openBrowserSocket(url: string, protocols: string[]): SocketLike {
  const ws = new WebSocket(url, protocols);
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
