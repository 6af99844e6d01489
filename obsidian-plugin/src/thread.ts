/**
 * The preview's short conversation, without Obsidian: which exchanges a follow-up is sent
 * with. The rules are the chat page's (daemon/grasbot/server/static/chat.js `historyFor`): the
 * daemon takes at most 4 exchanges (8 turns) of at most 2,000 characters a turn, and the
 * question and history travel in the query string of GET /ask/stream, whose request line the
 * daemon (aiohttp: 8,190 bytes) and nginx (8 KiB) bound. Oldest exchanges go first. Both
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

/** The history for a follow-up: the last exchanges that `fits` (the URL's length) allows. */
export function historyFor(exchanges: readonly Exchange[], fits: (history: HistoryTurn[]) => boolean = () => true): HistoryTurn[] {
	const pair = (e: Exchange, answer = e.answer): HistoryTurn[] => [
		{ role: "user", content: cutText(e.q, MAX_TURN_CHARS) },
		{ role: "assistant", content: cutText(answer, MAX_TURN_CHARS) },
	];
	let kept = exchanges.slice(-MAX_EXCHANGES);
	while (kept.length > 1 && !fits(kept.flatMap((e) => pair(e)))) kept = kept.slice(1);
	if (kept.length === 1 && !fits(pair(kept[0]))) {
		// One exchange left, still too long: its answer is cut until it fits.
		const only = kept[0];
		let length = Math.min(only.answer.length, MAX_TURN_CHARS);
		while (length > 0 && !fits(pair(only, cutText(only.answer, length)))) length = Math.floor(length / 2);
		return length > 0 ? pair(only, cutText(only.answer, length)) : [];
	}
	return kept.flatMap((e) => pair(e));
}

/** The preview's thread: the answered exchanges, the last MAX_EXCHANGES kept. */
export class Thread {
	private items: Exchange[] = [];

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
		return historyFor(this.items, fits);
	}
}

/** GET /ask/stream's URL for `q` asked after `history`. */
export function streamUrl(base: string, q: string, history: readonly HistoryTurn[]): string {
	let url = `${base}/ask/stream?q=${encodeURIComponent(q)}`;
	if (history.length > 0) url += `&history=${encodeURIComponent(JSON.stringify(history))}`;
	return url;
}
