/**
 * The preview's short conversation, without Obsidian: which exchanges a follow-up is sent
 * with. The rules are the chat page's (daemon/grasbot/server/static/chat.js `historyFor`): the
 * daemon takes at most 4 exchanges (8 turns) of at most 2,000 characters a turn, and the
 * question and history travel in the query string of GET /ask/stream, whose request line the
 * daemon (GRASBOT_MAX_BODY, 64 KiB) and a proxy (8 KiB at nginx's defaults) bound. Oldest exchanges go first. Both
 * implementations run the cases of shared-protocol/cases/history.json.
 */

import type { HistoryTurn } from "./protocol";

export const MAX_EXCHANGES = 4;
export const MAX_TURN_CHARS = 2000;
/** The longest /ask/stream URL sent: room below the 8 KiB request line. */
export const MAX_URL = 7000;

/** The first `n` UTF-16 units of `text`, one fewer when the last would split a surrogate pair:
 * an emoji cut in half is sent as a lone `\ud83d`, which the daemon refuses. */
export function cutText(text: string, n: number): string {
	const cut = text.slice(0, n);
	return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

export interface Exchange {
	q: string;
	answer: string;
}

/** The history a daemon takes: the protocol's, or what its GRASBOT_MAX_HISTORY and GRASBOT_MAX_TURN lower it to. */
export interface HistoryLimits {
	turns: number;
	turnChars: number;
}

export const PROTOCOL_LIMITS: HistoryLimits = { turns: 2 * MAX_EXCHANGES, turnChars: MAX_TURN_CHARS };

/** An older daemon's -32602 naming its lower limit on the history's length, in its sentence
 * alone: in French, or, older still, in English. */
const FEWER_ITEMS = /^(?:`history` : doit compter au plus (\d+) éléments|history: must have at most (\d+) items)/;
/** The same for a turn's length. */
const SHORTER_TURNS = /^(?:`history\[\d+\]\.content` : doit compter au plus (\d+) caractères|history\[\d+\]\.content: must be at most (\d+) characters)/;

/** A limit a daemon's `data` gives: a whole number of at least 1, else null. */
function limitIn(data: Record<string, unknown>, name: string): number | null {
	const value = data[name];
	return typeof value === "number" && Number.isInteger(value) && value >= 1 ? value : null;
}

/** The lower limits a daemon's -32602 names, or null for another refusal. Its `data` says them in
 * fields (openrpc.json's InvalidParamsData: `{"reason": "…", "param": "history", "max_history": 4}`,
 * `max_turn` for a turn's characters), never read from the sentence, whose words may change; an
 * older daemon's `data` was the sentence alone (`` `history` : doit compter au plus 4 éléments
 * (nombre reçu : 8) ``, `` `history[3].content` : doit compter au plus 500 caractères (longueur
 * reçue : 2000) ``), read as it was. */
export function lowerLimits(limits: HistoryLimits, detail: unknown): HistoryLimits | null {
	if (typeof detail === "object" && detail !== null) {
		const data = detail as Record<string, unknown>;
		const turns = limitIn(data, "max_history");
		if (turns !== null) return { ...limits, turns };
		const turnChars = limitIn(data, "max_turn");
		return turnChars === null ? null : { ...limits, turnChars };
	}
	if (typeof detail !== "string") return null;
	const items = FEWER_ITEMS.exec(detail);
	if (items) return { ...limits, turns: Number(items[1] ?? items[2]) };
	const chars = SHORTER_TURNS.exec(detail);
	if (chars) return { ...limits, turnChars: Number(chars[1] ?? chars[2]) };
	return null;
}

/** The history for a follow-up: the last exchanges that `fits` (the URL's length) and the daemon's `limits` allow. */
export function historyFor(
	exchanges: readonly Exchange[],
	fits: (history: HistoryTurn[]) => boolean = () => true,
	limits: HistoryLimits = PROTOCOL_LIMITS,
): HistoryTurn[] {
	const pair = (e: Exchange, answer = e.answer): HistoryTurn[] => [
		{ role: "user", content: cutText(e.q, limits.turnChars) },
		{ role: "assistant", content: cutText(answer, limits.turnChars) },
	];
	const most = Math.min(MAX_EXCHANGES, Math.floor(limits.turns / 2));
	if (most === 0) {
		// A daemon that takes one turn: the last question, what finds a follow-up's notes.
		const last: HistoryTurn[] = exchanges.length ? [pair(exchanges[exchanges.length - 1])[0]] : [];
		return fits(last) ? last : [];
	}
	let kept = exchanges.slice(-most);
	while (kept.length > 1 && !fits(kept.flatMap((e) => pair(e)))) kept = kept.slice(1);
	if (kept.length === 1 && !fits(pair(kept[0]))) {
		// One exchange left, still too long: its answer is cut until it fits.
		const only = kept[0];
		let length = Math.min(only.answer.length, limits.turnChars);
		while (length > 0 && !fits(pair(only, cutText(only.answer, length)))) length = Math.floor(length / 2);
		return length > 0 ? pair(only, cutText(only.answer, length)) : [];
	}
	return kept.flatMap((e) => pair(e));
}

/** The preview's thread: the answered exchanges, the last MAX_EXCHANGES kept. */
export class Thread {
	private items: Exchange[] = [];
	/** The daemon's history limits, as its refusals said them (`lower`). */
	limits: HistoryLimits = PROTOCOL_LIMITS;

	get exchanges(): readonly Exchange[] {
		return this.items;
	}

	add(q: string, answer: string): void {
		this.items = [...this.items, { q, answer }].slice(-MAX_EXCHANGES);
	}

	clear(): void {
		this.items = [];
	}

	history(fits?: (history: HistoryTurn[]) => boolean): HistoryTurn[] {
		return historyFor(this.items, fits, this.limits);
	}

	/** Whether `error`'s detail named lower history limits; the next `history` holds to them. */
	lower(detail: unknown): boolean {
		const lower = lowerLimits(this.limits, detail);
		if (lower) this.limits = lower;
		return lower !== null;
	}
}

/** GET /ask/stream's URL for `q` asked after `history`. */
export function streamUrl(base: string, q: string, history: readonly HistoryTurn[]): string {
	let url = `${base}/ask/stream?q=${encodeURIComponent(q)}`;
	if (history.length > 0) url += `&history=${encodeURIComponent(JSON.stringify(history))}`;
	return url;
}
