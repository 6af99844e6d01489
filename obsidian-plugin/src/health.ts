/**
 * What the owner must hear from the daemon's health: each thing that makes visitors' answers
 * worse (no public note, meaning search off or missing notes, no model to write answers, their questions not logged), in plain
 * words with what to do. Pure: main.ts says the problems once in a Notice at a reload, the
 * preview panel shows them all while it is open; nothing when all is well.
 */

import { tokenRefusal } from "./errors";
import { HEALTH } from "./messages";
import type { HealthResult, ModelHostHealth, QuestionLogHealth, SemanticHealth } from "./protocol";

export interface HealthNotice {
	/** The same while the same trouble lasts (its counts and message may change): said once until it clears. */
	key: string;
	title: string;
	detail: string;
	/** Something for the owner to fix; false for what passes by itself (the vault still being embedded). */
	problem: boolean;
}

/** What the health cannot tell alone: whether this client sent a token, and to which daemon. */
export interface HealthContext {
	/** A token went with the call: a `visitor` caller then means the daemon never received it. */
	tokenSent?: boolean;
	daemonUrl?: string;
}

/** Every notice the health calls for, the most harmful first; none when all is well. */
export function healthNotices(health: HealthResult, context: HealthContext = {}): HealthNotice[] {
	return [
		...tokenNotices(health, context),
		...publicNotices(health),
		...answerNotices(health),
		...meaningNotices(health.semantic ?? null),
		...questionLogNotices(health.question_log ?? null),
	];
}

/**
 * No note a visitor may read: a vault whose notes have no `visibility` field is all private by
 * default, and « Check connection » said « ok: 0 notes » with nothing to say why nor what to do.
 */
function publicNotices(health: HealthResult): HealthNotice[] {
	if (health.vault_size !== 0) return [];
	return [
		{
			key: "no-public-note",
			title: HEALTH.noPublicTitle,
			detail: HEALTH.noPublic,
			problem: true,
		},
	];
}

/**
 * The token sent is not the daemon's, or never reached it (a proxy stripping Authorization):
 * first, since the rest is then a visitor's view, and no preview is sent. Worded as the
 * preview's refusal (errors.ts `tokenRefusal`).
 */
function tokenNotices(health: HealthResult, context: HealthContext): HealthNotice[] {
	const caller = health.caller;
	if (caller !== "token_refused" && !(caller === "visitor" && context.tokenSent === true)) return [];
	return [{ key: caller === "token_refused" ? "token-refused" : "token-not-received", ...tokenRefusal(caller, context.daemonUrl), problem: true }];
}

/** A notice as one Notice's text. */
export function formatHealthNotice(notice: HealthNotice): string {
	return `${notice.title}. ${notice.detail}`;
}

/**
 * Which notices are new since the last health seen: a trouble is said once, not at every save
 * while it lasts, and again if it clears then comes back.
 */
export class SaidOnce {
	private said = new Set<string>();

	fresh(notices: HealthNotice[]): HealthNotice[] {
		const fresh = notices.filter((n) => !this.said.has(n.key));
		this.said = new Set(notices.map((n) => n.key));
		return fresh;
	}
}

/** A daemon's message as the end of a sentence. */
function sentence(text: string): string {
	const trimmed = text.trim();
	return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

function answerNotices(health: HealthResult): HealthNotice[] {
	if (health.model === null) return []; // no LLM configured: extracts are what the owner chose
	const hosts: ModelHostHealth[] = health.hosts ?? [];
	const failing = hosts.filter((h) => h.state !== "up");
	if (health.llm_reachable === false || (hosts.length > 0 && failing.length === hosts.length)) {
		const errors = failing.map((h) => h.error).filter((e): e is string => e !== null);
		const urls = hosts.map((h) => h.url).filter((u): u is string => u !== null);
		const why =
			errors.length > 0
				? errors.map(sentence).join(" ")
				: HEALTH.noOllama(urls.length > 0 ? urls.join(", ") : "OLLAMA_HOST");
		return [
			{
				key: "answers-off",
				title: HEALTH.answersOffTitle,
				detail: HEALTH.answersOff(health.model, why),
				problem: true,
			},
		];
	}
	return failing.map((h, i) => ({
		key: `host-${h.url ?? i}`,
		title: HEALTH.hostSkippedTitle,
		detail: HEALTH.hostSkipped(h.error === null ? HEALTH.hostUnusable(h.url) : sentence(h.error)),
		problem: true,
	}));
}

/** How many of the notes Ollama would not embed are named: a vault of bge-m3 NaNs would fill the panel. */
const UNEMBEDDED_NAMED = 5;

function meaningNotices(semantic: SemanticHealth | null): HealthNotice[] {
	if (semantic === null || semantic.backend === "off") return []; // off by the owner's setting
	return [...meaningStateNotices(semantic), ...unembeddedNotices(semantic.unembedded)];
}

/**
 * The notes with a text Ollama refused while it embedded the others: a silent loss of meaning
 * for them alone, which no other notice says (the vault reads "ready", all embedded).
 */
function unembeddedNotices(paths: string[]): HealthNotice[] {
	if (paths.length === 0) return [];
	const named = paths.slice(0, UNEMBEDDED_NAMED).map(HEALTH.quoted);
	return [
		{
			key: "meaning-unembedded",
			title: HEALTH.unembeddedTitle(paths.length === 1),
			detail: HEALTH.unembedded(paths.length, named, paths.length - named.length),
			problem: true,
		},
	];
}

function meaningStateNotices(semantic: SemanticHealth): HealthNotice[] {
	const counted = semantic.embedded !== null && semantic.total !== null ? HEALTH.counted(semantic.embedded, semantic.total) : "";
	if (semantic.error !== null) {
		const model = semantic.model?.replace(/^ollama:/, "") ?? HEALTH.embeddingModel;
		const action = semantic.backend === "ollama" && !semantic.error.includes("ollama pull") ? HEALTH.checkOllama(model) : "";
		return [
			{
				key: "meaning-failed",
				title: semantic.ready ? HEALTH.meaningMissingTitle : HEALTH.meaningOffTitle,
				detail: HEALTH.meaningFailed(semantic.ready, counted, sentence(semantic.error), action),
				problem: true,
			},
		];
	}
	if (semantic.questions_paused_for !== null && semantic.questions_paused_for !== undefined) {
		const seconds = Math.max(1, Math.ceil(semantic.questions_paused_for));
		const why = semantic.question_error !== null ? ` : ${sentence(semantic.question_error)}` : ".";
		return [
			{
				key: "meaning-paused",
				title: HEALTH.pausedTitle,
				detail: HEALTH.paused(why, seconds),
				problem: true,
			},
		];
	}
	if (semantic.question_error !== null && semantic.questions_paused_for === undefined) {
		// a daemon that does not say whether meaning is paused: both cases, as it did
		return [
			{
				key: "meaning-question",
				title: HEALTH.questionTitle,
				detail: HEALTH.questionMaybePaused(sentence(semantic.question_error)),
				problem: true,
			},
		];
	}
	if (semantic.question_error !== null) {
		return [
			{
				key: "meaning-question",
				title: HEALTH.questionTitle,
				detail: HEALTH.questionNotPaused(sentence(semantic.question_error)),
				problem: true,
			},
		];
	}
	if (!semantic.ready) {
		// the public notes are embedded first: visitors may have meaning while the private notes' texts wait
		const visitors = semantic.visitors_ready === true;
		return [
			{
				key: "meaning-embedding",
				title: visitors ? HEALTH.privateNotReadyTitle : HEALTH.notReadyTitle,
				detail: visitors ? HEALTH.privateNotReady(counted) : HEALTH.notReady(counted),
				problem: false,
			},
		];
	}
	return [];
}

function questionLogNotices(log: QuestionLogHealth | null): HealthNotice[] {
	if (log === null) return []; // a visitor's view, or an older daemon
	const dropped = log.dropped ?? 0;
	const lost = dropped > 0 ? HEALTH.lost(dropped) : "";
	if (log.state === "waiting") {
		const kept = log.kept ?? 0;
		return [
			{
				key: "log-waiting",
				title: HEALTH.logWaitingTitle,
				detail: HEALTH.logWaiting(sentence(log.error ?? HEALTH.logHeld), kept, lost),
				problem: true,
			},
		];
	}
	if (log.state === "off" && log.error !== null) {
		return [
			{
				key: "log-off",
				title: HEALTH.logOffTitle,
				detail: HEALTH.logOff(sentence(log.error)),
				problem: true,
			},
		];
	}
	if (log.state === "on" && dropped > 0) {
		return [
			{
				key: "log-dropped",
				title: HEALTH.logDroppedTitle,
				detail: HEALTH.logDropped(dropped),
				problem: true,
			},
		];
	}
	return [];
}
