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

/** Dismissed suggestions: note path → normalized aliases, as saved in data.json. */
export type DismissedData = Record<string, string[]>;

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
	constructor(private readonly source: () => DismissedData) {}

	private get data(): DismissedData {
		return this.source();
	}

	forPath(path: string): Set<string> {
		return new Set(this.data[path] ?? []);
	}

	has(path: string, alias: string): boolean {
		return (this.data[path] ?? []).includes(normalizeAlias(alias));
	}

	/** Returns whether the list changed (and so needs saving). */
	add(path: string, alias: string): boolean {
		const key = normalizeAlias(alias);
		if (!key || this.has(path, alias)) return false;
		this.data[path] = [...(this.data[path] ?? []), key];
		return true;
	}

	/** A renamed note keeps its dismissed suggestions. Returns whether the list changed. */
	rename(oldPath: string, newPath: string): boolean {
		const list = this.data[oldPath];
		if (!list || oldPath === newPath) return false;
		delete this.data[oldPath];
		this.data[newPath] = [...new Set([...(this.data[newPath] ?? []), ...list])];
		return true;
	}
}
