// Server-sent events over fetch (EventSource cannot send the key header): a parser that
// takes text as it arrives and gives whole events, and a reader that follows a stream,
// reconnecting with Last-Event-ID after a dropped connection until the stream ends.

/** A parser: `feed(text)` returns the events completed so far ({id, event, data}). */
export function parser() {
  let buffer = '';
  let data = [];
  let event = '';
  let id = null;
  let lastId = null;
  let retry = null;
  function line(text, out) {
    if (text === '') {
      if (data.length) {
        if (id !== null) lastId = id;
        out.push({ id: id ?? lastId, event: event || 'message', data: data.join('\n') });
      }
      data = []; event = ''; id = null;
      return;
    }
    if (text.startsWith(':')) return; // a comment (keep-alive)
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id') { if (!value.includes('\0')) id = value; }
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
  }
  return {
    feed(text) {
      buffer += text;
      const out = [];
      let at;
      while ((at = buffer.search(/\r\n|\r|\n/)) >= 0) {
        if (buffer[at] === '\r' && at === buffer.length - 1) break; // a \r\n split in two
        const size = buffer.startsWith('\r\n', at) ? 2 : 1;
        line(buffer.slice(0, at), out);
        buffer = buffer.slice(at + size);
      }
      return out;
    },
    get lastEventId() { return lastId; },
    get retry() { return retry; },
  };
}

/** The event's data as JSON, or the text when it is not JSON. */
export function dataOf(message) {
  try { return JSON.parse(message.data); } catch { return message.data; }
}

/**
 * Follow a stream: `onEvent({id, event, data})` for each event, reconnecting (with the last
 * id seen) when the connection drops before the server ends it. Resolves when the stream
 * ends (the server closed it after an `end`/`done` event, or `isEnd(message)` said so), or
 * when `signal` aborts. `start` resumes after an id already seen.
 */
export async function follow(api, path, { onEvent, signal, start = null, isEnd, retries = 20, onState } = {}) {
  let lastId = start;
  let attempts = 0;
  const ended = isEnd || ((message) => message.event === 'end' || message.event === 'done');
  while (!signal || !signal.aborted) {
    let finished = false;
    try {
      onState && onState(attempts ? 'reconnecting' : 'connecting');
      const headers = { accept: 'text/event-stream' };
      if (lastId !== null && lastId !== undefined) headers['last-event-id'] = String(lastId);
      const response = await api.raw(path, { headers, signal });
      if (!response.ok) {
        const body = await response.text();
        let parsed = body;
        try { parsed = JSON.parse(body); } catch { /* text */ }
        const { errorOf } = await import('./api.js');
        throw errorOf(response.status, parsed);
      }
      onState && onState('open');
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const events = parser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const message of events.feed(decoder.decode(value, { stream: true }))) {
          if (message.id !== null) lastId = message.id;
          attempts = 0;
          onEvent(message);
          if (ended(message)) finished = true;
        }
      }
      if (finished || !response.headers.get('content-type')?.includes('event-stream')) break;
      // The server closed the stream without its end: the connection dropped; go on.
    } catch (error) {
      if (signal && signal.aborted) break;
      if (error && error.status && error.status < 500) { onState && onState('failed'); throw error; }
      if (++attempts > retries) { onState && onState('failed'); throw error; }
    }
    if (finished) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempts, 4000)));
  }
  onState && onState('closed');
  return lastId;
}
