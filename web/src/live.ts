// A job's progress, live: GET v1/jobs/{id}/events (server-sent events) read with fetch, since EventSource cannot
// send the token as a header. The Run panel falls back to polling GET v1/jobs/{id} when the stream cannot be had
// (an older server, a proxy that buffers) or breaks; the server closes it when the job ends or at its time cap.

import type { Job } from "./api";

/** How a stream ended: the job ended or the server's time cap ("end"), or it could not be read ("broken"). */
export type StreamEnd = "end" | "broken";

/** Parse the complete blocks of an event stream; returns the events and the unparsed rest. */
export function parseEvents(buffer: string): { events: { name: string; data: string }[]; rest: string } {
  const events: { name: string; data: string }[] = [];
  const blocks = buffer.replace(/\r\n?/g, "\n").split("\n\n");
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    let name = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;  // a comment (keep-alive)
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    if (data.length > 0) events.push({ name, data: data.join("\n") });
  }
  return { events, rest };
}

/** Follow one job's events until the server ends the stream, `signal` aborts it, or it breaks. */
export async function followJob(token: string, id: string, onJob: (job: Job) => void,
                                signal: AbortSignal): Promise<StreamEnd> {
  let response: Response;
  try {
    response = await fetch(`v1/jobs/${encodeURIComponent(id)}/events`, {
      headers: { Authorization: `Bearer ${token}`, Accept: "text/event-stream" }, cache: "no-cache", signal });
  } catch {
    return "broken";
  }
  if (!response.ok || response.body === null || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    void response.body?.cancel().catch(() => undefined);
    return "broken";
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return ended ? "end" : "broken";  // read to the server's close (a cancelled read is a failed request)
      const parsed = parseEvents(buffer + value);
      buffer = parsed.rest;
      for (const event of parsed.events) {
        if (event.name === "job" && !ended) onJob(JSON.parse(event.data) as Job);
        else if (event.name === "end") ended = true;
      }
    }
  } catch {
    void reader.cancel().catch(() => undefined);
    return ended ? "end" : "broken";
  }
}
