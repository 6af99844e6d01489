/**
 * Where opening a source lands: the subpath of the passage's own section. No Obsidian here:
 * main.ts gives Obsidian's `stripHeadingForLink`.
 *
 * A single heading goes to the first of that name in the note; a subpath of several
 * (`#Windows#Installation`, Obsidian's link to a subheading) goes to the one under the others.
 * The passage's headings, outermost first, are its section's whole chain of parents, each level
 * the note has: it tells « ## Windows / ### Installation » from « ## Linux / ### Installation »
 * without counting on how Obsidian reads a path that skips one. Each is written as Obsidian
 * links a heading: a subpath splits at every `#`, so « C# et .NET » as written would be two.
 */

/** `#Windows#Installation` for a passage under those headings; "" for none. A heading with
 * nothing a link can hold (`#`, `::`) is left out: the path then skips that level. */
export function headingSubpath(heading: readonly string[], stripHeadingForLink: (heading: string) => string): string {
	return heading
		.map(stripHeadingForLink)
		.filter((part) => part !== "")
		.map((part) => `#${part}`)
		.join("");
}
