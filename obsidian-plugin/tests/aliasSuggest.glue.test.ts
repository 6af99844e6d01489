// The Obsidian glue of the alias suggestions (main.ts), on the stub: file-open and reload ask
// the daemon with the owner token, a real editor registered by the plugin shows the chips,
// add goes through processFrontMatter, failures stay silent, and Obsidian's Live Preview flag
// moves the chips below the frontmatter.
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import type { App, PluginManifest } from "obsidian";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { parse, stringify } from "yaml";
import { dismissedKey } from "../src/aliasSuggest/suggestions";
import GrasbotPreviewPlugin from "../src/main";
import {
	App as StubApp,
	type Plugin as StubPlugin,
	TFile,
	editorInfoField,
	editorLivePreviewField,
	notices,
	setLivePreview,
	setRequestUrlHandler,
} from "./obsidian-stub";

interface Call {
	method: string;
	params: Record<string, unknown> | undefined;
	auth: string | undefined;
}

const SUGGESTIONS = {
	slug: "tri-rapide",
	suggestions: [{ alias: "projet de tri", source: "link_text", evidence: ["a.md : [[push-swap|projet de tri]]"], score: 0.8 }],
};

let calls: Call[] = [];
let views: EditorView[] = [];

function daemon(answer: (method: string) => { result?: unknown; error?: unknown }) {
	setRequestUrlHandler(async (request) => {
		const body = JSON.parse(request.body ?? "{}") as { id: number; method: string; params?: Record<string, unknown> };
		calls.push({ method: body.method, params: body.params, auth: request.headers?.Authorization });
		return { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, ...answer(body.method) }) };
	});
}

const flush = () => new Promise((resolve) => window.setTimeout(resolve, 0));

async function load(data: unknown, frontmatter: Record<string, unknown> = { slug: "Tri rapide" }) {
	const app = new StubApp();
	const frontmatterEdits: Record<string, unknown>[] = [];
	Object.assign(app.metadataCache, { getFileCache: () => ({ frontmatter }) });
	Object.assign(app.vault, { getFileByPath: (path: string) => new TFile(path) });
	Object.assign(app, {
		fileManager: {
			processFrontMatter: async (_file: TFile, fn: (fm: Record<string, unknown>) => void) => {
				const fm: Record<string, unknown> = { aliases: "tri" };
				fn(fm);
				frontmatterEdits.push(fm);
			},
		},
	});
	const plugin = new (GrasbotPreviewPlugin as unknown as new (app: App, manifest: PluginManifest, data: unknown) => GrasbotPreviewPlugin)(
		app as unknown as App,
		{} as PluginManifest,
		data,
	);
	await plugin.onload();
	const stub = plugin as unknown as StubPlugin;
	app.workspace.setLayoutReady();
	return { app, plugin, stub, frontmatterEdits };
}

function editor(stub: StubPlugin, file: TFile, doc: string, livePreview = false): EditorView {
	const fields = [editorInfoField.init(() => ({ file })), editorLivePreviewField.init(() => livePreview)];
	const view = new EditorView({
		state: EditorState.create({ doc, extensions: [stub.editorExtensions as Extension[], fields] }),
		parent: document.body.createDiv(),
	});
	views.push(view);
	return view;
}

beforeEach(() => {
	calls = [];
	notices.length = 0;
});
afterEach(() => {
	for (const v of views) v.destroy();
	views = [];
	document.body.replaceChildren();
});

describe("alias suggestions glue", () => {
	it("registers one editor extension and asks the daemon, with the token, when a note is opened", async () => {
		daemon(() => ({ result: SUGGESTIONS }));
		const { app, stub, frontmatterEdits } = await load({ token: "tok" });
		expect(stub.editorExtensions).toHaveLength(1);
		const file = new TFile("projets/push-swap.md");
		const view = editor(stub, file, "---\nslug: Tri rapide\naliases: tri\n---\n");
		app.workspace.trigger("file-open", file);
		await flush();
		expect(calls).toEqual([{ method: "suggest_aliases", params: { slug: "tri-rapide", limit: 8, path: "projets/push-swap.md" }, auth: "Bearer tok" }]);
		const chip = view.dom.querySelector<HTMLElement>(".grasbot-alias-suggestion");
		expect(chip?.dataset.alias).toBe("projet de tri");
		chip?.querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-add")?.click();
		await flush();
		expect(frontmatterEdits).toEqual([{ aliases: ["tri", "projet de tri"] }]);
		expect(notices).toEqual([]);
	});

	it("does not draw the suggestions of one note in the editor of another", async () => {
		daemon(() => ({ result: SUGGESTIONS }));
		const { app, stub } = await load({ token: "tok" });
		const other = editor(stub, new TFile("autre.md"), "---\naliases: []\n---\n");
		app.workspace.trigger("file-open", new TFile("projets/push-swap.md"));
		await flush();
		expect(other.dom.querySelector(".grasbot-alias-suggestion")).toBeNull();
	});

	it("saves a dismissal in data.json and refreshes after a reload", async () => {
		daemon((method) => ({ result: method === "reload" ? { vault_size: 1, added: 0, changed: 0, removed: 0, errors: [], took_ms: 1 } : SUGGESTIONS }));
		const { app, stub } = await load({ token: "tok" });
		const file = new TFile("projets/push-swap.md");
		app.workspace.activeFile = file;
		const view = editor(stub, file, "---\naliases:\n---\n");
		stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await flush();
		await flush();
		expect(calls.map((c) => c.method)).toEqual(["reload", "suggest_aliases", "health"]);
		view.dom.querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-dismiss")?.click();
		await flush();
		expect(view.dom.querySelector(".grasbot-alias-suggestion")).toBeNull();
		// the suggestion's key, not its words: data.json travels with the vault
		await vi.waitFor(() => expect(stub.saved).toHaveProperty(["dismissedAliases", "projets/push-swap.md"]));
		expect(stub.saved).toMatchObject({ dismissedAliases: { "projets/push-swap.md": [await dismissedKey("projet de tri")] } });
		expect(JSON.stringify(stub.saved)).not.toContain("projet de tri");
		expect(JSON.stringify(stub.saved)).not.toContain("tok\"");
	});

	it("replaces the words an older version saved for a dismissal by their key at load, and the suggestion stays dismissed", async () => {
		daemon(() => ({ result: SUGGESTIONS }));
		const older = { token: "tok", dismissedAliases: { "journal/prive.md": ["projet de tri", "rachat"], "c.md": { aliases: ["x"] } } };
		const { app, stub } = await load(older);
		const saved = JSON.stringify(stub.saved);
		expect(saved).not.toContain("projet de tri");
		expect(saved).not.toContain("rachat");
		expect(stub.saved).toMatchObject({
			dismissedAliases: { "journal/prive.md": [await dismissedKey("projet de tri"), await dismissedKey("rachat")], "c.md": { aliases: ["x"] } },
		});
		const file = new TFile("journal/prive.md");
		const view = editor(stub, file, "---\naliases: []\n---\n");
		app.workspace.trigger("file-open", file);
		await flush();
		expect(calls.map((c) => c.method)).toEqual(["suggest_aliases"]);
		expect(view.dom.querySelector(".grasbot-alias-suggestion")).toBeNull();
	});

	it("stays silent for an unknown note, a daemon that is down, or no token", async () => {
		daemon(() => ({ error: { code: -32003, message: "Note not found" } }));
		const { app, stub } = await load({ token: "tok" });
		const file = new TFile("brouillon.md");
		const view = editor(stub, file, "---\naliases: []\n---\n");
		app.workspace.trigger("file-open", file);
		await flush();
		expect(calls.map((c) => c.method)).toEqual(["suggest_aliases"]);
		setRequestUrlHandler(() => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED")));
		app.workspace.trigger("file-open", file);
		app.workspace.trigger("file-open", null);
		await flush();
		expect(view.dom.querySelector(".grasbot-alias-suggestions")).toBeNull();
		expect(notices).toEqual([]);

		calls = [];
		daemon(() => ({ result: SUGGESTIONS }));
		const noToken = await load({});
		noToken.app.workspace.trigger("file-open", file);
		await flush();
		expect(calls).toEqual([]);
		expect(notices).toEqual([]);
	});

	it("tells the author once, in French, that a daemon older than the plugin does not know the note's path", async () => {
		// GrasBot 3.1's suggest_aliases took slug and limit only: every note's suggestions went, without a word
		daemon(() => ({ error: { code: -32602, message: "Invalid params", data: "1 unknown parameter (expected: limit, slug)" } }));
		const { app, stub } = await load({ token: "tok" });
		const file = new TFile("projets/push-swap.md");
		const view = editor(stub, file, "---\naliases: []\n---\n");
		app.workspace.trigger("file-open", file);
		await flush();
		app.workspace.trigger("file-open", file);
		await flush();
		expect(calls.map((c) => c.method)).toEqual(["suggest_aliases", "suggest_aliases"]);
		expect(view.dom.querySelector(".grasbot-alias-suggestions")).toBeNull();
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain("GrasBot : pas de suggestions d'alias.");
		expect(notices[0]).toContain("ne connaît pas le paramètre `path` de `suggest_aliases` : il est plus ancien que ce plugin.");
	});

	it("follows Obsidian's Live Preview flag: below the frontmatter in Live Preview, on the aliases line in Source mode", async () => {
		daemon(() => ({ result: SUGGESTIONS }));
		const { app, stub } = await load({ token: "tok" });
		const file = new TFile("projets/push-swap.md");
		const doc = "---\nslug: Tri rapide\naliases: tri\n---\nCorps\n";
		const live = editor(stub, file, doc, true);
		const source = editor(stub, file, doc, false);
		app.workspace.trigger("file-open", file);
		await flush();
		const fenceEnd = doc.indexOf("---\nCorps") + 3;
		const liveBox = live.dom.querySelector<HTMLElement>(".grasbot-alias-suggestions");
		expect(liveBox?.closest(".cm-line")).toBeNull();
		expect(live.posAtDOM(liveBox as HTMLElement)).toBe(fenceEnd);
		expect(liveBox?.previousElementSibling?.textContent).toBe("---");
		expect(source.dom.querySelector(".grasbot-alias-suggestions")?.closest(".cm-line")?.textContent).toContain("aliases: tri");
		// Obsidian toggles the mode of an open editor.
		live.dispatch({ effects: setLivePreview.of(false) });
		expect(live.dom.querySelector(".grasbot-alias-suggestions")?.closest(".cm-line")?.textContent).toContain("aliases: tri");
		source.dispatch({ effects: setLivePreview.of(true) });
		expect(source.posAtDOM(source.dom.querySelector(".grasbot-alias-suggestions") as HTMLElement)).toBe(fenceEnd);
		expect(calls).toHaveLength(1);
	});
});

/**
 * Obsidian's `processFrontMatter` as its API documents it, on notes held as text: the
 * frontmatter's YAML parsed into an object (Obsidian's parser is the `yaml` package's: it throws
 * a YAMLParseError), `edit` called with it, the object written back as YAML (a frontmatter made
 * for a note without one). A YAML it cannot parse throws before anything is written.
 */
function processFrontMatter(notes: Map<string, string>) {
	return async (file: TFile, edit: (frontmatter: Record<string, unknown>) => void) => {
		const text = notes.get(file.path) ?? "";
		const frontmatter = /^---\n([\s\S]*?\n)?---[ \t]*(?:\n|$)/.exec(text);
		const parsed: unknown = parse(frontmatter?.[1] ?? "");
		const object = (parsed ?? {}) as Record<string, unknown>;
		edit(object);
		notes.set(file.path, `---\n${stringify(object)}---\n${text.slice(frontmatter?.[0].length ?? 0)}`);
	};
}

describe("accepting an alias suggestion, through processFrontMatter", () => {
	async function accept(before: string) {
		daemon(() => ({ result: SUGGESTIONS }));
		const { app, stub } = await load({ token: "tok" });
		const file = new TFile("projets/push-swap.md");
		const notes = new Map([[file.path, before]]);
		Object.assign(app, { fileManager: { processFrontMatter: processFrontMatter(notes) } });
		const view = editor(stub, file, before);
		app.workspace.trigger("file-open", file);
		await flush();
		view.dom.querySelector<HTMLButtonElement>(".grasbot-alias-suggestion-add")?.click();
		await flush();
		const after = notes.get(file.path) ?? "";
		// Obsidian shows the note as written now
		view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: after } });
		return { after, chips: view.dom.querySelectorAll(".grasbot-alias-suggestion").length };
	}

	it("adds it to the note in every frontmatter shape, the other properties and the text kept, and its chip goes", async () => {
		const added = "---\nslug: Tri rapide\naliases:\n  - tri\n  - projet de tri\n---\nCorps\n";
		expect(await accept("---\nslug: Tri rapide\naliases:\n  - tri\n---\nCorps\n")).toEqual({ after: added, chips: 0 });
		expect(await accept("---\nslug: Tri rapide\naliases: tri\n---\nCorps\n")).toEqual({ after: added, chips: 0 });
		expect(await accept("---\nslug: Tri rapide\n---\nCorps\n")).toEqual({ after: "---\nslug: Tri rapide\naliases:\n  - projet de tri\n---\nCorps\n", chips: 0 });
		expect(await accept("Corps\n")).toEqual({ after: "---\naliases:\n  - projet de tri\n---\nCorps\n", chips: 0 });
		expect(notices).toEqual([]);
	});

	it("says in French that the note's properties cannot be read when their YAML is invalid, and loses nothing: the note as it was, the chip still there", async () => {
		const before = "---\nslug: Tri rapide\naliases: tri\ntitre: Tri : rapide: oui\n---\nCorps\n";
		expect(await accept(before)).toEqual({ after: before, chips: 1 });
		expect(notices).toEqual([
			"Impossible d'ajouter l'alias « projet de tri » : les propriétés de la note (son en-tête YAML, entre les lignes `---` du début) ne sont pas du YAML valide. La note n'a pas été modifiée : corrigez ses propriétés (le mode Source les montre telles qu'écrites), puis ajoutez l'alias à nouveau.",
		]);
	});
});
