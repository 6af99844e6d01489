import { COMBINING } from "./combining";

/** What the daemon's `fold` drops before all else (analysis.py `_DROPPED`): soft hyphens, zero-width and direction marks, ™ ℠. */
const DROPPED = /[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u2120\u2122]+/g;

/**
 * The daemon's slug rule (daemon/grasbot/retrieval/analysis.py `slugify`): invisible characters
 * dropped, casefold, œ/æ spelled out, accents dropped (every combining mark Python gives a class:
 * `COMBINING`), runs of anything but [a-z0-9] become one hyphen. Python's casefold makes U+0345
 * (a Greek iota below) a letter ι, which lower case leaves a mark.
 */
export function slugify(text: string): string {
	return fold(text).replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}

/** The daemon's `fold` (analysis.py), which its slug rule reads. */
function fold(text: string): string {
	return text
		.replace(DROPPED, "")
		.toLowerCase()
		.replace(/\u0345/g, "\u03b9")
		.replace(/ß/g, "ss")
		.replace(/œ/g, "oe")
		.replace(/æ/g, "ae")
		.normalize("NFKD")
		.replace(COMBINING, "");
}

/** A `slug` the daemon ignores (retrieval/vault.py `_NOT_A_SLUG`, read folded): a link to a note or a note's file name
 * (`[[prive/Plan]]`, `prive/Plan.md`), with what a link writes after it too (`Plan.md#budget`, `<Plan.md>`), not a word
 * that goes on (`guide.md-et-plus`); a dot percent-encoded is one (`Plan%2Emd`); Hugo's `ref` and `relref` shortcodes
 * (`{{< ref "Plan" >}}`) and Jekyll's `post_url` and `link` tags (`{% post_url 2024-05-01-plan %}`), which name a note
 * by its file name. */
const NOT_A_SLUG = /\[\[|\]\(|<a\s|\.md(?=[\s#?>)\]|"'`]|$)|\{\{[<%]\s*(?:rel)?ref(?![\w-])|\{%-?\s*(?:post_url|link)(?![\w-])/;

function notASlug(written: string): boolean {
	return NOT_A_SLUG.test(fold(written).replace(/%(?:25)?2e/g, "."));
}

/** A `slug` that holds a folder (retrieval/vault.py `_SLUG_FOLDER`: `labo/plan`, a `/` at its ends aside), an address that may be a private note's: the daemon names the note by its file. */
const SLUG_FOLDER = /[^/\\\s]\s*[/\\]+\s*[^/\\\s]/;

/**
 * The slug the daemon gives a note: its `slug` field (a number or a boolean as YAML wrote it;
 * not a link, a note's file name nor an address with a folder), else its file name; "" when
 * neither has a letter or digit of the Latin alphabet (`pathSlug`).
 */
export function noteSlug(basename: string, frontmatter: Record<string, unknown> | undefined): string {
	const field = frontmatter?.slug;
	const given = typeof field === "boolean" ? (field ? "True" : "False") : field; // Python's str() of YAML's booleans
	const written = typeof given === "string" || typeof given === "number" ? String(given) : "";
	const fromField = notASlug(written) || SLUG_FOLDER.test(written) ? "" : slugify(written);
	return fromField || slugify(basename);
}

/** The daemon's slug of a note whose field and file name give none (`日本語.md`): the first 8 hex digits of its path's SHA-1. */
export async function pathSlug(path: string): Promise<string> {
	const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(path));
	return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"))
		.join("")
		.slice(0, 8);
}
