/**
 * Which of the daemon's suggestions the author sees, how each is described, and the
 * dismissed ones (kept in the plugin's data, per note path).
 */

import { ALIASES, UNREAD_DISMISSED } from "../messages";
import type { AliasSuggestion } from "../protocol";
import { normalizeAlias } from "./frontmatter";

/** What a `source` of `suggest_aliases` means, for the hover text. */
export function sourceLabel(source: string): string {
	return ALIASES.sources[source] ?? ALIASES.unknownSource(source);
}

/** The hover text of a suggestion: where it comes from, then its evidence, one per line. */
export function hoverText(suggestion: AliasSuggestion): string {
	const head = ALIASES.hover(sourceLabel(suggestion.source).toLowerCase(), suggestion.score.toFixed(2));
	return [head, ...suggestion.evidence.map((e) => `• ${e}`)].join("\n");
}

/**
 * The suggestions to draw: not dismissed, not already in the note's aliases (the document
 * may be ahead of the daemon's copy), each name once, in the daemon's order.
 */
export function visibleSuggestions(
	suggestions: readonly AliasSuggestion[],
	present: readonly string[],
	dismissed: ReadonlySet<string>,
): AliasSuggestion[] {
	const seen = new Set(present.map(normalizeAlias));
	const shown: AliasSuggestion[] = [];
	for (const suggestion of suggestions) {
		const key = normalizeAlias(suggestion.alias);
		if (!key || seen.has(key) || dismissed.has(key)) continue;
		seen.add(key);
		shown.push(suggestion);
	}
	return shown;
}

/**
 * Dismissed suggestions: note path → the key of each alias dismissed (`dismissedKey`), as saved
 * in data.json. Versions up to 3.2.0 saved the normalized aliases themselves, which `hideWords`
 * turns into keys at load.
 */
export type DismissedData = Record<string, string[]>;

/**
 * What data.json keeps of a dismissed alias: a digest of its normalized form, not its words.
 * data.json sits in the vault's `.obsidian` folder and goes wherever the vault goes (a sync
 * service, a git remote, a backup, a file pasted in a bug report), and a suggestion's words may
 * be a visitor's question (the daemon's question log stays on the daemon's machine) or a private
 * note's link text. The digest tells a dismissed suggestion when the daemon offers it again, and
 * nothing else: no one reads the words back from it (one who guesses them can check the guess).
 * Lower-case hex after `sha256 `, a form `normalizeAlias` leaves as it is: an older version reads
 * it as one more alias, never offered, and saves it back unchanged.
 */
export async function dismissedKey(alias: string): Promise<string> {
	const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(normalizeAlias(alias)));
	const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
	return `${KEY_PREFIX}${hex.slice(0, 32)}`;
}

const KEY_PREFIX = "sha256 ";
const KEY = /^sha256 [0-9a-f]{32}$/;

/** Whether a dismissal as data.json holds it is a key (`dismissedKey`), not an older version's words. */
function isDismissedKey(value: string): boolean {
	return KEY.test(value);
}

/** A note's dismissed aliases as written: a list, or one alias alone; null when it is neither. */
function readAliases(value: unknown): string[] | null {
	const items = Array.isArray(value) ? value : typeof value === "string" || typeof value === "number" ? [value] : null;
	if (items === null) return null;
	const texts = items.filter((a) => typeof a === "string" || (typeof a === "number" && Number.isFinite(a))).map(String);
	return [...new Set(texts.map(normalizeAlias))].filter(Boolean);
}

/** A plain object of note paths, as data.json writes a map; not a list, a text or null. */
function isMap(raw: unknown): raw is Record<string, unknown> {
	return typeof raw === "object" && raw !== null && !Array.isArray(raw);
}

/** Dismissed suggestions from data.json: what can be read of it (`unreadDismissed` keeps the rest). */
export function normalizeDismissed(raw: unknown): DismissedData {
	const out: DismissedData = {};
	if (!isMap(raw)) return out;
	for (const [path, value] of Object.entries(raw)) {
		const keys = readAliases(value);
		if (keys !== null && keys.length > 0) out[path] = keys;
	}
	return out;
}

/**
 * What data.json's `dismissedAliases` holds that cannot be read (written by hand, or by a
 * newer plugin): saved again as written, never dropped, so the author loses no dismissal.
 */
export interface UnreadDismissed {
	/** The whole value, when it is no map of note paths (a list, a text); undefined when it is one. */
	whole?: unknown;
	/** The notes whose value is neither a list of aliases nor one alias, as written. */
	entries: Record<string, unknown>;
}

/** The key an unreadable whole `dismissedAliases` moves to, as written, once a dismissal must be saved in its place. */
export const UNREAD_DISMISSED_KEY = "dismissedAliasesUnread";

/** What `normalizeDismissed` could not read; null when it read everything. */
export function unreadDismissed(raw: unknown): UnreadDismissed | null {
	if (raw === undefined || raw === null) return null;
	if (!isMap(raw)) return { whole: raw, entries: {} };
	const entries = Object.fromEntries(Object.entries(raw).filter(([, value]) => readAliases(value) === null));
	return Object.keys(entries).length > 0 ? { entries } : null;
}

/**
 * data.json's dismissal keys to save: the notes it could not read as written beside the
 * dismissals read or made since (a note dismissed again takes the new list); a whole value that
 * is no map stays as written until a dismissal needs its place, then moves to `UNREAD_DISMISSED_KEY`.
 */
export function dismissedToSave(dismissed: DismissedData, unread: UnreadDismissed | null): Record<string, unknown> {
	if (unread === null) return { dismissedAliases: dismissed };
	if ("whole" in unread) {
		return Object.keys(dismissed).length === 0 ? { dismissedAliases: unread.whole } : { dismissedAliases: dismissed, [UNREAD_DISMISSED_KEY]: unread.whole };
	}
	return { dismissedAliases: { ...unread.entries, ...dismissed } };
}

/**
 * A renamed note keeps its dismissals this version cannot read too (the daemon, and a newer
 * plugin, name it by its new path): left under the old path, they named a note that is gone.
 * Returns whether they moved (and so need saving).
 */
export function renameUnreadDismissed(unread: UnreadDismissed | null, oldPath: string, newPath: string): boolean {
	if (unread === null || "whole" in unread || !(oldPath in unread.entries) || oldPath === newPath) return false;
	const { [oldPath]: written, ...others } = unread.entries;
	unread.entries = { ...others, [newPath]: written };
	return true;
}

/** Why the author's dismissals were not all read, in French, for the notice at load. */
export function unreadDismissedReason(unread: UnreadDismissed): string {
	if ("whole" in unread) {
		const kind = typeof unread.whole;
		const kinds = UNREAD_DISMISSED.kinds;
		const what = Array.isArray(unread.whole) ? kinds.list : kind === "string" ? kinds.text : kind === "number" ? kinds.number : kind === "boolean" ? kinds.boolean : kinds.other;
		return UNREAD_DISMISSED.whole(what, UNREAD_DISMISSED_KEY);
	}
	return UNREAD_DISMISSED.entries(Object.keys(unread.entries));
}

/**
 * The dismissed list, edited in place in the settings object that gets saved (read through a
 * getter: the settings object is replaced when settings change).
 */
export class DismissedAliases {
	/** This session's dismissals by name (note path → normalized aliases), in memory only: one
	 * applies at once, before its key is computed and saved. */
	private readonly session = new Map<string, Set<string>>();

	constructor(private readonly source: () => DismissedData) {}

	private get data(): DismissedData {
		return this.source();
	}

	/** Which of `aliases` are dismissed for the note at `path`, normalized (for the editor, never saved). */
	async dismissedAmong(path: string, aliases: readonly string[]): Promise<Set<string>> {
		const saved = new Set(this.data[path] ?? []);
		const session = this.session.get(path) ?? new Set<string>();
		const dismissed = new Set<string>();
		if (saved.size === 0 && session.size === 0) return dismissed;
		for (const alias of aliases) {
			const name = normalizeAlias(alias);
			// an older version's words too, until `hideWords` has replaced them
			if (name && (session.has(name) || saved.has(name) || saved.has(await dismissedKey(name)))) dismissed.add(name);
		}
		return dismissed;
	}

	async has(path: string, alias: string): Promise<boolean> {
		return (await this.dismissedAmong(path, [alias])).size > 0;
	}

	/** Returns whether the list changed (and so needs saving). */
	async add(path: string, alias: string): Promise<boolean> {
		const name = normalizeAlias(alias);
		const session = this.session.get(path) ?? new Set<string>();
		if (!name || session.has(name)) return false;
		session.add(name);
		this.session.set(path, session);
		const key = await dismissedKey(name);
		const saved = this.data[path] ?? [];
		if (saved.includes(key) || saved.includes(name)) return false;
		this.data[path] = [...saved, key];
		return true;
	}

	/**
	 * Replaces the aliases an older version saved as words by their keys: the words leave data.json
	 * at the next save, and each dismissal still applies. Returns whether any was replaced.
	 */
	async hideWords(): Promise<boolean> {
		let replaced = false;
		for (const [path, saved] of Object.entries(this.data)) {
			if (saved.every(isDismissedKey)) continue;
			this.data[path] = [...new Set(await Promise.all(saved.map(async (value) => (isDismissedKey(value) ? value : dismissedKey(value)))))];
			replaced = true;
		}
		return replaced;
	}

	/** A renamed note keeps its dismissed suggestions. Returns whether the list changed. */
	rename(oldPath: string, newPath: string): boolean {
		const names = this.session.get(oldPath);
		if (names && oldPath !== newPath) {
			this.session.delete(oldPath);
			this.session.set(newPath, new Set([...(this.session.get(newPath) ?? []), ...names]));
		}
		const list = this.data[oldPath];
		if (!list || oldPath === newPath) return false;
		delete this.data[oldPath];
		this.data[newPath] = [...new Set([...(this.data[newPath] ?? []), ...list])];
		return true;
	}
}
