/**
 * JSON-RPC 2.0 client for the GrasBot daemon (POST {daemonUrl}/rpc).
 *
 * The HTTP transport is injected: Obsidian's `requestUrl` in the plugin (see transport.ts),
 * a fake or a real `fetch` in tests. Every failure comes out as one of the typed errors of
 * errors.ts, so the view can say "daemon not running" rather than "Failed to fetch".
 */

import {
	AuthError,
	DaemonNotRunningError,
	HttpError,
	ProtocolError,
	RpcError,
	TimeoutError,
	TokenRefusedError,
	usableToken,
} from "./errors";
import { FAILURES, UNREADABLE } from "./messages";
import {
	type AliasSuggestions,
	type AnswerResult,
	type Audience,
	type HealthResult,
	type HistoryTurn,
	type ReloadResult,
	type SearchResult,
	decodeAliasSuggestions,
	decodeAnswerResult,
	decodeDiscover,
	decodeHealthResult,
	decodeReloadResult,
	decodeSearchResult,
} from "./protocol";
import { usableDaemonUrl } from "./settings";

export interface HttpRequest {
	url: string;
	method: "GET" | "POST";
	headers: Record<string, string>;
	body?: string;
	/** Aborted when the client gives up; transports that cannot abort may ignore it. */
	signal?: AbortSignal;
}

export interface HttpResponse {
	status: number;
	text: string;
}

/** Sends one request; throws (any error) only when no HTTP response was received. */
export type Transport = (request: HttpRequest) => Promise<HttpResponse>;

export interface ClientOptions {
	/** e.g. http://127.0.0.1:8765, without the /rpc path. */
	daemonUrl: string;
	/**
	 * Owner token, sent as `Authorization: Bearer …` on every call: the author's previews are
	 * the owner's, so the daemon neither logs them as visitors' questions nor rate-limits them,
	 * and says why the LLM failed (a visitor reads only that it did).
	 */
	token?: string;
	transport: Transport;
	timeoutMs?: number;
}

export interface CallOptions {
	timeoutMs?: number;
}

/** The methods the plugin calls; contract tests check each exists in openrpc.json. */
export const CLIENT_METHODS = ["search", "answer", "reload", "health", "suggest_aliases", "rpc.discover"] as const;
export type ClientMethod = (typeof CLIENT_METHODS)[number];

export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * `answer` and `reload`: a daemon may queue an answer 20 s (LLM_MAX_WAIT) then write it for 90 s
 * (LLM_DEADLINE), and a reload that embeds many notes takes a minute; 30 s cut them short.
 */
export const SLOW_TIMEOUT_MS = 120_000;

export function trimBaseUrl(url: string): string {
	return url.trim().replace(/\/+$/, "");
}

export class GrasbotClient {
	readonly daemonUrl: string;
	private readonly token: string;
	private readonly transport: Transport;
	private readonly timeoutMs: number;
	private readonly slowTimeoutMs: number;
	private nextId = 1;

	constructor(options: ClientOptions) {
		this.daemonUrl = trimBaseUrl(options.daemonUrl);
		this.token = options.token ?? "";
		this.transport = options.transport;
		this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
		this.slowTimeoutMs = options.timeoutMs ?? SLOW_TIMEOUT_MS;
	}

	/** A token goes with each call: health's `caller: "visitor"` then says the daemon did not get it. */
	get sendsToken(): boolean {
		return this.token.trim().length > 0;
	}

	search(q: string, options: { topK?: number; audience?: Audience } = {}): Promise<SearchResult> {
		const params: Record<string, unknown> = { q };
		if (options.topK !== undefined) params.top_k = options.topK;
		if (options.audience !== undefined) params.audience = options.audience;
		return this.call("search", params, decodeSearchResult);
	}

	answer(q: string, options: { history?: HistoryTurn[]; audience?: Audience } = {}): Promise<AnswerResult> {
		const params: Record<string, unknown> = { q };
		if (options.history !== undefined) params.history = options.history;
		if (options.audience !== undefined) params.audience = options.audience;
		return this.call("answer", params, (v) => decodeAnswerResult(v), { timeoutMs: this.slowTimeoutMs });
	}

	reload(): Promise<ReloadResult> {
		return this.call("reload", {}, decodeReloadResult, { timeoutMs: this.slowTimeoutMs });
	}

	health(): Promise<HealthResult> {
		return this.call("health", undefined, decodeHealthResult);
	}

	/**
	 * Makes sure a token set here makes this client the owner, before a question that a
	 * visitor's would be logged as: a token the daemon does not take is answered as a visitor,
	 * not refused (a proxy may send its own), so only `health` says so. A TokenRefusedError
	 * then; nothing asked without a token, and a daemon too old to say is taken at its word.
	 * The owner's health it read (null without a token): it says what a note without
	 * `visibility` is.
	 */
	async checkToken(): Promise<HealthResult | null> {
		if (!usableToken(this.token)) return null;
		const health = await this.health();
		if (health.caller === "visitor" || health.caller === "token_refused") throw new TokenRefusedError(health.caller, this.daemonUrl);
		return health;
	}

	/** `path`: the note's own, which says which note when two share `slug` (a public note and a private draft). */
	suggestAliases(slug: string, limit?: number, path?: string): Promise<AliasSuggestions> {
		const params: Record<string, unknown> = { slug };
		if (limit !== undefined) params.limit = limit;
		if (path !== undefined) params.path = path;
		return this.call("suggest_aliases", params, decodeAliasSuggestions);
	}

	discover(): Promise<{ methods: string[] }> {
		return this.call("rpc.discover", undefined, decodeDiscover);
	}

	/** One JSON-RPC call: frames the request, checks the envelope, decodes `result`. */
	async call<T>(
		method: ClientMethod,
		params: Record<string, unknown> | undefined,
		decode: (result: unknown) => T,
		options: CallOptions = {},
	): Promise<T> {
		const id = this.nextId++;
		const envelope: Record<string, unknown> = { jsonrpc: "2.0", id, method };
		if (params !== undefined) envelope.params = params;
		const headers: Record<string, string> = {
			"Content-Type": "application/json",
			Accept: "application/json",
		};
		const token = usableToken(this.token);
		if (token) headers.Authorization = `Bearer ${token}`;
		const url = `${usableDaemonUrl(this.daemonUrl)}/rpc`;
		const response = await this.send(
			{ url, method: "POST", headers, body: JSON.stringify(envelope) },
			method,
			options.timeoutMs ?? this.timeoutMs,
		);
		const result = parseEnvelope(response, id, method, Object.keys(params ?? {}));
		try {
			return decode(result);
		} catch (error) {
			// the decoders say where in the answer; the author is told which call too
			if (error instanceof ProtocolError && !error.method) throw new ProtocolError(error.message, method);
			throw error;
		}
	}

	private async send(request: HttpRequest, method: string, timeoutMs: number): Promise<HttpResponse> {
		const controller = new AbortController();
		let timer: number | undefined;
		const timeout = new Promise<never>((_, reject) => {
			timer = window.setTimeout(() => {
				controller.abort();
				reject(new TimeoutError(`\`${method}\``, timeoutMs));
			}, timeoutMs);
		});
		const attempt = this.transport({ ...request, signal: controller.signal }).catch((error: unknown) => {
			if (controller.signal.aborted) return timeout; // the timeout's rejection wins
			throw new DaemonNotRunningError(this.daemonUrl, reasonOf(error));
		});
		try {
			return await Promise.race([attempt, timeout]);
		} finally {
			window.clearTimeout(timer);
		}
	}
}

function reasonOf(error: unknown): string {
	if (error instanceof Error && error.message) return error.message;
	return String(error);
}

function parseEnvelope(response: HttpResponse, id: number, method: string, sent: string[]): unknown {
	if (response.status === 401 || response.status === 403) throw new AuthError(response.status, response.text);
	let body: unknown;
	try {
		body = JSON.parse(response.text);
	} catch {
		if (response.status < 200 || response.status >= 300) throw new HttpError(response.status, response.text);
		throw new ProtocolError(UNREADABLE.notJson(method), method);
	}
	if (typeof body !== "object" || body === null || Array.isArray(body)) {
		if (response.status < 200 || response.status >= 300) throw new HttpError(response.status, response.text);
		throw new ProtocolError(UNREADABLE.notJsonRpc(method), method);
	}
	const envelope = body as Record<string, unknown>;
	const error = envelope.error;
	if (typeof error === "object" && error !== null) {
		const e = error as Record<string, unknown>;
		const code = typeof e.code === "number" ? e.code : -32603;
		const message = typeof e.message === "string" ? e.message : FAILURES.unknownError;
		throw new RpcError(method, code, message, e.data, sent);
	}
	if (response.status < 200 || response.status >= 300) throw new HttpError(response.status, response.text);
	if (envelope.jsonrpc !== "2.0") throw new ProtocolError(UNREADABLE.notJsonRpc2(method), method);
	if (envelope.id !== id) {
		throw new ProtocolError(UNREADABLE.wrongId(String(envelope.id), id), method);
	}
	if (!("result" in envelope)) throw new ProtocolError(UNREADABLE.noResult(method), method);
	return envelope.result;
}
