/**
 * An answer's Markdown as the visitor's chat page shows it (paragraphs, lists, headings as bold
 * lines, bold, italics, inline code, code blocks, `[slug]` citations), so the preview shows what
 * a visitor will see. The same small reader as `daemon/grasbot/server/static/chat.js`, which has
 * no build step to share a module with: both are tested on `shared-protocol/cases/markdown.json`.
 * Every element is made here with createEl and every text set as text: markup in an answer shows
 * as text, never as HTML.
 */

import type { Source } from "./protocol";

// A fence opens with ``` or ~~~ and at most a language name, and closes with the same alone.
const FENCE = /^\s*(`{3,}|~{3,})\s*[\w+-]*\s*$/;
const ITEM = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;
const HEADING = /^\s*#{1,6}\s+(.*)$/;
// code span | **bold** | __bold__ | *italic* | _italic_ | [slug] (the daemon's citation form)
const INLINE =
	/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)|(?<![\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])|(?<!\w)_(?=[^\s_])([^_]*?[^\s_])_(?!\w)|\[([a-z0-9][a-z0-9-]*)\](?!\()/g;

/** The source a `[slug]` names, and what a click on it does (absent: the citation is plain text). */
export interface Citations {
	cite: (slug: string) => Source | null;
	open?: (source: Source) => void;
}

interface OpenList {
	el: HTMLElement;
	ordered: boolean;
	last: HTMLElement;
}

export function renderMarkdown(parent: HTMLElement, text: string, citations: Citations): void {
	const lines = text.replace(/\r\n?/g, "\n").split("\n");
	let paragraph: HTMLElement | null = null;
	let list: OpenList | null = null;
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i];
		const fence = FENCE.exec(line);
		if (fence) {
			const body: string[] = [];
			for (i++; i < lines.length && lines[i].trim() !== fence[1]; i++) body.push(lines[i]);
			const pre = parent.createEl("pre", { cls: "grasbot-md-code", attr: { tabindex: "0" } }); // it may scroll sideways: the keyboard must reach it
			pre.createEl("code", { text: body.join("\n") });
			paragraph = list = null;
			continue;
		}
		if (!line.trim()) {
			paragraph = list = null;
			continue;
		}
		const item = ITEM.exec(line);
		if (item) {
			const ordered = !item[1];
			if (!list || list.ordered !== ordered) {
				const el: HTMLElement = parent.createEl(ordered ? "ol" : "ul");
				if (ordered && item[2] !== "1") el.setAttribute("start", String(Number(item[2])));
				list = { el, ordered, last: el };
			}
			list.last = list.el.createEl("li");
			renderInline(list.last, item[3], citations);
			paragraph = null;
			continue;
		}
		if (list && /^\s+\S/.test(line)) {
			list.last.appendText(" ");
			renderInline(list.last, line.trim(), citations);
			continue;
		}
		list = null;
		const heading = HEADING.exec(line);
		if (heading) {
			renderInline(parent.createEl("p", { cls: "grasbot-md-heading" }).createEl("strong"), heading[1], citations);
			paragraph = null;
			continue;
		}
		if (paragraph) paragraph.createEl("br");
		else paragraph = parent.createEl("p");
		renderInline(paragraph, line, citations);
	}
}

function renderInline(parent: HTMLElement, text: string, citations: Citations): void {
	let at = 0;
	for (const m of text.matchAll(INLINE)) {
		const start = m.index ?? 0;
		if (start > at) parent.appendText(text.slice(at, start));
		at = start + m[0].length;
		if (m[1]) {
			parent.createEl("code", { text: m[2] });
		} else if (m[3] !== undefined || m[4] !== undefined) {
			renderInline(parent.createEl("strong"), m[3] ?? m[4], citations);
		} else if (m[5] !== undefined || m[6] !== undefined) {
			renderInline(parent.createEl("em"), m[5] ?? m[6], citations);
		} else {
			const source = citations.cite(m[7]);
			if (source) {
				parent.appendText("[");
				citation(parent, source, citations.open);
				parent.appendText("]");
			} else {
				parent.appendText(m[0]);
			}
		}
	}
	if (at < text.length) parent.appendText(text.slice(at));
}

/**
 * A cited source by its title, a link that opens its note when the preview can open notes; the
 * title isolated from the answer around it (dir="auto"), as chat.js does: a right-to-left override
 * it leaves open (U+202E) turned the rest of the answer's line right to left.
 */
function citation(parent: HTMLElement, source: Source, open?: (source: Source) => void): void {
	const name = source.title || source.slug;
	if (!open) {
		parent.createSpan({ cls: "grasbot-cite", text: name, attr: { dir: "auto" } });
		return;
	}
	const link = parent.createEl("a", { cls: "grasbot-cite", text: name, attr: { dir: "auto" }, href: "#" });
	link.addEventListener("click", (event) => {
		event.preventDefault();
		open(source);
	});
}
