/**
 * Server-sent events: an incremental parser (text/event-stream framing, chunks split anywhere)
 * and the client of GET {daemonUrl}/ask/stream. `requestUrl` cannot stream, so in Obsidian
 * this goes through `fetch`; the daemon allows the origin app://obsidian.md.
 */

import {
	AuthError,
	DaemonNotRunningError,
	GrasbotClientError,
	HttpError,
	ProtocolError,
	RpcError,
	StreamCutError,
	StreamError,
	TimeoutError,
	usableToken,
} from "./errors";
import {
	type AnswerResult,
	type HistoryTurn,
	type Source,
	decodeAnswerResult,
	decodeStreamError,
	decodeStreamSources,
	decodeStreamToken,
} from "./protocol";
import type { FetchLike } from "./transport";
import { FAILURES, UNREADABLE } from "./messages";
import { streamUrl } from "./thread";
import { trimBaseUrl } from "./client";
import { usableDaemonUrl } from "./settings";

export interface SseEvent {
	event: string;
	data: string;
	id: string | null;
}

/** Feed it decoded text as it arrives; it returns the events completed by that text. */
export class SseParser {
	private buffer = "";
	private afterCR = false;
	private data: string[] = [];
	private eventType = "";
	private lastId: string | null = null;

	feed(text: string): SseEvent[] {
		const events: SseEvent[] = [];
		let chunk = text;
		// A CRLF split across two chunks: the LF belongs to the line the CR already ended.
		if (this.afterCR && chunk.startsWith("\n")) chunk = chunk.slice(1);
		this.afterCR = false;
		this.buffer += chunk;
		let start = 0;
		for (let i = 0; i < this.buffer.length; i++) {
			const ch = this.buffer[i];
			if (ch !== "\n" && ch !== "\r") continue;
			const line = this.buffer.slice(start, i);
			if (ch === "\r") {
				if (i + 1 < this.buffer.length) {
					if (this.buffer[i + 1] === "\n") i++;
				} else {
					this.afterCR = true;
				}
			}
			start = i + 1;
			const event = this.line(line);
			if (event) events.push(event);
		}
		this.buffer = this.buffer.slice(start);
		return events;
	}

	private line(line: string): SseEvent | null {
		if (line === "") return this.dispatch();
		if (line.startsWith(":")) return null; // comment, e.g. a keepalive
		const colon = line.indexOf(":");
		const field = colon === -1 ? line : line.slice(0, colon);
		let value = colon === -1 ? "" : line.slice(colon + 1);
		if (value.startsWith(" ")) value = value.slice(1);
		if (field === "data") this.data.push(value);
		else if (field === "event") this.eventType = value;
		else if (field === "id" && !value.includes("\u0000")) this.lastId = value;
		return null;
	}

	private dispatch(): SseEvent | null {
		const data = this.data;
		const type = this.eventType;
		this.data = [];
		this.eventType = "";
		if (data.length === 0) return null;
		return { event: type || "message", data: data.join("\n"), id: this.lastId };
	}
}

export interface StreamHandlers {
	onSources?: (sources: Source[], grounded: boolean) => void;
	onToken?: (text: string) => void;
}

export interface StreamOptions {
	daemonUrl: string;
	fetch: FetchLike;
	signal?: AbortSignal;
	/** The owner token, sent when set, as the client sends it (see `ClientOptions.token`). */
	token?: string;
	/** The conversation before `q` (thread.ts `historyFor` keeps it within the daemon's limits). */
	history?: readonly HistoryTurn[];
	/** How long the stream may stay silent (STREAM_IDLE_MS by default). */
	idleMs?: number;
}

/**
 * The longest silence a stream may keep: the daemon sends its headers at once, then `queue`
 * events while a question waits (LLM_MAX_WAIT, 20 s), then pieces no more than LLM_TIMEOUT
 * (60 s) apart. Past it, a daemon that accepted the connection and went quiet is said, not
 * left as "Asking the daemon…" for ever.
 */
export const STREAM_IDLE_MS = 120_000;

/** `work`, or a TimeoutError once `ms` have passed without it. */
function withinIdle<T>(work: Promise<T>, ms: number): Promise<T> {
	let timer: number | undefined;
	const silent = new Promise<never>((_, reject) => {
		timer = window.setTimeout(() => reject(new TimeoutError("`ask/stream`", ms)), ms);
	});
	return Promise.race([work, silent]).finally(() => window.clearTimeout(timer));
}

/** Asks for a visitor's answer and streams it; resolves with the `done` event's payload. */
export async function streamAnswer(q: string, handlers: StreamHandlers, options: StreamOptions): Promise<AnswerResult> {
	const base = usableDaemonUrl(trimBaseUrl(options.daemonUrl));
	const url = streamUrl(base, q, options.history ?? []);
	const headers: Record<string, string> = { Accept: "text/event-stream" };
	const token = usableToken(options.token);
	if (token) headers.Authorization = `Bearer ${token}`;
	const idleMs = options.idleMs ?? STREAM_IDLE_MS;
	let response: Awaited<ReturnType<FetchLike>>;
	try {
		response = await withinIdle(
			options.fetch(url, {
				method: "GET",
				headers,
				signal: options.signal,
			}),
			idleMs,
		);
	} catch (error) {
		if (options.signal?.aborted || error instanceof TimeoutError) throw error;
		throw new DaemonNotRunningError(base, error instanceof Error ? error.message : String(error));
	}
	if (response.status === 401 || response.status === 403) throw new AuthError(response.status, await response.text());
	if (!response.ok) throw httpFailure(response.status, await response.text());
	if (!response.body) throw new ProtocolError(UNREADABLE.noBody, "ask/stream");

	const parser = new SseParser();
	const decoder = new TextDecoder("utf-8");
	const reader = response.body.getReader();
	try {
		for (;;) {
			const { value, done } = await withinIdle(reader.read(), idleMs);
			const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
			for (const event of parser.feed(text)) {
				const result = handle(event, handlers);
				// The daemon ends the stream after `done`: nothing to cancel.
				if (result) return result;
			}
			if (done) break;
		}
	} catch (error) {
		// An error event, a bad payload or an abort: stop the download.
		reader.cancel().catch(() => undefined);
		if (options.signal?.aborted || error instanceof GrasbotClientError) throw error;
		// the connection broke (the browser's bare « network error »): the daemon went mid-answer
		throw new StreamCutError(base, error instanceof Error ? error.message : String(error));
	}
	throw new StreamCutError(base, FAILURES.streamEnded);
}

/** A 4xx/5xx of /ask/stream carries `{"error": {code, message, data}}` like the RPC errors. */
function httpFailure(status: number, body: string): Error {
	// No stream endpoint there (an older daemon, a proxy that routes /rpc only): an HttpError,
	// which the preview answers through `answer` instead, whatever JSON the body holds.
	if (status === 404 || status === 405) return new HttpError(status, body);
	try {
		const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
		const error = parsed.error;
		if (error && typeof error.code === "number" && typeof error.message === "string") {
			return new RpcError("ask/stream", error.code, error.message, error.data);
		}
	} catch {
		// not JSON: the status says enough
	}
	return new HttpError(status, body);
}

function parseData(event: SseEvent): unknown {
	try {
		return JSON.parse(event.data);
	} catch {
		throw new ProtocolError(UNREADABLE.eventNotJson(event.event), "ask/stream");
	}
}

function handle(event: SseEvent, handlers: StreamHandlers): AnswerResult | null {
	switch (event.event) {
		case "sources": {
			const payload = decodeStreamSources(parseData(event));
			handlers.onSources?.(payload.sources, payload.grounded);
			return null;
		}
		case "token":
			handlers.onToken?.(decodeStreamToken(parseData(event)));
			return null;
		case "done":
			return decodeAnswerResult(parseData(event), "ask/stream:done");
		case "error":
			throw new StreamError(decodeStreamError(parseData(event)));
		default:
			return null; // unknown events are for newer plugins
	}
}
