/**
 * « Tester cette note »: asks each question of the note's `answers` field as a visitor would and
 * reports where the note ranks. A note visitors cannot see is reported as such, with why,
 * instead of as "absent" everywhere.
 */

import { NOTE_TEST } from "./messages";
import type { Source } from "./protocol";
import { noteSlug } from "./slug";

export interface NoteUnderTest {
	/** Vault-relative path, as Obsidian's TFile.path. */
	path: string;
	/** File name without extension. */
	basename: string;
	frontmatter: Record<string, unknown> | undefined;
}

export type QuestionOutcome =
	| { question: string; status: "first"; score: number }
	| { question: string; status: "lower"; rank: number; score: number; beatenBy: { slug: string; title: string; score: number } }
	| { question: string; status: "absent"; beatenBy: { slug: string; title: string; score: number } | null };

export type NoteTestReport =
	| { kind: "private"; slug: string; reason: string }
	| { kind: "no-questions"; slug: string }
	| { kind: "tested"; slug: string; outcomes: QuestionOutcome[]; visibilityHint: string | null };

/** Searches as a visitor and returns the ranked sources. */
export type VisitorSearch = (question: string) => Promise<Source[]>;

export interface NoteTestOptions {
	/**
	 * Whether the daemon treats a note without `visibility` as public (`grasbot serve
	 * --default-visibility public`). Unknown (undefined) means: search and find out.
	 */
	defaultPublic?: boolean;
}

/** The `answers` field as the daemon reads it: a list of strings, or one string. */
export function questionsOf(frontmatter: Record<string, unknown> | undefined): string[] {
	const raw = frontmatter?.answers;
	const items = Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw];
	return items
		.filter((item): item is string | number => typeof item === "string" || typeof item === "number")
		.map((item) => String(item).trim())
		.filter((item) => item.length > 0);
}

/** Whether `publish` (Obsidian Publish) or `published` (Jekyll) keeps a note private, as the daemon reads it (retrieval/vault.py `_says_no`):
 * every value but a yes (`true`, a number other than 0, `yes`, `oui`, `public`…) or a blank one. */
export function publishSaysNo(value: unknown): boolean {
	if (value === undefined || value === null) return false;
	if (typeof value === "boolean") return !value;
	if (typeof value === "number") return value === 0 || Number.isNaN(value);
	if (typeof value === "string") return !["true", "yes", "on", "1", "oui", "vrai", "public", ""].includes(value.trim().toLowerCase());
	return true;
}

/** Whether `published` holds a date (`2024-05-01`), the day a post came out in the themes that
 * name it so (Astro's Fuwari…), as the daemon reads it (retrieval/vault.py `_is_date`): it publishes the note. */
export function isDate(value: unknown): boolean {
	return value instanceof Date || (typeof value === "string" && /^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.+\-Z]*)?$/.test(value.trim()));
}

/** Whether `draft` marks the note a draft, as the daemon reads it (retrieval/vault.py `_draft`):
 * true for a yes (`true`, a number other than 0, `yes`, `oui`…), false for a no (`false`, `0`,
 * `non`…) or a blank one, null for anything else, which keeps the note private too. */
export function draftSays(value: unknown): boolean | null {
	if (value === undefined || value === null) return false;
	if (typeof value === "boolean") return value;
	if (typeof value === "number") return Number.isNaN(value) ? null : value !== 0;
	if (typeof value !== "string") return null;
	const said = value.trim().toLowerCase();
	if (["true", "yes", "on", "1", "oui", "vrai"].includes(said)) return true;
	return ["false", "no", "off", "0", "non", "faux", ""].includes(said) ? false : null;
}

/** The fields named one of `names` in any case (`Publish:`, `DRAFT:`), in the note's order, as the daemon reads them. */
function fieldsNamed(frontmatter: Record<string, unknown> | undefined, ...names: string[]): [string, unknown][] {
	return Object.entries(frontmatter ?? {}).filter(([key]) => names.includes(key.trim().toLowerCase()));
}

function shownValue(value: unknown): string {
	return typeof value === "string" ? value : JSON.stringify(value);
}

/** The keys whose no keeps a note private (retrieval/vault.py `_PUBLISH_KEYS`): Obsidian Publish's, Jekyll's, Digital Garden's. */
export const PUBLISH_KEYS = ["publish", "published", "dg-publish"] as const;
/** The keys whose yes keeps a note private, read as `draft` (retrieval/vault.py `_HIDING_KEYS`). */
export const HIDING_KEYS = ["draft", "private", "hidden"] as const;

/** Why visitors cannot see the note, or null when they can (or it is up to the daemon). */
export function privateReason(frontmatter: Record<string, unknown> | undefined, defaultPublic?: boolean): string | null {
	const publish = fieldsNamed(frontmatter, ...PUBLISH_KEYS).find(
		([key, value]) => publishSaysNo(value) && !(key.trim().toLowerCase() === "published" && isDate(value)),
	);
	if (publish) return NOTE_TEST.publishNo(publish[0], shownValue(publish[1]));
	const draft = fieldsNamed(frontmatter, ...HIDING_KEYS).find(([, value]) => draftSays(value) !== false);
	if (draft) {
		const [key, value] = draft;
		return draftSays(value) ? NOTE_TEST.draftYes(key, shownValue(value)) : NOTE_TEST.draftUnclear(key, shownValue(value));
	}
	const visibility = frontmatter?.visibility;
	if (visibility === undefined || visibility === null) {
		return defaultPublic === false ? NOTE_TEST.noVisibilityPrivate : null;
	}
	const shown = typeof visibility === "string" ? visibility : JSON.stringify(visibility);
	if (shown.trim().toLowerCase() === "public") return null;
	return NOTE_TEST.notPublic(shown);
}

export async function testNote(note: NoteUnderTest, search: VisitorSearch, options: NoteTestOptions = {}): Promise<NoteTestReport> {
	const slug = noteSlug(note.basename, note.frontmatter);
	const reason = privateReason(note.frontmatter, options.defaultPublic);
	if (reason) return { kind: "private", slug, reason };
	const questions = questionsOf(note.frontmatter);
	if (questions.length === 0) return { kind: "no-questions", slug };

	const outcomes: QuestionOutcome[] = [];
	for (const question of questions) {
		const sources = await search(question);
		// by path first: two notes may share a slug (a folder's `index.md` each), and the other
		// one first is not this one first. The daemon's vault may be a folder above Obsidian's
		// (its paths then end with the note's); the slug only when no path says
		const byPath = sources.findIndex((s) => s.path === note.path || s.path.endsWith(`/${note.path}`));
		const index = byPath >= 0 ? byPath : sources.findIndex((s) => s.slug === slug);
		const top = sources[0];
		const best = top ? { slug: top.slug, title: top.title, score: top.score } : null;
		if (index === 0) outcomes.push({ question, status: "first", score: sources[0].score });
		else if (index > 0 && best) {
			outcomes.push({ question, status: "lower", rank: index + 1, score: sources[index].score, beatenBy: best });
		} else outcomes.push({ question, status: "absent", beatenBy: best });
	}
	const neverFound = outcomes.every((o) => o.status === "absent");
	const noVisibility = note.frontmatter?.visibility === undefined || note.frontmatter?.visibility === null;
	const visibilityHint = neverFound && noVisibility ? NOTE_TEST.noVisibilityHint : null;
	return { kind: "tested", slug, outcomes, visibilityHint };
}
