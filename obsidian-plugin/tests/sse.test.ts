import { describe, expect, it } from "vitest";
import { DaemonNotRunningError, DaemonUrlError, HttpError, StreamCutError, StreamError, TimeoutError, TokenFormatError, describeFailure } from "../src/errors";
import { STREAM_IDLE_MS, SseParser, streamAnswer } from "../src/sse";
import type { FetchLike } from "../src/transport";
import { byteStream, source } from "./helpers";

function parseAll(chunks: string[]) {
	const parser = new SseParser();
	return chunks.flatMap((chunk) => parser.feed(chunk));
}

describe("SseParser", () => {
	const stream = 'event: token\ndata: {"text":"Bon"}\n\nevent: token\ndata: {"text":"jour"}\n\n';

	it("gives the same events however the text is cut", () => {
		const whole = parseAll([stream]);
		expect(whole).toEqual([
			{ event: "token", data: '{"text":"Bon"}', id: null },
			{ event: "token", data: '{"text":"jour"}', id: null },
		]);
		for (let cut = 1; cut < stream.length; cut++) {
			expect(parseAll([stream.slice(0, cut), stream.slice(cut)])).toEqual(whole);
		}
		expect(parseAll(stream.split(""))).toEqual(whole);
	});

	it("joins multi-line data with newlines", () => {
		expect(parseAll(["data: ligne 1\ndata: ligne 2\ndata:\ndata:  indenté\n\n"])).toEqual([
			{ event: "message", data: "ligne 1\nligne 2\n\n indenté", id: null },
		]);
	});

	it("ignores comments and keepalives, and a blank line with no data", () => {
		expect(parseAll([": keepalive\n\n", ":\n", "\n", "event: done\n: ping in the middle\ndata: {}\n\n"])).toEqual([
			{ event: "done", data: "{}", id: null },
		]);
	});

	it("accepts CRLF and CR line ends, including a CRLF split across chunks", () => {
		expect(parseAll(["event: token\r\ndata: a\r", "\n\r", "\ndata: b\r\r"])).toEqual([
			{ event: "token", data: "a", id: null },
			{ event: "message", data: "b", id: null },
		]);
	});

	it("keeps an incomplete event until its blank line arrives", () => {
		const parser = new SseParser();
		expect(parser.feed("event: done\ndata: {}")).toEqual([]);
		expect(parser.feed("\n")).toEqual([]);
		expect(parser.feed("\n")).toEqual([{ event: "done", data: "{}", id: null }]);
	});

	it("resets the event type after each event and remembers the last id", () => {
		expect(parseAll(["id: 7\nevent: sources\ndata: x\n\ndata: y\n\n"])).toEqual([
			{ event: "sources", data: "x", id: "7" },
			{ event: "message", data: "y", id: "7" },
		]);
	});
});

function fakeFetch(status: number, chunks: (string | Uint8Array)[], seen: string[] = []): FetchLike {
	return async (url) => {
		seen.push(url);
		return {
			ok: status >= 200 && status < 300,
			status,
			text: async () => chunks.join(""),
			body: byteStream(chunks),
		};
	};
}

const done = { response: "Bonjour [push-swap]", sources: [source("push-swap", 12)], grounded: true, model: "qwen3:8b", vault_size: 41 };
const events = [
	`event: sources\ndata: ${JSON.stringify({ sources: done.sources, grounded: true })}\n\n`,
	': keepalive\n\nevent: token\ndata: {"text":"Bon"}\n\n',
	'event: token\ndata: {"text":"jour [push-swap]"}\n\n',
	`event: done\ndata: ${JSON.stringify(done)}\n\n`,
];

describe("streamAnswer", () => {
	it("calls /ask/stream with the question encoded and reports sources, tokens, then the answer", async () => {
		const seen: string[] = [];
		const tokens: string[] = [];
		let grounded: boolean | null = null;
		const result = await streamAnswer(
			"C'est quoi push_swap ?",
			{ onToken: (t) => tokens.push(t), onSources: (_s, g) => (grounded = g) },
			{ daemonUrl: "http://127.0.0.1:8765/", fetch: fakeFetch(200, events, seen) },
		);
		expect(seen).toEqual(["http://127.0.0.1:8765/ask/stream?q=C'est%20quoi%20push_swap%20%3F"]);
		expect(tokens.join("")).toBe("Bonjour [push-swap]");
		expect(grounded).toBe(true);
		expect(result).toMatchObject({ response: "Bonjour [push-swap]", model: "qwen3:8b", llm_error: null });
	});

	it("sends the owner token when it has one, and no Authorization header otherwise", async () => {
		const headers: (Record<string, string> | undefined)[] = [];
		const base = fakeFetch(200, events);
		const recording: FetchLike = async (url, init) => {
			headers.push(init.headers);
			return base(url, init);
		};
		await streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: recording, token: " s3cret " });
		await streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: recording, token: "" });
		await streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: recording });
		expect(headers.map((h) => h?.Authorization)).toEqual(["Bearer s3cret", undefined, undefined]);
		expect(headers.every((h) => h?.Accept === "text/event-stream")).toBe(true);
	});

	it("decodes UTF-8 characters cut between two chunks", async () => {
		const bytes = new TextEncoder().encode(`event: done\ndata: ${JSON.stringify({ ...done, response: "réponse généraliste" })}\n\n`);
		const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of « é »
		const result = await streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: fakeFetch(200, [bytes.slice(0, cut), bytes.slice(cut)]) });
		expect(result.response).toBe("réponse généraliste");
	});

	it("throws StreamError with the daemon's message on an error event", async () => {
		const chunks = ['event: error\ndata: {"message":"index en cours de rechargement"}\n\n'];
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: fakeFetch(200, chunks) })).rejects.toThrow(
			new StreamError("index en cours de rechargement"),
		);
	});

	it("says a daemon that stops mid-answer (its error event) in French, as an interrupted answer to ask again, not as « GrasBot daemon error »", async () => {
		const chunks = [events[0], 'event: error\ndata: {"message":"the daemon is stopping: ask again in a moment"}\n\n'];
		const error = await streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: fakeFetch(200, chunks) }).catch((e: unknown) => e);
		const state = describeFailure(error, "http://127.0.0.1:8765");
		expect(state).toMatchObject({ kind: "daemon-error", title: "Réponse interrompue par le démon" });
		expect(state.detail).toBe(
			"Le démon GrasBot (http://127.0.0.1:8765) a interrompu la réponse : « the daemon is stopping: ask again in a moment ». Posez la question à nouveau dans un instant ; si cela se répète, le journal de `grasbot serve` dit pourquoi.",
		);
	});

	it("says a stream cut mid-answer (the daemon stopped or restarted) in French, with what to do, not as « network error »", async () => {
		// the headers and a first piece came, then the connection broke: the daemon killed or restarted
		let sent = 0;
		const cut: FetchLike = async () => ({
			ok: true,
			status: 200,
			text: async () => "",
			body: new ReadableStream<Uint8Array>({
				pull(controller) {
					if (sent++ === 0) controller.enqueue(new TextEncoder().encode(events[0] + events[1]));
					else controller.error(new TypeError("network error"));
				},
			}),
		});
		const tokens: string[] = [];
		const failure = streamAnswer("q", { onToken: (t) => tokens.push(t) }, { daemonUrl: "http://127.0.0.1:8765", fetch: cut });
		await expect(failure).rejects.toBeInstanceOf(StreamCutError);
		const error = await failure.catch((e: unknown) => e);
		const state = describeFailure(error, "http://127.0.0.1:8765");
		expect(state.kind).toBe("not-running");
		expect(state.title).toBe("Réponse interrompue");
		expect(state.detail).toContain("http://127.0.0.1:8765");
		expect(state.detail).toContain("grasbot serve");
		expect(state.detail).toContain("network error");
		expect(tokens).toEqual(["Bon"]);
		// ended cleanly but without `done` nor `error`: cut all the same
		const ended = streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: fakeFetch(200, events.slice(0, 2)) });
		await expect(ended).rejects.toBeInstanceOf(StreamCutError);
	});

	it("maps HTTP errors and network failures", async () => {
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: fakeFetch(503, ["busy"]) })).rejects.toMatchObject({ status: 503 });
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: fakeFetch(503, ["busy"]) })).rejects.toBeInstanceOf(HttpError);
		const bad = fakeFetch(400, ['{"error": {"code": -32602, "message": "Invalid params", "data": "q: must be at most 500 characters (got 501)"}}']);
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: bad })).rejects.toMatchObject({
			code: -32602,
			data: "q: must be at most 500 characters (got 501)",
		});
		const refused: FetchLike = () => Promise.reject(new TypeError("Failed to fetch"));
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: refused })).rejects.toBeInstanceOf(DaemonNotRunningError);
	});

	it("says no stream endpoint as an HttpError, though the daemon answers every 404 in JSON", async () => {
		// what `canFallBack` reads to ask through `answer` instead: as an RpcError it never did
		const absent = fakeFetch(404, ['{"error": {"code": -32600, "message": "Invalid Request", "data": "no endpoint at this path"}}']);
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: absent })).rejects.toMatchObject({ name: "HttpError", status: 404 });
		const wrongMethod = fakeFetch(405, ['{"error": {"code": -32600, "message": "Invalid Request"}}']);
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: wrongMethod })).rejects.toBeInstanceOf(HttpError);
	});

	it("says a stream gone silent, rather than 'Asking the daemon…' for ever", async () => {
		// the headers came, then one event, then nothing: a daemon stuck, or a proxy holding the rest
		let cancelled = false;
		const silent: FetchLike = async () => ({
			ok: true,
			status: 200,
			text: async () => "",
			body: new ReadableStream<Uint8Array>({
				start(controller) {
					controller.enqueue(new TextEncoder().encode(events[0]));
				},
				cancel() {
					cancelled = true;
				},
			}),
		});
		const sources: unknown[] = [];
		const failure = streamAnswer("q", { onSources: (s) => sources.push(s) }, { daemonUrl: "http://127.0.0.1:8765", fetch: silent, idleMs: 50 });
		await expect(failure).rejects.toBeInstanceOf(TimeoutError);
		await expect(failure).rejects.toThrow("n'a pas répondu à `ask/stream` en 0 s");
		expect(sources).toHaveLength(1);
		expect(cancelled).toBe(true);
		// headers that never come: the same
		const hung: FetchLike = () => new Promise(() => undefined);
		await expect(streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: hung, idleMs: 50 })).rejects.toBeInstanceOf(TimeoutError);
		expect(STREAM_IDLE_MS).toBeGreaterThanOrEqual(60_000 + 20_000); // LLM_TIMEOUT between pieces, LLM_MAX_WAIT in the queue
	});

	it("refuses a token no header can carry before any request, and never quotes it", async () => {
		const calls: string[] = [];
		const recording: FetchLike = async (url, init) => {
			calls.push(url);
			return fakeFetch(200, events)(url, init);
		};
		for (const token of ["abc\u200bdef0123456789", "abc def", "abc\ndef"]) {
			const failure = streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:8765", fetch: recording, token });
			await expect(failure).rejects.toBeInstanceOf(TokenFormatError);
			await expect(failure).rejects.not.toThrow(/abc/);
		}
		expect(calls).toEqual([]);
	});

	it("streams nothing from a daemon URL the settings refuse: the token would go there", async () => {
		const calls: string[] = [];
		const recording: FetchLike = async (url) => {
			calls.push(url);
			throw new Error("not reached");
		};
		const failure = streamAnswer("q", {}, { daemonUrl: "http://127.0.0.1:9000/rpc", fetch: recording, token: "owner-token" });
		await expect(failure).rejects.toBeInstanceOf(DaemonUrlError);
		expect(calls).toEqual([]);
	});
});
