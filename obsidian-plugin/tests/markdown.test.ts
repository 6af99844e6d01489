import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { renderMarkdown } from "../src/markdown";
import type { Source } from "../src/protocol";
import { source } from "./helpers";

interface Case {
	name: string;
	text: string;
	html: string;
}
const SHARED = JSON.parse(readFileSync(path.join(__dirname, "..", "..", "shared-protocol", "cases", "markdown.json"), "utf8")) as {
	sources: { slug: string; title: string; url: string }[];
	cases: Case[];
};
const SOURCES = SHARED.sources.map((s) => source(s.slug, 10, { title: s.title, url: s.url }));

function render(text: string, open?: (source: Source) => void): HTMLElement {
	const root = createDiv();
	const bySlug = new Map(SOURCES.map((s) => [s.slug, s]));
	renderMarkdown(root, text, { cite: (slug) => bySlug.get(slug) ?? null, open });
	return root;
}

describe("an answer's Markdown, as the chat page shows it", () => {
	it("renders the shared cases as chat.js does (shared-protocol/cases/markdown.json)", () => {
		expect(SHARED.cases.length).toBeGreaterThanOrEqual(9);
		for (const c of SHARED.cases) {
			expect(render(c.text, () => {}).innerHTML.replace(/ href="[^"]*"/g, ""), c.name).toBe(c.html);
		}
	});

	it("opens a cited note in the vault, not its page on the site", () => {
		const open = vi.fn();
		const link = render("Voir [potager].", open).querySelector<HTMLAnchorElement>("a.grasbot-cite");
		expect(link?.textContent).toBe("Le potager");
		link?.click();
		expect(open).toHaveBeenCalledWith(SOURCES[0]);
	});

	it("shows a citation as plain text where notes cannot be opened", () => {
		const root = render("Voir [potager].");
		expect(root.querySelector("a")).toBeNull();
		expect(root.querySelector("span.grasbot-cite")?.textContent).toBe("Le potager");
	});
});
