// A parser of the text/event-stream format (the WHATWG HTML "server-sent
// events" interpretation): fed the stream's text in chunks of any size, it
// returns the complete messages. EventSource would do this, but it cannot
// send the Authorization header the studio's bearer token needs, so the
// change stream is read with fetch and parsed here.

/** SSEMessage is one dispatched event, a comment, or a reconnection delay. */
export type SSEMessage =
  | { type: "event"; event: string; data: string; id: string }
  | { type: "comment"; text: string }
  | { type: "retry"; ms: number };

/** SSEParser keeps the partial line and event between chunks. */
export class SSEParser {
  private line = "";
  private afterCR = false;
  private data: string[] = [];
  private event = "";
  private hasData = false;
  /** lastEventId is the last id: field seen (kept across events, as EventSource does). */
  lastEventId = "";

  constructor(lastEventId = "") {
    this.lastEventId = lastEventId;
  }

  /** push parses a chunk and returns the messages it completed. */
  push(chunk: string): SSEMessage[] {
    const out: SSEMessage[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (this.afterCR) {
        this.afterCR = false;
        if (c === "\n") continue; // CRLF is one line end
      }
      if (c === "\r" || c === "\n") {
        this.afterCR = c === "\r";
        this.processLine(this.line, out);
        this.line = "";
      } else {
        this.line += c;
      }
    }
    return out;
  }

  private processLine(line: string, out: SSEMessage[]) {
    if (line === "") {
      this.dispatch(out);
      return;
    }
    if (line.startsWith(":")) {
      out.push({ type: "comment", text: line.slice(1).replace(/^ /, "") });
      return;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        this.hasData = true;
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.lastEventId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) out.push({ type: "retry", ms: Number(value) });
        break;
      default:
      // unknown fields are ignored
    }
  }

  private dispatch(out: SSEMessage[]) {
    if (this.hasData) {
      out.push({ type: "event", event: this.event || "message", data: this.data.join("\n"), id: this.lastEventId });
    }
    this.data = [];
    this.hasData = false;
    this.event = "";
  }
}
