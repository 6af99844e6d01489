/**
 * What the owner must hear from the daemon's health: each thing that makes visitors' answers
 * worse (no public note, meaning search off or missing notes, no model to write answers, their questions not logged), in plain
 * words with what to do. Pure: main.ts says the problems once in a Notice at a reload, the
 * preview panel shows them all while it is open; nothing when all is well.
 */

import { tokenRefusal } from "./errors";
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
			title: "Visitors get no answer: no note is public",
			detail:
				"A note is private unless it says `visibility: public` in its properties, or the daemon runs with --default-visibility public (GRASBOT_DEFAULT_VISIBILITY); `grasbot check` says what else it finds in the vault.",
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

function plural(n: number, one: string, many: string): string {
	return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
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
				: `No Ollama answers at ${urls.length > 0 ? urls.join(", ") : "OLLAMA_HOST"}: start \`ollama serve\` there, or set OLLAMA_HOST to where it runs.`;
		return [
			{
				key: "answers-off",
				title: "Visitors get extracts, not written answers",
				detail: `No model host can answer with ${health.model}. ${why}`,
				problem: true,
			},
		];
	}
	return failing.map((h, i) => ({
		key: `host-${h.url ?? i}`,
		title: "A model host is skipped",
		detail: `${h.error === null ? `${h.url ?? "One of the OLLAMA_HOST hosts"} could not be used lately.` : sentence(h.error)} Visitors' answers go to the other hosts meanwhile, and wait longer when they are busy.`,
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
	const named = paths.slice(0, UNEMBEDDED_NAMED).map((p) => `“${p}”`);
	const more = paths.length > named.length ? ` and ${plural(paths.length - named.length, "other", "others")}` : "";
	const one = paths.length === 1;
	return [
		{
			key: "meaning-unembedded",
			title: one ? "A note is matched by words alone" : "Some notes are matched by words alone",
			detail: `Ollama would not embed a text of ${plural(paths.length, "note", "notes")} (bge-m3 cannot embed a few): visitors' questions find ${one ? "it by its" : "them by their"} words only, the rest of the vault by meaning too. ${one ? "It is" : "They are"} ${named.join(", ")}${more}. Editing a note's text, or restarting the daemon, asks Ollama again.`,
			problem: true,
		},
	];
}

function meaningStateNotices(semantic: SemanticHealth): HealthNotice[] {
	const counted = semantic.embedded !== null && semantic.total !== null ? ` (${semantic.embedded} of ${semantic.total} texts embedded)` : "";
	if (semantic.error !== null) {
		const model = semantic.model?.replace(/^ollama:/, "") ?? "the embedding model";
		const action =
			semantic.backend === "ollama" && !semantic.error.includes("ollama pull")
				? ` Check that Ollama runs at OLLAMA_HOST and has ${model} (\`ollama pull ${model}\`).`
				: "";
		return [
			{
				key: "meaning-failed",
				title: semantic.ready ? "Meaning search is missing notes" : "Meaning search is off",
				detail: `${semantic.ready ? "The notes not embedded" : "Visitors' questions"} are matched by words alone${counted}: ${sentence(semantic.error)}${action} The daemon tries again every 30 s and at each reload.`,
				problem: true,
			},
		];
	}
	if (semantic.questions_paused_for !== null && semantic.questions_paused_for !== undefined) {
		const seconds = Math.max(1, Math.ceil(semantic.questions_paused_for));
		const why = semantic.question_error !== null ? `: ${sentence(semantic.question_error)}` : ".";
		return [
			{
				key: "meaning-paused",
				title: "Meaning search is paused for visitors' questions",
				detail: `Ollama could not be reached or did not answer the last question in time${why} Visitors' questions are matched by words alone for ${plural(seconds, "more second", "more seconds")}, then Ollama is asked again: check that it runs and is not overloaded.`,
				problem: true,
			},
		];
	}
	if (semantic.question_error !== null && semantic.questions_paused_for === undefined) {
		// a daemon that does not say whether meaning is paused: both cases, as it did
		return [
			{
				key: "meaning-question",
				title: "A visitor's question was matched by words alone",
				detail: `Ollama did not embed the last one: ${sentence(semantic.question_error)} When Ollama could not be reached or did not answer in time, the questions of the next 10 s are matched by words alone too: check that it runs and is not overloaded. When it refused that question's text (bge-m3 cannot embed a few), the next question is embedded as usual.`,
				problem: true,
			},
		];
	}
	if (semantic.question_error !== null) {
		return [
			{
				key: "meaning-question",
				title: "A visitor's question was matched by words alone",
				detail: `Ollama did not embed the last one: ${sentence(semantic.question_error)} Meaning search is not paused: the next question is embedded as usual.`,
				problem: true,
			},
		];
	}
	if (!semantic.ready) {
		return [
			{
				key: "meaning-embedding",
				title: "Meaning search is not ready yet",
				detail: `The vault is being embedded${counted}; until it is, visitors' questions are matched by words alone.`,
				problem: false,
			},
		];
	}
	return [];
}

function questionLogNotices(log: QuestionLogHealth | null): HealthNotice[] {
	if (log === null) return []; // a visitor's view, or an older daemon
	const dropped = log.dropped ?? 0;
	const lost = dropped > 0 ? ` ${plural(dropped, "question was", "questions were")} already lost, too many waiting at once.` : "";
	if (log.state === "waiting") {
		const kept = log.kept ?? 0;
		return [
			{
				key: "log-waiting",
				title: "Visitors' questions are not being saved",
				detail: `The question log cannot be written: ${sentence(log.error ?? "another process holds the file")} ${plural(kept, "question waits", "questions wait")} in memory, written once it can be; a stop of the daemon before then loses them.${lost}`,
				problem: true,
			},
		];
	}
	if (log.state === "off" && log.error !== null) {
		return [
			{
				key: "log-off",
				title: "Visitors' questions are not logged",
				detail: `The question log is off: ${sentence(log.error)} Alias suggestions learn nothing from visitors' questions until it is fixed and the daemon restarted.`,
				problem: true,
			},
		];
	}
	if (log.state === "on" && dropped > 0) {
		return [
			{
				key: "log-dropped",
				title: "Some visitors' questions were lost",
				detail: `${plural(dropped, "question was", "questions were")} not logged since the daemon started, too many waiting at once: alias suggestions never see them.`,
				problem: true,
			},
		];
	}
	return [];
}
