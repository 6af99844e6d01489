/**
 * Which of the daemon's suggestions the author sees, how each is described, and the
 * dismissed ones (kept in the plugin's data, per note path).
 */

import type { AliasSuggestion } from "../protocol";
import { normalizeAlias } from "./frontmatter";

/** What each `source` of `suggest_aliases` means, for the hover text. */
export const SOURCE_LABELS: Readonly<Record<string, string>> = {
	link_text: "Link text in other notes",
	visitor_question: "Visitors' questions that led to this note",
	ungrounded_question: "Unanswered visitors' questions nearest to this note",
	answers: "This note's own answers",
};

export function sourceLabel(source: string): string {
	return SOURCE_LABELS[source] ?? `Source: ${source}`;
}

/** The hover text of a suggestion: where it comes from, then its evidence, one per line. */
export function hoverText(suggestion: AliasSuggestion): string {
	const head = `Suggested from ${sourceLabel(suggestion.source).toLowerCase()} (score ${suggestion.score.toFixed(2)})`;
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

/** Dismissed suggestions from data.json, whatever an older or hand-edited file holds. */
export function normalizeDismissed(raw: unknown): DismissedData {
	const out: DismissedData = {};
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return out;
	for (const [path, list] of Object.entries(raw as Record<string, unknown>)) {
		if (!Array.isArray(list)) continue;
		const keys = [...new Set(list.filter((a): a is string => typeof a === "string").map(normalizeAlias))].filter(Boolean);
		if (keys.length > 0) out[path] = keys;
	}
	return out;
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
