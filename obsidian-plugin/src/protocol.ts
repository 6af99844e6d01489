/**
 * The daemon's response shapes (shared-protocol/openrpc.json) and decoders that check them at
 * run time: a daemon of another version must fail with a clear ProtocolError, not with
 * `undefined` deep inside the view.
 */

import { ProtocolError } from "./errors";
import { UNREADABLE } from "./messages";

export type Audience = "visitor" | "owner";

export interface Reason {
	signal: string;
	points: number;
	detail: string;
}

/** A part of a source's note that was sent to the model. */
export interface Passage {
	/** The headings above it, outermost first; empty for a note's opening or a note sent whole. */
	heading: string[];
	/** The innermost heading's anchor on the site, or null. */
	anchor: string | null;
	/** The note's url with the anchor appended, or null when the note has no url. */
	url: string | null;
	/** Characters sent. */
	chars: number;
}

export interface Source {
	slug: string;
	title: string;
	type: string | null;
	score: number;
	reasons: Reason[];
	url: string | null;
	/** Vault-relative path of the note, with / separators; lets the plugin open it. */
	path: string;
	/** The passages sent to the model; empty from a daemon that does not send them. */
	passages: Passage[];
}

export interface SearchResult {
	results: Source[];
	grounded: boolean;
	vault_size: number | null;
	took_ms: number | null;
}

export interface AnswerResult {
	response: string;
	sources: Source[];
	grounded: boolean;
	model: string | null;
	vault_size: number | null;
	/** Set when the LLM could not answer and `response` is the extractive fallback. */
	llm_error: string | null;
	/** Generation was full: `response` is the notes' extract, and says so (false from older daemons). */
	busy: boolean;
	/** The answer was kept from an earlier identical first question (false from older daemons). */
	reused: boolean;
}

export interface NoteIssue {
	path: string;
	message: string;
}

/** A daemon serving the same vault (GRASBOT_PEERS), which the reload was passed on to. */
export interface PeerReload {
	url: string;
	ok: boolean;
	vault_size: number | null;
	/** Why it did not reload, for the author to read (down, or it refused this daemon's owner token). */
	error: string | null;
	/** The HTTP status it answered when it did not reload (401: it holds another owner token);
	 * null when it did not answer, and from daemons before the field, whose `error` said « HTTP 401 ». */
	status: number | null;
}

export interface ReloadResult {
	vault_size: number;
	added: number | null;
	changed: number | null;
	removed: number | null;
	/** Notes that were skipped, and why. */
	errors: NoteIssue[];
	took_ms: number | null;
	/** The other daemons the reload was passed on to; empty without GRASBOT_PEERS. */
	peers: PeerReload[];
}

/** The meaning (embedding) signal: absent from daemons older than 3.2. */
export interface SemanticHealth {
	backend: string;
	/** The bundled encoder's name, or ollama:<model>. */
	model: string | null;
	/** The owner's view: the whole vault is embedded (a visitor's: the public notes are). */
	ready: boolean;
	/**
	 * Owner's view only: visitors' questions have meaning already (the public notes are embedded
	 * first, so it may be true while `ready` is not); null when not said (a visitor's view, an older daemon).
	 */
	visitors_ready: boolean | null;
	/** The owner's view counts every note's texts, a visitor's the public notes' alone. */
	embedded: number | null;
	total: number | null;
	/** Why embedding the vault failed (the owner reads the backend's own error). */
	error: string | null;
	/** Why the last question was not embedded (ranked by words alone). */
	question_error: string | null;
	/**
	 * Owner's view only: the seconds visitors' questions still go without meaning (Ollama down or
	 * silent); null when not paused; undefined when not said (a visitor's view, or a daemon
	 * older than the field, 3.2.0 too, which left it out when not paused and when paused alike).
	 */
	questions_paused_for: number | null | undefined;
	/** Owner's view only: the notes with a text the backend refused (ranked by words alone); empty when none, or not said. */
	unembedded: string[];
}

export interface ModelHostHealth {
	/** Owner's view only. */
	url: string | null;
	state: string;
	/** Owner's view only, while the host is down or retrying. */
	error: string | null;
}

/** The visitors' question log: the owner's view only. */
export interface QuestionLogHealth {
	state: string;
	kept: number | null;
	dropped: number | null;
	error: string | null;
}

/**
 * Whose view a call got (`health`'s `caller`): the owner's, a visitor's (no token sent), or a
 * visitor's although a token was sent (`token_refused`: not the daemon's, a stale one).
 */
export type Caller = "owner" | "visitor" | "token_refused";

const CALLERS: readonly string[] = ["owner", "visitor", "token_refused"];

export interface HealthResult {
	status: string;
	/** Null from an older daemon, which does not say (or from a newer one, a value this plugin does not know). */
	caller: Caller | null;
	vault_size: number | null;
	model: string | null;
	llm_reachable: boolean | null;
	version: string | null;
	semantic: SemanticHealth | null;
	/** Each model host (OLLAMA_HOST may list several); null from a daemon that does not say. */
	hosts: ModelHostHealth[] | null;
	question_log: QuestionLogHealth | null;
	/**
	 * What a note without `visibility` is (`--default-visibility`), in the owner's view only;
	 * null from a visitor's view or an older daemon, which do not say.
	 */
	default_visibility: "public" | "private" | null;
	/**
	 * Where the daemon reads a note's dates written without their offset (GRASBOT_TIME_ZONE), in
	 * the owner's view only; null from a visitor's view or an older daemon, which do not say.
	 */
	time_zone: string | null;
}

export interface AliasSuggestion {
	alias: string;
	source: string;
	evidence: string[];
	score: number;
}

export interface AliasSuggestions {
	slug: string;
	suggestions: AliasSuggestion[];
}

export interface HistoryTurn {
	role: "user" | "assistant";
	content: string;
}

export interface StreamSourcesEvent {
	sources: Source[];
	grounded: boolean;
}

// ------------------------------------------------------------------ decoding helpers

type Json = Record<string, unknown>;

function fail(where: string, expected: string, value: unknown): never {
	const got = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
	throw new ProtocolError(UNREADABLE.wrongType(where, UNREADABLE.types[expected], UNREADABLE.types[got] ?? got));
}

function object(value: unknown, where: string): Json {
	if (typeof value !== "object" || value === null || Array.isArray(value)) fail(where, "object", value);
	return value as Json;
}

function string(value: unknown, where: string): string {
	if (typeof value !== "string") fail(where, "string", value);
	return value;
}

function number(value: unknown, where: string): number {
	if (typeof value !== "number" || !Number.isFinite(value)) fail(where, "number", value);
	return value;
}

function boolean(value: unknown, where: string): boolean {
	if (typeof value !== "boolean") fail(where, "boolean", value);
	return value;
}

function array(value: unknown, where: string): unknown[] {
	if (!Array.isArray(value)) fail(where, "array", value);
	return value;
}

function optional<T>(value: unknown, decode: (v: unknown, where: string) => T, where: string): T | null {
	return value === undefined || value === null ? null : decode(value, where);
}

// ------------------------------------------------------------------ decoders

export function decodeReason(value: unknown, where = "reason"): Reason {
	const o = object(value, where);
	return {
		signal: string(o.signal, `${where}.signal`),
		points: number(o.points, `${where}.points`),
		detail: string(o.detail, `${where}.detail`),
	};
}

export function decodePassage(value: unknown, where = "passage"): Passage {
	const o = object(value, where);
	return {
		heading: array(o.heading, `${where}.heading`).map((h, i) => string(h, `${where}.heading[${i}]`)),
		anchor: optional(o.anchor, string, `${where}.anchor`),
		url: optional(o.url, string, `${where}.url`),
		chars: number(o.chars, `${where}.chars`),
	};
}

export function decodeSource(value: unknown, where = "source"): Source {
	const o = object(value, where);
	return {
		slug: string(o.slug, `${where}.slug`),
		title: string(o.title, `${where}.title`),
		type: optional(o.type, string, `${where}.type`),
		score: number(o.score, `${where}.score`),
		reasons: array(o.reasons ?? [], `${where}.reasons`).map((r, i) => decodeReason(r, `${where}.reasons[${i}]`)),
		url: optional(o.url, string, `${where}.url`),
		path: string(o.path, `${where}.path`),
		passages: array(o.passages ?? [], `${where}.passages`).map((p, i) => decodePassage(p, `${where}.passages[${i}]`)),
	};
}

function decodeSources(value: unknown, where: string): Source[] {
	return array(value, where).map((s, i) => decodeSource(s, `${where}[${i}]`));
}

export function decodeSearchResult(value: unknown): SearchResult {
	const o = object(value, "search");
	return {
		results: decodeSources(o.results, "search.results"),
		grounded: boolean(o.grounded, "search.grounded"),
		vault_size: optional(o.vault_size, number, "search.vault_size"),
		took_ms: optional(o.took_ms, number, "search.took_ms"),
	};
}

export function decodeAnswerResult(value: unknown, where = "answer"): AnswerResult {
	const o = object(value, where);
	return {
		response: string(o.response, `${where}.response`),
		sources: decodeSources(o.sources, `${where}.sources`),
		grounded: boolean(o.grounded, `${where}.grounded`),
		model: optional(o.model, string, `${where}.model`),
		vault_size: optional(o.vault_size, number, `${where}.vault_size`),
		llm_error: optional(o.llm_error, string, `${where}.llm_error`),
		busy: o.busy === undefined ? false : boolean(o.busy, `${where}.busy`),
		reused: o.reused === undefined ? false : boolean(o.reused, `${where}.reused`),
	};
}

function decodeIssue(value: unknown, where: string): NoteIssue {
	const o = object(value, where);
	return {
		path: string(o.path, `${where}.path`),
		message: string(o.message, `${where}.message`),
	};
}

export function decodeReloadResult(value: unknown): ReloadResult {
	const o = object(value, "reload");
	return {
		vault_size: number(o.vault_size, "reload.vault_size"),
		added: optional(o.added, number, "reload.added"),
		changed: optional(o.changed, number, "reload.changed"),
		removed: optional(o.removed, number, "reload.removed"),
		errors: array(o.errors, "reload.errors").map((e, i) => decodeIssue(e, `reload.errors[${i}]`)),
		took_ms: optional(o.took_ms, number, "reload.took_ms"),
		peers: array(o.peers ?? [], "reload.peers").map((item, i) => {
			const where = `reload.peers[${i}]`;
			const p = object(item, where);
			return {
				url: string(p.url, `${where}.url`),
				ok: boolean(p.ok, `${where}.ok`),
				vault_size: optional(p.vault_size, number, `${where}.vault_size`),
				error: optional(p.error, string, `${where}.error`),
				status: optional(p.status, number, `${where}.status`),
			};
		}),
	};
}

export function decodeHealthResult(value: unknown): HealthResult {
	const o = object(value, "health");
	return {
		status: string(o.status, "health.status"),
		caller: decodeCaller(o.caller),
		vault_size: optional(o.vault_size, number, "health.vault_size"),
		model: optional(o.model, string, "health.model"),
		llm_reachable: optional(o.llm_reachable, boolean, "health.llm_reachable"),
		version: optional(o.version, string, "health.version"),
		semantic: optional(o.semantic, decodeSemanticHealth, "health.semantic"),
		hosts: o.generation === undefined || o.generation === null ? null : decodeHosts(object(o.generation, "health.generation").hosts),
		question_log: optional(o.question_log, decodeQuestionLog, "health.question_log"),
		default_visibility: decodeDefaultVisibility(o.default_visibility),
		time_zone: optional(o.time_zone, string, "health.time_zone"),
	};
}

function decodeDefaultVisibility(value: unknown): "public" | "private" | null {
	const visibility = optional(value, string, "health.default_visibility");
	return visibility === "public" || visibility === "private" ? visibility : null;
}

function decodeCaller(value: unknown): Caller | null {
	const caller = optional(value, string, "health.caller");
	return caller !== null && CALLERS.includes(caller) ? (caller as Caller) : null;
}

function decodeSemanticHealth(value: unknown, where: string): SemanticHealth {
	const o = object(value, where);
	return {
		backend: string(o.backend, `${where}.backend`),
		model: optional(o.model, string, `${where}.model`),
		ready: boolean(o.ready, `${where}.ready`),
		visitors_ready: optional(o.visitors_ready, boolean, `${where}.visitors_ready`),
		embedded: optional(o.embedded, number, `${where}.embedded`),
		total: optional(o.total, number, `${where}.total`),
		error: optional(o.error, string, `${where}.error`),
		question_error: optional(o.question_error, string, `${where}.question_error`),
		questions_paused_for: o.questions_paused_for === undefined ? undefined : optional(o.questions_paused_for, number, `${where}.questions_paused_for`),
		unembedded: array(o.unembedded ?? [], `${where}.unembedded`).map((path, i) => string(path, `${where}.unembedded[${i}]`)),
	};
}

function decodeHosts(value: unknown): ModelHostHealth[] {
	return array(value, "health.generation.hosts").map((item, i) => {
		const where = `health.generation.hosts[${i}]`;
		const h = object(item, where);
		return {
			url: optional(h.url, string, `${where}.url`),
			state: string(h.state, `${where}.state`),
			error: optional(h.error, string, `${where}.error`),
		};
	});
}

function decodeQuestionLog(value: unknown, where: string): QuestionLogHealth {
	const o = object(value, where);
	return {
		state: string(o.state, `${where}.state`),
		kept: optional(o.kept, number, `${where}.kept`),
		dropped: optional(o.dropped, number, `${where}.dropped`),
		error: optional(o.error, string, `${where}.error`),
	};
}

export function decodeAliasSuggestions(value: unknown): AliasSuggestions {
	const o = object(value, "suggest_aliases");
	return {
		slug: string(o.slug, "suggest_aliases.slug"),
		suggestions: array(o.suggestions, "suggest_aliases.suggestions").map((item, i) => {
			const where = `suggest_aliases.suggestions[${i}]`;
			const s = object(item, where);
			return {
				alias: string(s.alias, `${where}.alias`),
				source: string(s.source, `${where}.source`),
				evidence: array(s.evidence ?? [], `${where}.evidence`).map((e, j) => string(e, `${where}.evidence[${j}]`)),
				score: number(s.score, `${where}.score`),
			};
		}),
	};
}

export function decodeStreamSources(value: unknown): StreamSourcesEvent {
	const o = object(value, "ask/stream:sources");
	return {
		sources: decodeSources(o.sources, "ask/stream:sources.sources"),
		grounded: boolean(o.grounded, "ask/stream:sources.grounded"),
	};
}

export function decodeStreamToken(value: unknown): string {
	return string(object(value, "ask/stream:token").text, "ask/stream:token.text");
}

export function decodeStreamError(value: unknown): string {
	return string(object(value, "ask/stream:error").message, "ask/stream:error.message");
}

export function decodeDiscover(value: unknown): { methods: string[] } {
	const o = object(value, "rpc.discover");
	return {
		methods: array(o.methods, "rpc.discover.methods").map((m, i) =>
			string(object(m, `rpc.discover.methods[${i}]`).name, `rpc.discover.methods[${i}].name`),
		),
	};
}
