/**
 * The daemon's slug rule (daemon/grasbot/retrieval/analysis.py `slugify`): casefold, œ/æ spelled out,
 * accents dropped, runs of anything but [a-z0-9] become one hyphen.
 */
export function slugify(text: string): string {
	const folded = text
		.toLowerCase()
		.replace(/ß/g, "ss")
		.replace(/œ/g, "oe")
		.replace(/æ/g, "ae")
		.normalize("NFKD")
		.replace(/[\u0300-\u036f]/g, "");
	return folded.replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}

/** The slug the daemon gives a note: its `slug` field, else its file name. */
export function noteSlug(basename: string, frontmatter: Record<string, unknown> | undefined): string {
	const field = frontmatter?.slug;
	const fromField = typeof field === "string" || typeof field === "number" ? slugify(String(field)) : "";
	return fromField || slugify(basename);
}
