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
		super(
			`The access token set in the plugin settings holds a space, a line break or an invisible character, which no request can carry. Copy it again from ${TOKEN_FILE}.`,
		);
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
		super(
			`Le réglage Daemon URL du plugin (« ${url} ») est refusé : ${reason}. Aucune requête n'est envoyée au démon, ni le jeton d'accès, tant qu'il n'est pas corrigé dans les réglages du plugin.`,
		);
		this.url = url;
		this.reason = reason;
	}
}

/** Nothing answered at the daemon URL (connection refused, DNS failure, CORS refusal). */
export class DaemonNotRunningError extends GrasbotClientError {
	readonly url: string;
	readonly reason: string;

	constructor(url: string, reason: string) {
		super(`No GrasBot daemon answered at ${url} (${reason}). Start it with \`grasbot serve\`.`);
		this.url = url;
		this.reason = reason;
	}
}

/** The daemon answered with an HTTP status other than 2xx and no JSON-RPC error in the body. */
export class HttpError extends GrasbotClientError {
	readonly status: number;
	readonly body: string;

	constructor(status: number, body: string, message?: string) {
		super(message ?? `The GrasBot daemon answered HTTP ${status}${summarize(body)}`);
		this.status = status;
		this.body = body;
	}
}

/** Where `grasbot serve` keeps the owner token, unless it runs with --token or --token-file (it
 * follows the daemon's XDG_CONFIG_HOME, which the plugin cannot see: the daemon prints the path). */
export const TOKEN_FILE = "~/.config/grasbot/token, or the path `grasbot serve` prints at start";

const COPY_TOKEN = `Copy the daemon's owner token (the file ${TOKEN_FILE}, unless \`grasbot serve\` runs with --token or --token-file) into the plugin settings' Access token.`;

/** HTTP 401/403: the owner token is missing or wrong. */
export class AuthError extends HttpError {
	constructor(status: number, body: string) {
		super(status, body, `The GrasBot daemon refused the access token (HTTP ${status}). ${COPY_TOKEN}`);
	}
}

/** Where the daemon's token is, said in French (the notices of a token the daemon does not take). */
const TOKEN_FILE_FR =
	"le fichier ~/.config/grasbot/token, ou le chemin que `grasbot serve` affiche au démarrage, sauf s'il tourne avec --token ou --token-file (GRASBOT_TOKEN, GRASBOT_TOKEN_FILE)";

/** Why a preview is not sent, and how to fix it, for a token the daemon does not take as the owner's. */
export function tokenRefusal(caller: "visitor" | "token_refused", daemonUrl?: string): { title: string; detail: string } {
	const where = daemonUrl ? ` (${daemonUrl})` : "";
	const unsent =
		"Aucun aperçu n'est envoyé tant qu'il en est ainsi : le démon le traiterait comme la question d'un visiteur (notée dans le journal des questions, reprise par les suggestions d'alias).";
	if (caller === "token_refused") {
		return {
			title: "Jeton d'accès refusé par le démon",
			detail: `Le jeton d'accès des réglages du plugin (Access token) n'est pas celui du démon GrasBot${where} : un ancien jeton, ou le démon a redémarré avec un nouveau. ${unsent} Copiez le jeton du démon (${TOKEN_FILE_FR}) dans le secret que le réglage Access token désigne.`,
		};
	}
	return {
		title: "Jeton d'accès non reçu par le démon",
		detail: `Le plugin envoie un jeton d'accès, mais le démon GrasBot${where} n'en a reçu aucun : un proxy entre Obsidian et le démon retire l'en-tête Authorization. ${unsent} Donnez au réglage Daemon URL l'adresse du démon lui-même (celle où \`grasbot serve\` écoute, http://127.0.0.1:8765 par défaut).`,
	};
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

/** The daemon's -32602 for params it does not know: `1 unknown parameter (expected: limit, slug)`. */
const UNKNOWN_PARAMS = /^\d+ unknown parameters? \(expected: ([^)]*)\)$/;

/**
 * What a daemon older than this plugin lacks, as words for the author (« la méthode
 * `suggest_aliases` », « le paramètre `path` de `suggest_aliases` »), or null for any other
 * error: every method and param this plugin sends, a daemon of its version knows.
 */
export function missingFromDaemon(error: RpcError): string | null {
	if (error.code === RPC_METHOD_NOT_FOUND) return `la méthode \`${error.method}\``;
	if (error.code !== RPC_INVALID_PARAMS || typeof error.data !== "string") return null;
	const expected = UNKNOWN_PARAMS.exec(error.data);
	if (!expected) return null;
	const known = expected[1] === "none" ? [] : expected[1].split(", ");
	const unknown = error.sent.filter((name) => !known.includes(name));
	if (unknown.length === 0) return null;
	const names = unknown.map((name) => `\`${name}\``).join(", ");
	return `${unknown.length === 1 ? "le paramètre" : "les paramètres"} ${names} de \`${error.method}\``;
}

/** No answer within the configured delay. */
export class TimeoutError extends GrasbotClientError {
	readonly timeoutMs: number;
	/** What was not answered, as written in the message (`` `reload` ``). */
	readonly what: string;

	constructor(what: string, timeoutMs: number) {
		super(`The GrasBot daemon did not answer ${what} within ${Math.round(timeoutMs / 1000)} s.`);
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
		super(
			`La connexion au démon GrasBot (${url}) s'est coupée pendant la réponse (${reason}) : il s'est arrêté ou a redémarré. Vérifiez que \`grasbot serve\` tourne, puis posez la question à nouveau.`,
		);
		this.url = url;
		this.reason = reason;
	}
}

function summarize(body: string): string {
	const text = body.trim().replace(/\s+/g, " ");
	if (!text) return ".";
	return `: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
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
		return {
			kind: "not-running",
			title: "Le démon GrasBot ne tourne pas",
			detail: `Rien n'a répondu à ${daemonUrl} (${error.reason}). Lancez-le dans un terminal avec \`grasbot serve\`, puis réessayez.`,
		};
	}
	if (error instanceof StreamCutError) {
		return { kind: "not-running", title: "Réponse interrompue", detail: error.message };
	}
	if (error instanceof DaemonUrlError) {
		return { kind: "settings", title: "Adresse du démon refusée", detail: error.message };
	}
	if (error instanceof TokenFormatError) {
		return { kind: "auth", title: "Access token unusable", detail: error.message };
	}
	if (error instanceof TokenRefusedError) {
		return { kind: "auth", title: error.title, detail: error.message };
	}
	if (error instanceof AuthError) {
		return { kind: "auth", title: "Access token refused", detail: error.message };
	}
	if (error instanceof TimeoutError) {
		return {
			kind: "timeout",
			title: "Le démon GrasBot ne répond pas",
			detail: `Le démon GrasBot (${daemonUrl}) n'a pas répondu à ${error.what} en ${Math.round(error.timeoutMs / 1000)} s : il est peut-être occupé (un rechargement qui calcule le sens des notes, un modèle lent ou une file d'attente pleine). Réessayez dans un moment ; si cela dure, le journal de \`grasbot serve\` dit pourquoi.`,
		};
	}
	if (error instanceof StreamError) {
		// the daemon's own words (a daemon stopping says to ask again), inside a French frame
		return {
			kind: "daemon-error",
			title: "Réponse interrompue par le démon",
			detail: `Le démon GrasBot (${daemonUrl}) a interrompu la réponse : « ${error.message} ». Posez la question à nouveau dans un instant ; si cela se répète, le journal de \`grasbot serve\` dit pourquoi.`,
		};
	}
	if (error instanceof ProtocolError) {
		const what = error.method ? ` a répondu à \`${error.method}\`` : " a répondu";
		return {
			kind: "mismatch",
			title: "Réponse du démon illisible",
			detail: `Le démon GrasBot (${daemonUrl})${what} autrement que ce plugin ne le lit (${error.message}) : le démon et le plugin ne sont sans doute pas de la même version, ou un autre programme écoute à cette adresse. Mettez GrasBot et le plugin à la même version, relancez \`grasbot serve\`, et vérifiez le réglage Daemon URL.`,
		};
	}
	if (error instanceof RpcError) {
		const missing = missingFromDaemon(error);
		if (missing !== null) {
			return {
				kind: "outdated",
				title: "Démon GrasBot plus ancien que le plugin",
				detail: `Le démon GrasBot (${daemonUrl}) ne connaît pas ${missing} : il est plus ancien que ce plugin. Mettez GrasBot à jour sur cette machine (la version du plugin ou une plus récente), puis relancez \`grasbot serve\`.`,
			};
		}
		const data = typeof error.data === "string" && error.data ? ` — ${error.data}` : "";
		if (error.code === RPC_UNAUTHORIZED) {
			// The daemon answers a wrong token as it answers none: only the settings tell them apart.
			if (context.tokenSet) {
				return {
					kind: "auth",
					title: "Access token refused",
					detail: `\`${error.method}\` needs the daemon's owner token, and the access token set in the plugin settings is not it. ${COPY_TOKEN}`,
				};
			}
			return {
				kind: "auth",
				title: "Access token required",
				detail: `\`${error.method}\` needs the daemon's owner token, and no access token is set. ${COPY_TOKEN}`,
			};
		}
		if (error.code === RPC_RATE_LIMITED) {
			const wait = retryAfter(error.data);
			const when = wait === undefined ? "in a moment" : `in ${wait} s`;
			// the owner is never limited: without the token, the preview asks as a visitor does
			const token = context.tokenSet ? "" : " With the daemon's access token set in the plugin settings, previews are not limited.";
			return {
				kind: "daemon-error",
				title: "Too many questions",
				detail: `The daemon takes only so many questions a minute from one address, as it does from visitors (GRASBOT_RATE_PER_MINUTE). Try again ${when}.${token}`,
			};
		}
		return {
			kind: "daemon-error",
			title: "GrasBot daemon error",
			detail: `${error.method}: ${error.message}${data} (code ${error.code})`,
		};
	}
	const message = error instanceof Error ? error.message : String(error);
	return { kind: "daemon-error", title: "GrasBot daemon error", detail: message };
}
