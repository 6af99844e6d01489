// The alias suggestions in a real CodeMirror EditorView (happy-dom): where the widgets are
// drawn in Source mode and in Live Preview, what their hover says, add and dismiss, and nothing
// drawn when the daemon cannot help.
import { afterEach, describe, expect, it, vi } from "vitest";
import { DaemonNotRunningError, ProtocolError, RPC_NOTE_NOT_FOUND, RPC_UNAUTHORIZED, RpcError } from "../src/errors";
import type { AliasSuggestions } from "../src/protocol";
import { AliasSuggestController } from "../src/aliasSuggest/controller";
import { AliasSuggestHub } from "../src/aliasSuggest/extension";
import { DismissedAliases, dismissedKey } from "../src/aliasSuggest/suggestions";
import { type Harness, mountHarness } from "./browser-aliases/harness";

const NOTE = [
	"---",
	"title: Push swap",
	"aliases:",
	"  - tri de piles",
	"tags: [c, algo]",
	"---",
	"# Push swap",
	"Trier une pile avec une autre.",
	"",
].join("\n");

const RESULT: AliasSuggestions = {
	slug: "push-swap",
	suggestions: [
		{ alias: "projet de tri", source: "link_text", evidence: ["competences/algorithmique.md : [[push-swap|projet de tri]]"], score: 0.82 },
		{ alias: "tri avec deux piles", source: "visitor_question", evidence: ["comment trier avec deux piles ?"], score: 0.64 },
		{ alias: "Tri de piles", source: "answers", evidence: ["c'est quoi le tri de piles ?"], score: 0.5 },
	],
};

let mounted: Harness[] = [];
afterEach(() => {
	for (const h of mounted) h.destroy();
	mounted = [];
	document.body.replaceChildren();
});

function mount(options: Partial<Parameters<typeof mountHarness>[1]> = {}): Harness {
	const parent = document.body.createDiv();
	const h = mountHarness(parent, { path: "projets/push-swap.md", doc: NOTE, suggest: async () => RESULT, ...options });
	mounted.push(h);
	return h;
}

function chips(h: Harness): HTMLElement[] {
	return [...h.view.dom.querySelectorAll<HTMLElement>(".grasbot-alias-suggestion")];
}

const flush = () => new Promise((resolve) => window.setTimeout(resolve, 0));

describe("alias suggestions in the editor", () => {
	it("draws the suggestions after the aliases line of the frontmatter, in order, minus those already there", async () => {
		const h = mount();
		await h.open();
		expect(h.asked).toEqual(["push-swap"]);
		const box = h.view.dom.querySelector<HTMLElement>(".grasbot-alias-suggestions");
		expect(box).not.toBeNull();
		const line = box?.closest(".cm-line");
		expect(line?.textContent?.startsWith("aliases:")).toBe(true);
		// The widget comes after the line's text, and the line is the third of the document.
		const lines = [...h.view.contentDOM.querySelectorAll(".cm-line")];
		expect(lines.indexOf(line as Element)).toBe(2);
		const nodes = [...(line?.childNodes ?? [])];
		const at = nodes.indexOf(box as ChildNode);
		expect(nodes.slice(0, at).map((n) => n.textContent).join("")).toBe("aliases:");
		// Only CodeMirror's cursor placeholder may follow the widget on its line.
		expect(nodes.slice(at + 1).every((n) => n.nodeName === "BR" || n.nodeName === "IMG")).toBe(true);
		// "Tri de piles" is already an alias: not offered.
		expect(chips(h).map((c) => c.querySelector(".grasbot-alias-suggestion-text")?.textContent)).toEqual(["projet de tri", "tri avec deux piles"]);
		// The document itself is untouched by the drawing.
		expect(h.view.state.doc.toString()).toBe(NOTE);
	});

	it("names the source and the evidence on hover, and labels its buttons", async () => {
		const h = mount();
		await h.open();
		const [link, visitor] = chips(h);
		expect(link.title).toContain("textes des liens dans d'autres notes");
		expect(link.title).toContain("[[push-swap|projet de tri]]");
		expect(visitor.title).toContain("questions de visiteurs");
		expect(visitor.dataset.source).toBe("visitor_question");
		expect(link.querySelector(".grasbot-alias-suggestion-add")?.getAttribute("aria-label")).toBe("Ajouter l'alias « projet de tri »");
		expect(link.querySelector(".grasbot-alias-suggestion-dismiss")?.getAttribute("aria-label")).toBe("Écarter la suggestion « projet de tri »");
	});

	it("adds the alias to the document's aliases list on click, and the chip goes", async () => {
		const h = mount();
		await h.open();
		chips(h)[0].querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-add")?.click();
		await flush();
		expect(h.added).toEqual(["projet de tri"]);
		expect(h.view.state.doc.toString()).toBe(NOTE.replace("  - tri de piles\n", "  - tri de piles\n  - projet de tri\n"));
		expect(chips(h).map((c) => c.dataset.alias)).toEqual(["tri avec deux piles"]);
	});

	it("turns a single-string aliases into a list, and creates the key when there is none", async () => {
		const scalar = mount({ doc: "---\naliases: tri de piles\nslug: push-swap\n---\nCorps\n" });
		await scalar.open();
		expect(scalar.view.dom.querySelector(".grasbot-alias-suggestions")?.closest(".cm-line")?.textContent).toContain("aliases: tri de piles");
		chips(scalar)[0].querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-add")?.click();
		await flush();
		expect(scalar.view.state.doc.toString()).toBe("---\naliases:\n  - tri de piles\n  - projet de tri\nslug: push-swap\n---\nCorps\n");

		const missing = mount({ doc: "---\ntitle: Push swap\n---\nCorps\n" });
		await missing.open();
		const box = missing.view.dom.querySelector(".grasbot-alias-suggestions");
		expect(box?.tagName).toBe("DIV"); // a line of its own, above the closing fence
		expect(box?.nextElementSibling?.textContent).toBe("---");
		expect(chips(missing)).toHaveLength(3);
		chips(missing)[1].querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-add")?.click();
		await flush();
		expect(missing.view.state.doc.toString()).toBe("---\ntitle: Push swap\naliases:\n  - tri avec deux piles\n---\nCorps\n");
	});

	it("keeps a dismissed suggestion gone when fed again and after the plugin data is reloaded", async () => {
		const h = mount();
		await h.open();
		chips(h)[0].querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-dismiss")?.click();
		expect(chips(h).map((c) => c.dataset.alias)).toEqual(["tri avec deux piles"]);
		expect(h.view.state.doc.toString()).toBe(NOTE);
		await h.open(); // the note opened again at once, before the dismissal is saved: the daemon still suggests it
		expect(h.asked).toHaveLength(2);
		expect(chips(h).map((c) => c.dataset.alias)).toEqual(["tri avec deux piles"]);
		await vi.waitFor(() => expect(h.saved()).not.toBeNull());
		const saved = h.saved();
		expect((JSON.parse(saved as string) as { dismissedAliases: unknown }).dismissedAliases).toEqual({ "projets/push-swap.md": [await dismissedKey("projet de tri")] });

		h.destroy();
		const again = mount({ savedData: saved });
		await again.open();
		expect(chips(again).map((c) => c.dataset.alias)).toEqual(["tri avec deux piles"]);
		// Dismissed for this note only.
		const other = mount({ path: "projets/autre.md", savedData: saved });
		await other.open();
		expect(chips(other).map((c) => c.dataset.alias)).toContain("projet de tri");
	});

	it("shows nothing for a note the daemon does not know, and clears what was shown", async () => {
		let known = true;
		const h = mount({
			suggest: async () => {
				if (known) return RESULT;
				throw new RpcError("suggest_aliases", RPC_NOTE_NOT_FOUND, "Note not found");
			},
		});
		await h.open();
		expect(chips(h)).toHaveLength(2);
		known = false;
		await h.open();
		expect(chips(h)).toHaveLength(0);
		expect(h.view.dom.querySelector(".grasbot-alias-suggestions")).toBeNull();
	});

	it("shows nothing, and does not throw, when the daemon is down or the token is missing", async () => {
		const down = mount({ suggest: () => Promise.reject(new DaemonNotRunningError("http://127.0.0.1:8765", "ECONNREFUSED")) });
		await expect(down.open()).resolves.toBeUndefined();
		expect(chips(down)).toHaveLength(0);
		expect(down.view.state.doc.toString()).toBe(NOTE);

		const noToken = mount({ token: "" });
		await noToken.open();
		expect(noToken.asked).toEqual([]);
		expect(chips(noToken)).toHaveLength(0);
	});

	it("tells the author once, naming the fix, when the daemon refuses the token set; other failures stay silent", async () => {
		const refused = () => Promise.reject(new RpcError("suggest_aliases", RPC_UNAUTHORIZED, "Unauthorized", "jeton du propriétaire requis"));
		const h = mount({ token: "an-old-token", suggest: refused });
		await h.open();
		await h.open(); // the same refusal again: said once
		expect(chips(h)).toHaveLength(0);
		expect(h.warned).toHaveLength(1);
		expect(h.warned[0]).toContain("Jeton d'accès refusé");
		expect(h.warned[0]).toContain("~/.config/grasbot/token");

		const down = mount({ suggest: () => Promise.reject(new DaemonNotRunningError("http://127.0.0.1:8765", "ECONNREFUSED")) });
		await down.open();
		expect(down.warned).toEqual([]);
	});

	it("tells the author once when the daemon's suggestions are not what this plugin reads (another version)", async () => {
		const unreadable = () => Promise.reject(new ProtocolError("`suggest_aliases.suggestions` devrait être une liste, pas un objet", "suggest_aliases"));
		const h = mount({ suggest: unreadable });
		await h.open();
		await h.open(); // the same again: said once
		expect(chips(h)).toHaveLength(0);
		expect(h.warned).toHaveLength(1);
		expect(h.warned[0]).toContain("pas de suggestions d'alias");
		expect(h.warned[0]).toContain("pas de la même version");
	});

	it("drops an answer that arrives after another note was opened", async () => {
		let release: (r: AliasSuggestions) => void = () => undefined;
		const h = mount({ suggest: () => new Promise<AliasSuggestions>((resolve) => (release = resolve)) });
		const first = h.open();
		await h.controller.refresh(null); // another, non-Markdown view opened meanwhile
		release(RESULT);
		await first;
		expect(chips(h)).toHaveLength(0);
	});

	it("offers nothing while the frontmatter is left open, in either mode: an alias added then would start a second one", async () => {
		const head = "---\ntitle: Push swap\naliases:\n  - tri de piles\n";
		for (const livePreview of [false, true]) {
			const h = mount({ doc: `${head}# Push swap\nTrier une pile.\n`, livePreview });
			await h.open();
			expect(h.view.dom.querySelector(".grasbot-alias-suggestions")).toBeNull();
			// Closed by hand: the chips come.
			h.view.dispatch({ changes: { from: head.length, insert: "---\n" } });
			expect(chips(h).map((c) => c.dataset.alias)).toEqual(["projet de tri", "tri avec deux piles"]);
		}
	});

	it("says the chips are aliases wherever they are away from an `aliases:` line", async () => {
		const label = (h: Harness) => h.view.dom.querySelector(".grasbot-alias-suggestions-label")?.textContent;
		const inline = mount();
		await inline.open();
		expect(label(inline)).toBe("Suggestions :");
		const noKey = mount({ doc: "---\ntitle: Push swap\n---\nCorps\n" });
		await noKey.open();
		expect(label(noKey)).toBe("Alias suggérés :");
		const bare = mount({ doc: "Corps seul\n" });
		await bare.open();
		expect(label(bare)).toBe("Alias suggérés :");
	});

	it("takes a `...` line for no closing fence, as Obsidian does: no chips at the top of a note whose frontmatter is still open", async () => {
		const head = "---\ntitle: Push swap\n...\n";
		for (const livePreview of [false, true]) {
			const h = mount({ doc: `${head}# Push swap\nTrier une pile.\n`, livePreview });
			await h.open();
			// + here would write a frontmatter of its own above the open one, whose lines fall into the body
			expect(h.view.dom.querySelector(".grasbot-alias-suggestions")).toBeNull();
			// Closed by hand with `---`: the chips come, above that fence.
			h.view.dispatch({ changes: { from: head.length, insert: "---\n" } });
			expect(chips(h).map((c) => c.dataset.alias)).toEqual(["projet de tri", "tri avec deux piles", "Tri de piles"]);
		}
	});

	it("follows edits: a suggestion typed in by hand disappears", async () => {
		const h = mount();
		await h.open();
		const at = NOTE.indexOf("tags:");
		h.view.dispatch({ changes: { from: at, insert: "  - Tri avec deux piles\n" } });
		expect(chips(h).map((c) => c.dataset.alias)).toEqual(["projet de tri"]);
	});
});

describe("alias suggestions in Live Preview (frontmatter shown as Properties)", () => {
	function box(h: Harness): HTMLElement | null {
		return h.view.dom.querySelector<HTMLElement>(".grasbot-alias-suggestions");
	}
	const fenceEnd = NOTE.indexOf("---\n# Push swap") + 3;

	it("draws the chips on a line of their own right after the frontmatter, which is hidden", async () => {
		const h = mount({ livePreview: true });
		await h.open();
		const el = box(h);
		expect(el?.tagName).toBe("DIV");
		expect(el?.classList.contains("grasbot-alias-suggestions-after-frontmatter")).toBe(true);
		expect(el?.closest(".cm-line")).toBeNull();
		expect(el?.parentElement).toBe(h.view.contentDOM);
		// The raw YAML lines are not drawn: the Properties stand-in replaces them.
		const lines = [...h.view.contentDOM.querySelectorAll(".cm-line")].map((l) => l.textContent);
		expect(lines).not.toContain("aliases:");
		expect(lines).not.toContain("---");
		// At the end of the closing fence: below the Properties panel, above the note's first line.
		expect(h.view.posAtDOM(el as HTMLElement)).toBe(fenceEnd);
		expect(el?.previousElementSibling?.classList.contains("harness-properties")).toBe(true);
		expect(el?.nextElementSibling?.textContent).toBe("# Push swap");
		expect(el?.querySelector(".grasbot-alias-suggestions-label")?.textContent).toBe("Alias suggérés :");
		expect(chips(h).map((c) => c.dataset.alias)).toEqual(["projet de tri", "tri avec deux piles"]);
		expect(h.view.state.doc.toString()).toBe(NOTE);
	});

	it("adds and dismisses exactly as in Source mode, and stays below the frontmatter", async () => {
		const h = mount({ livePreview: true });
		await h.open();
		chips(h)[0].querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-add")?.click();
		await flush();
		expect(h.added).toEqual(["projet de tri"]);
		const added = NOTE.replace("  - tri de piles\n", "  - tri de piles\n  - projet de tri\n");
		expect(h.view.state.doc.toString()).toBe(added);
		expect(chips(h).map((c) => c.dataset.alias)).toEqual(["tri avec deux piles"]);
		expect(h.view.posAtDOM(box(h) as HTMLElement)).toBe(added.indexOf("---\n# Push swap") + 3);

		chips(h)[0].querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-dismiss")?.click();
		await flush();
		expect(box(h)).toBeNull();
		expect(h.view.state.doc.toString()).toBe(added);
		await vi.waitFor(() => expect(h.saved()).not.toBeNull());
		expect((JSON.parse(h.saved() as string) as { dismissedAliases: unknown }).dismissedAliases).toEqual({
			"projets/push-swap.md": [await dismissedKey("tri avec deux piles")],
		});
	});

	it("puts them below the frontmatter when it has no aliases key, and at the top without frontmatter", async () => {
		const missing = mount({ doc: "---\ntitle: Push swap\n---\nCorps\n", livePreview: true });
		await missing.open();
		expect(missing.view.posAtDOM(box(missing) as HTMLElement)).toBe("---\ntitle: Push swap\n---".length);
		expect(box(missing)?.nextElementSibling?.textContent).toBe("Corps");
		chips(missing)[1].querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-add")?.click();
		await flush();
		expect(missing.view.state.doc.toString()).toBe("---\ntitle: Push swap\naliases:\n  - tri avec deux piles\n---\nCorps\n");

		const bare = mount({ doc: "Corps seul\n", livePreview: true });
		await bare.open();
		expect(box(bare)?.nextElementSibling?.textContent).toBe("Corps seul");
		expect(bare.view.posAtDOM(box(bare) as HTMLElement)).toBe(0);
	});

	it("moves the chips when the editor switches between Source mode and Live Preview", async () => {
		const h = mount();
		await h.open();
		expect(box(h)?.closest(".cm-line")?.textContent?.startsWith("aliases:")).toBe(true);
		h.setLivePreview(true);
		expect(h.view.dom.querySelectorAll(".grasbot-alias-suggestions")).toHaveLength(1);
		expect(box(h)?.closest(".cm-line")).toBeNull();
		expect(h.view.posAtDOM(box(h) as HTMLElement)).toBe(fenceEnd);
		h.setLivePreview(false);
		expect(h.view.dom.querySelectorAll(".grasbot-alias-suggestions")).toHaveLength(1);
		expect(box(h)?.closest(".cm-line")?.textContent?.startsWith("aliases:")).toBe(true);
		expect(chips(h).map((c) => c.dataset.alias)).toEqual(["projet de tri", "tri avec deux piles"]);
	});
});

describe("a dismissal that cannot be saved", () => {
	it("is said, naming the suggestion and that it comes back at the next start, rather than lost quietly (an unhandled rejection)", async () => {
		const data: Record<string, string[]> = {};
		const warned: string[] = [];
		const hub = new AliasSuggestHub({ pathOf: () => null, add: () => undefined, dismiss: () => undefined });
		const controller = new AliasSuggestController({
			hub,
			dismissed: new DismissedAliases(() => data),
			hasToken: () => true,
			suggest: async () => RESULT,
			saveDismissed: () => Promise.reject(new Error("EACCES: permission denied")),
			editFrontMatter: async () => undefined,
			daemonUrl: () => "http://127.0.0.1:8765",
			warn: (message) => warned.push(message),
		});
		await expect(controller.dismiss("projets/push-swap.md", RESULT.suggestions[0])).resolves.toBeUndefined();
		expect(warned).toHaveLength(1);
		expect(warned[0]).toContain("« projet de tri »");
		expect(warned[0]).toContain("EACCES");
		expect(warned[0]).toContain("prochain démarrage");
		// kept for this session, and saved with the next dismissal that can be
		expect(data["projets/push-swap.md"]).toEqual([await dismissedKey("projet de tri")]);
	});
});
