import { FAILURES } from "./messages";

/**
 * Typed failures of a call to the GrasBot daemon. The view turns each kind into its own
 * state (daemon not running, token refused, daemon error, timeout), so they are classes,
 * not strings.
 */

export class GrasbotClientError extends Error {
	constructor(message: string) {
		super(message);
		this.name = new.target.name;
	}
}

/**
 * The access token set in the plugin cannot travel in a header: a space, a line break or an
 * invisible character copied with it. Said before any request: the browser's own error
 * would quote the header, token included, and read as "daemon not running".
 */
export class TokenFormatError extends GrasbotClientError {
	constructor() {
		super(FAILURES.tokenFormat);
	}
}

/** The daemon's own rule for a token (`grasbot serve`): printable ASCII, no space. */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

/** The token as it is sent, or a TokenFormatError; "" when none is set. */
export function usableToken(token: string | undefined): string {
	const trimmed = token?.trim() ?? "";
	if (trimmed && !TOKEN_CHARS.test(trimmed)) throw new TokenFormatError();
	return trimmed;
}

/**
 * The daemon URL in the settings is one this version refuses (data.json edited by hand): said
 * before any request, in French, so the token goes nowhere the author did not choose.
 */
export class DaemonUrlError extends GrasbotClientError {
	readonly url: string;
	readonly reason: string;

	constructor(url: string, reason: string) {
		super(FAILURES.daemonUrl(url, reason));
		this.url = url;
		this.reason = reason;
	}
}

/** Nothing answered at the daemon URL (connection refused, DNS failure, CORS refusal). */
export class DaemonNotRunningError extends GrasbotClientError {
	readonly url: string;
	readonly reason: string;

	constructor(url: string, reason: string) {
		super(FAILURES.notRunningMessage(url, reason));
		this.url = url;
		this.reason = reason;
	}
}

/** The daemon answered with an HTTP status other than 2xx and no JSON-RPC error in the body. */
export class HttpError extends GrasbotClientError {
	readonly status: number;
	readonly body: string;

	constructor(status: number, body: string, message?: string) {
		super(message ?? FAILURES.http(status, summarize(body)));
		this.status = status;
		this.body = body;
	}
}

/** HTTP 401/403: the owner token is missing or wrong. */
export class AuthError extends HttpError {
	constructor(status: number, body: string) {
		super(status, body, FAILURES.auth(status));
	}
}

/** Why a preview is not sent, and how to fix it, for a token the daemon does not take as the owner's. */
export function tokenRefusal(caller: "visitor" | "token_refused", daemonUrl?: string): { title: string; detail: string } {
	const where = daemonUrl ? ` (${daemonUrl})` : "";
	const said = caller === "token_refused" ? FAILURES.tokenRefused : FAILURES.tokenNotReceived;
	return { title: said.title, detail: said.detail(where) };
}

/**
 * A token is set, and the daemon's `health` says this client is not the owner: the daemon
 * answers a wrong token as a visitor (a proxy may send its own), so a preview asked with it
 * would be a visitor's question. Raised before the question is sent.
 */
export class TokenRefusedError extends GrasbotClientError {
	readonly caller: "visitor" | "token_refused";
	readonly title: string;

	constructor(caller: "visitor" | "token_refused", daemonUrl: string) {
		const { title, detail } = tokenRefusal(caller, daemonUrl);
		super(detail);
		this.caller = caller;
		this.title = title;
	}
}

/** Application error codes of openrpc.json (components/errors). */
export const RPC_UNAUTHORIZED = -32001;
export const RPC_RATE_LIMITED = -32002;
export const RPC_NOTE_NOT_FOUND = -32003;
export const RPC_VAULT_RELOAD_FAILED = -32004;

/** A JSON-RPC error object returned by the daemon (bad params, unknown method, server error). */
export class RpcError extends GrasbotClientError {
	readonly code: number;
	readonly data: unknown;
	readonly method: string;
	/** The names of the params sent: a daemon's « unknown parameter » does not name them. */
	readonly sent: readonly string[];

	constructor(method: string, code: number, message: string, data?: unknown, sent: readonly string[] = []) {
		super(message);
		this.method = method;
		this.code = code;
		this.data = data;
		this.sent = sent;
	}
}

export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;

/**
 * An older daemon's -32602 for params it does not know, its sentence alone: `1 paramètre inconnu
 * (attendus : limit, slug)`, or, older still, `1 unknown parameter (expected: limit, slug)`.
 */
const UNKNOWN_PARAMS = /^\d+ (?:paramètres? inconnus? \(attendus : ([^)]*)\)|unknown parameters? \(expected: ([^)]*)\))$/;

/** The params a method takes, as a daemon's -32602 for params it does not know says them: in its
 * `data.expected` (openrpc.json's InvalidParamsData), or in an older daemon's sentence; null for
 * any other refusal. */
function expectedParams(data: unknown): string[] | null {
	if (typeof data === "object" && data !== null) {
		const expected = (data as { expected?: unknown }).expected;
		return Array.isArray(expected) && expected.every((name) => typeof name === "string") ? expected : null;
	}
	const said = typeof data === "string" ? UNKNOWN_PARAMS.exec(data) : null;
	if (!said) return null;
	const names = said[1] ?? said[2];
	return names === "aucun" || names === "none" ? [] : names.split(", ");
}

/** What a JSON-RPC error's `data` says to a person: the text itself, or an object's `reason`
 * (-32602's InvalidParamsData); "" when it says nothing readable. */
function dataText(data: unknown): string {
	if (typeof data === "string") return data;
	const reason = typeof data === "object" && data !== null ? (data as { reason?: unknown }).reason : undefined;
	return typeof reason === "string" ? reason : "";
}

/**
 * What a daemon older than this plugin lacks, as words for the author (« la méthode
 * `suggest_aliases` », « le paramètre `path` de `suggest_aliases` »), or null for any other
 * error: every method and param this plugin sends, a daemon of its version knows.
 */
export function missingFromDaemon(error: RpcError): string | null {
	if (error.code === RPC_METHOD_NOT_FOUND) return FAILURES.missingMethod(error.method);
	if (error.code !== RPC_INVALID_PARAMS) return null;
	const known = expectedParams(error.data);
	if (known === null) return null;
	const unknown = error.sent.filter((name) => !known.includes(name));
	if (unknown.length === 0) return null;
	return FAILURES.missingParams(unknown, error.method);
}

/** No answer within the configured delay. */
export class TimeoutError extends GrasbotClientError {
	readonly timeoutMs: number;
	/** What was not answered, as written in the message (`` `reload` ``). */
	readonly what: string;

	constructor(what: string, timeoutMs: number) {
		super(FAILURES.timeoutMessage(what, Math.round(timeoutMs / 1000)));
		this.timeoutMs = timeoutMs;
		this.what = what;
	}
}

/**
 * The daemon answered something that is not the protocol (bad JSON, wrong id, wrong shape): a
 * daemon of another version than the plugin, or another server at the daemon URL.
 */
export class ProtocolError extends GrasbotClientError {
	/** The method (or `ask/stream`) whose answer it was; "" when unknown. */
	readonly method: string;

	constructor(message: string, method = "") {
		super(message);
		this.method = method;
	}
}

/** The stream sent an `error` event: the daemon failed while answering. */
export class StreamError extends GrasbotClientError {}

/**
 * The stream broke off after the daemon had started answering, with neither `done` nor `error`:
 * the daemon was killed or restarted mid-answer (a stopping daemon says so in an `error` event).
 */
export class StreamCutError extends GrasbotClientError {
	readonly url: string;
	readonly reason: string;

	constructor(url: string, reason: string) {
		super(FAILURES.cut(url, reason));
		this.url = url;
		this.reason = reason;
	}
}

function summarize(body: string): string {
	const text = body.trim().replace(/\s+/g, " ");
	if (!text) return ".";
	return ` : ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
}

/** What the UI shows for a failure: a state kind, a title and the detail. */
export interface FailureState {
	/**
	 * `outdated`: the daemon is older than the plugin, and lacks a method or a param it sends.
	 * `mismatch`: its answer is not what the plugin reads (another version, or not a GrasBot daemon).
	 */
	kind: "not-running" | "auth" | "settings" | "daemon-error" | "timeout" | "outdated" | "mismatch";
	title: string;
	detail: string;
}

export interface FailureContext {
	/** An access token is set in the settings: an owner-only refusal means it is the wrong one. */
	tokenSet?: boolean;
}

/** The seconds a rate-limited caller is told to wait (`data.retry_after`), when the daemon said. */
function retryAfter(data: unknown): number | undefined {
	if (typeof data !== "object" || data === null) return undefined;
	const seconds = (data as { retry_after?: unknown }).retry_after;
	return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}

export function describeFailure(error: unknown, daemonUrl: string, context: FailureContext = {}): FailureState {
	if (error instanceof DaemonNotRunningError) {
		return { kind: "not-running", title: FAILURES.notRunningTitle, detail: FAILURES.notRunning(daemonUrl, error.reason) };
	}
	if (error instanceof StreamCutError) return { kind: "not-running", title: FAILURES.cutTitle, detail: error.message };
	if (error instanceof DaemonUrlError) return { kind: "settings", title: FAILURES.daemonUrlTitle, detail: error.message };
	if (error instanceof TokenFormatError) return { kind: "auth", title: FAILURES.tokenFormatTitle, detail: error.message };
	if (error instanceof TokenRefusedError) return { kind: "auth", title: error.title, detail: error.message };
	if (error instanceof AuthError) return { kind: "auth", title: FAILURES.authTitle, detail: error.message };
	if (error instanceof TimeoutError) {
		return { kind: "timeout", title: FAILURES.timeoutTitle, detail: FAILURES.timeout(daemonUrl, error.what, Math.round(error.timeoutMs / 1000)) };
	}
	if (error instanceof StreamError) {
		// the daemon's own words (a daemon stopping says to ask again), inside a French frame
		return { kind: "daemon-error", title: FAILURES.streamErrorTitle, detail: FAILURES.streamError(daemonUrl, error.message) };
	}
	if (error instanceof ProtocolError) {
		return { kind: "mismatch", title: FAILURES.mismatchTitle, detail: FAILURES.mismatch(daemonUrl, error.method, error.message) };
	}
	if (error instanceof RpcError) {
		const missing = missingFromDaemon(error);
		if (missing !== null) return { kind: "outdated", title: FAILURES.outdatedTitle, detail: FAILURES.outdated(daemonUrl, missing) };
		if (error.code === RPC_UNAUTHORIZED) {
			// The daemon answers a wrong token as it answers none: only the settings tell them apart.
			if (context.tokenSet) return { kind: "auth", title: FAILURES.authTitle, detail: FAILURES.ownerOnlyWrongToken(error.method) };
			return { kind: "auth", title: FAILURES.tokenRequiredTitle, detail: FAILURES.ownerOnlyNoToken(error.method) };
		}
		if (error.code === RPC_RATE_LIMITED) {
			// the owner is never limited: without the token, the preview asks as a visitor does
			return { kind: "daemon-error", title: FAILURES.rateLimitedTitle, detail: FAILURES.rateLimited(retryAfter(error.data), context.tokenSet === true) };
		}
		return {
			kind: "daemon-error",
			title: FAILURES.daemonErrorTitle,
			detail: FAILURES.rpcError(error.method, error.code, error.message, dataText(error.data)),
		};
	}
	const message = error instanceof Error ? error.message : String(error);
	return { kind: "daemon-error", title: FAILURES.daemonErrorTitle, detail: message };
}
