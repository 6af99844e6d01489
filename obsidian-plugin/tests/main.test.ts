// The Obsidian glue in main.ts, run against the stub of tests/obsidian-stub.ts.
import { type App, type PluginManifest, SecretComponent, type Setting, type SettingDefinitionRender, type SettingGroup } from "obsidian";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dismissedKey } from "../src/aliasSuggest/suggestions";
import GrasbotPreviewPlugin from "../src/main";
import { NOTE_TEST } from "../src/messages";
import { validateDebounce } from "../src/settings";
import { PreviewView, VIEW_TYPE_PREVIEW } from "../src/view";
import type { GrasbotSettingTab } from "../src/settingsTab";
import { App as StubApp, type Plugin as StubPlugin, type SecretComponent as StubSecretComponent, TFile, WorkspaceLeaf, notices, setRequestUrlHandler, stripHeading } from "./obsidian-stub";

interface Call {
	url: string;
	method: string;
	auth: string | undefined;
}

let calls: Call[] = [];

function daemon(result: (method: string) => unknown) {
	setRequestUrlHandler(async (request) => {
		const body = JSON.parse(request.body ?? "{}") as { id: number; method: string };
		calls.push({ url: request.url, method: body.method, auth: request.headers?.Authorization });
		return { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, result: result(body.method) }) };
	});
}

const reloadResult = { vault_size: 42, added: 0, changed: 1, removed: 0, errors: [], took_ms: 5 };

const PULL = "Ollama at http://127.0.0.1:11434 (OLLAMA_HOST) does not have model 'qwen3:8b': model \"qwen3:8b\" not found. Run `ollama pull qwen3:8b` on that machine.";

/** The owner's health: the one model host up, or down for want of the model. */
function healthResult(hostDown: boolean) {
	const host = { url: "http://127.0.0.1:11434", state: hostDown ? "down" : "up", slots: 2, in_use: 0, ...(hostDown ? { error: PULL } : {}) };
	return {
		status: "ok",
		vault_size: 42,
		model: "qwen3:8b",
		llm_reachable: true,
		semantic: { backend: "off", ready: false },
		generation: { hosts: [host], queued: 0, queue_limit: 32, max_wait: 20, owner_in_use: 0, reused: { kept: 0, hits: 0, shared: 0 } },
		question_log: { state: "on" },
		version: "3.2.0",
		caller: "owner",
	};
}

async function load(data: unknown, keychain: Record<string, string> = {}) {
	const app = new StubApp();
	for (const [name, secret] of Object.entries(keychain)) app.secretStorage.setSecret(name, secret);
	const plugin = new (GrasbotPreviewPlugin as unknown as new (app: App, manifest: PluginManifest, data: unknown) => GrasbotPreviewPlugin)(
		app as unknown as App,
		{} as PluginManifest,
		data,
	);
	await plugin.onload();
	return { app, plugin, stub: plugin as unknown as StubPlugin };
}

/** `times` saves of the note at `path`, each followed by `waitMs` (the reload's debounce in these tests). */
async function save(app: StubApp, path: string, times = 1, waitMs = 500): Promise<void> {
	for (let i = 0; i < times; i++) {
		app.vault.trigger("modify", new TFile(path));
		await vi.advanceTimersByTimeAsync(waitMs);
	}
}

beforeEach(() => {
	calls = [];
	notices.length = 0;
	vi.useFakeTimers();
});
afterEach(() => {
	vi.useRealTimers();
});

describe("plugin glue", () => {
	it("registers the view, the commands, the ribbon button and the settings tab", async () => {
		const { stub } = await load(null);
		expect(Object.keys(stub.views)).toEqual([VIEW_TYPE_PREVIEW]);
		expect(stub.commands.map((c) => [c.id, c.name])).toEqual([
			["reload-vault", "Recharger le coffre dans le démon"],
			["open-preview", "Ouvrir l'aperçu visiteur"],
			["test-note", "Tester cette note"],
		]);
		expect(stub.ribbonIcons.map((r) => r.title)).toEqual(["Recharger le coffre dans le démon GrasBot"]);
		expect(stub.settingTabs).toHaveLength(1);
	});

	it("listens to vault changes only once the layout is ready, through registerEvent", async () => {
		const { app, stub } = await load({ reloadOnSave: true });
		expect(app.vault.count("modify")).toBe(0);
		app.workspace.setLayoutReady();
		expect(app.vault.count("modify")).toBe(1);
		expect(stub.events.map((e) => e.name).sort()).toEqual(["create", "delete", "file-open", "modify", "rename", "rename"]);
	});

	it("turns several saves into one reload with the owner token, quietly when all went well", async () => {
		daemon(() => reloadResult);
		const { app } = await load({ reloadOnSave: true, debounceMs: 500, token: "tok" });
		app.workspace.setLayoutReady();
		const file = new TFile("projets/push-swap.md");
		for (let i = 0; i < 3; i++) {
			app.vault.trigger("modify", file);
			await vi.advanceTimersByTimeAsync(200);
		}
		app.vault.trigger("modify", new TFile("images/photo.png"));
		await vi.advanceTimersByTimeAsync(500);
		// the health after it, to say what on the daemon degrades visitors' answers
		expect(calls).toEqual([
			{ url: "http://127.0.0.1:8765/rpc", method: "reload", auth: "Bearer tok" },
			{ url: "http://127.0.0.1:8765/rpc", method: "health", auth: "Bearer tok" },
		]);
		expect(notices).toEqual([]);
	});

	it("reloads when a note is renamed or moved to a name the daemon does not read: it went on serving the note", async () => {
		daemon(() => reloadResult);
		const { app } = await load({ reloadOnSave: true, debounceMs: 500, token: "tok" });
		app.workspace.setLayoutReady();
		app.vault.trigger("rename", new TFile("prive/plan.txt"), "prive/plan.md");
		await vi.advanceTimersByTimeAsync(500);
		expect(calls.map((c) => c.method)).toEqual(["reload", "health"]);
		calls = [];
		app.vault.trigger("rename", new TFile("images/photo2.png"), "images/photo.png");
		await vi.advanceTimersByTimeAsync(500);
		expect(calls).toEqual([]);
	});

	it("on save, says once that the daemon is down, then once that it is back", async () => {
		setRequestUrlHandler(() => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED")));
		const { app } = await load({ reloadOnSave: true, debounceMs: 500 });
		app.workspace.setLayoutReady();
		await save(app, "a.md", 2);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain("grasbot serve");
		daemon(() => reloadResult);
		await save(app, "a.md", 2);
		expect(notices).toHaveLength(2);
		expect(notices[1]).toContain("42 notes");
	});

	it("on save, names a note that fails once, not at every save while it still fails", async () => {
		const failing = { ...reloadResult, errors: [{ path: "casse.md", message: "propriétés YAML invalides à la ligne 2 : un « : » inattendu" }] };
		let result: typeof reloadResult | typeof failing = failing;
		daemon(() => result);
		const { app } = await load({ reloadOnSave: true, debounceMs: 500 });
		app.workspace.setLayoutReady();
		await save(app, "autre.md", 3);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain("casse.md");
		result = { ...failing, errors: [...failing.errors, { path: "deux.md", message: "pas en UTF-8 (octet 0) : enregistrez à nouveau le fichier en UTF-8" }] };
		await save(app, "deux.md");
		expect(notices).toHaveLength(2); // another note fails: said
		result = reloadResult;
		await save(app, "casse.md");
		result = failing;
		await save(app, "casse.md");
		expect(notices).toHaveLength(3); // fixed, then broken again: said again
	});

	it("on save, says once that a peer daemon did not reload, refusing the owner token after a rotation", async () => {
		const peer = { url: "http://127.0.0.1:8766", ok: true, vault_size: 42 };
		const behind = { url: "http://127.0.0.1:8766", ok: false, error: "HTTP 401 : jeton du propriétaire requis" };
		let result: Record<string, unknown> = { ...reloadResult, peers: [behind] };
		daemon((method) => (method === "health" ? healthResult(false) : result));
		const { app } = await load({ reloadOnSave: true, debounceMs: 500, token: "tok" });
		app.workspace.setLayoutReady();
		await save(app, "a.md", 3);
		expect(notices).toHaveLength(1); // said once while it lasts
		expect(notices[0]).toContain("• http://127.0.0.1:8766 : HTTP 401 : jeton du propriétaire requis");
		expect(notices[0]).toContain("redémarrez-le pour qu'il lise le jeton de ce démon");
		result = { ...reloadResult, peers: [peer] };
		await save(app, "a.md");
		expect(notices).toHaveLength(1); // all reloaded: quiet
		result = { ...reloadResult, peers: [behind] };
		await save(app, "a.md");
		expect(notices).toHaveLength(2);
	});

	it("on save, says once that visitors get extracts because the model host lacks the model, and again after it was fixed", async () => {
		let hostDown = true;
		daemon((method) => (method === "health" ? healthResult(hostDown) : reloadResult));
		const { app } = await load({ reloadOnSave: true, debounceMs: 500, token: "tok" });
		app.workspace.setLayoutReady();
		await save(app, "a.md");
		expect(notices).toEqual([
			`Les visiteurs reçoivent des extraits, pas des réponses rédigées. Aucun hôte de modèle ne peut répondre avec qwen3:8b. ${PULL}`,
		]);
		await save(app, "a.md", 3);
		expect(notices).toHaveLength(1); // said once while it lasts
		hostDown = false;
		await save(app, "a.md");
		expect(notices).toHaveLength(1); // all is well: nothing
		hostDown = true;
		await save(app, "a.md");
		expect(notices).toHaveLength(2);
		expect(notices[1]).toContain("ollama pull qwen3:8b");
	});

	it("the reload command and the connection check say the daemon's troubles every time, and the open preview shows them", async () => {
		daemon((method) => (method === "health" ? healthResult(true) : reloadResult));
		const { app, plugin, stub } = await load({ token: "tok" });
		const leaf = new WorkspaceLeaf();
		const view = stub.views[VIEW_TYPE_PREVIEW](leaf) as PreviewView;
		await view.onOpen();
		leaf.view = view;
		Object.assign(app.workspace, { getLeavesOfType: (type: string) => (type === VIEW_TYPE_PREVIEW ? [leaf] : []) });
		await vi.advanceTimersByTimeAsync(0);
		expect(view.contentEl.querySelector(".grasbot-health .grasbot-state-title")?.textContent).toBe("Les visiteurs reçoivent des extraits, pas des réponses rédigées");
		for (let i = 0; i < 2; i++) {
			stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
			await vi.advanceTimersByTimeAsync(0);
		}
		expect(notices).toHaveLength(4);
		expect(notices[0]).toContain("42 notes");
		expect(notices[1]).toContain("ollama pull qwen3:8b");
		expect(notices[3]).toBe(notices[1]);
		await plugin.checkConnection();
		expect(notices[4]).toContain("Démon GrasBot à http://127.0.0.1:8765 : en marche");
		expect(notices[4]).toContain("ollama pull qwen3:8b");
		daemon((method) => (method === "health" ? healthResult(false) : reloadResult));
		stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await vi.advanceTimersByTimeAsync(0);
		expect(notices).toHaveLength(6); // the reload's own, nothing else
		expect(view.contentEl.querySelector(".grasbot-health")?.children).toHaveLength(0);
	});

	it("asks for the open note's alias suggestions as soon as the access token or the daemon URL is set, not at the next note opened", async () => {
		daemon((method) => (method === "suggest_aliases" ? { slug: "push-swap", suggestions: [] } : healthResult(false)));
		const { app, plugin } = await load({}, { "grasbot-owner-token": "tok", other: "tok2" });
		app.workspace.activeFile = new TFile("projets/push-swap.md");
		app.workspace.setLayoutReady();
		await vi.advanceTimersByTimeAsync(0);
		const asked = () => calls.filter((c) => c.method === "suggest_aliases").map((c) => `${c.url} ${c.auth}`);
		expect(asked()).toEqual([]); // no token yet: suggestions are off
		await plugin.updateSettings({ tokenSecret: "grasbot-owner-token" });
		await vi.advanceTimersByTimeAsync(0);
		expect(asked()).toEqual(["http://127.0.0.1:8765/rpc Bearer tok"]);
		await plugin.updateSettings({ daemonUrl: "http://127.0.0.1:8766" });
		await vi.advanceTimersByTimeAsync(0);
		expect(asked()).toEqual(["http://127.0.0.1:8765/rpc Bearer tok", "http://127.0.0.1:8766/rpc Bearer tok"]);
		// another setting: nothing asked again
		await plugin.updateSettings({ debounceMs: 1000 });
		await vi.advanceTimersByTimeAsync(0);
		expect(asked()).toHaveLength(2);
	});

	it("does not reload on save when the setting is off", async () => {
		daemon(() => reloadResult);
		const { app } = await load({ reloadOnSave: false });
		app.workspace.setLayoutReady();
		app.vault.trigger("modify", new TFile("a.md"));
		await vi.advanceTimersByTimeAsync(60_000);
		expect(calls).toEqual([]);
	});

	it("the reload command shows the vault size and the notes that failed", async () => {
		daemon(() => ({ ...reloadResult, errors: [{ path: "brouillons/idées.md", message: "frontmatter YAML illisible" }] }));
		const { stub } = await load({ token: "tok" });
		stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await vi.advanceTimersByTimeAsync(0);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain("42 notes");
		expect(notices[0]).toContain("brouillons/idées.md : frontmatter YAML illisible");
	});

	it("says in French, whole, why the daemon's reload failed, as the daemon says it", async () => {
		setRequestUrlHandler(async (request) => {
			const body = JSON.parse(request.body ?? "{}") as { id: number };
			const error = { code: -32004, message: "Vault reload failed", data: "dossier du coffre introuvable : /coffre (réglez --vault ou VAULT_DIR)" };
			return { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, error }) };
		});
		const { stub } = await load({ token: "tok" });
		stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await vi.advanceTimersByTimeAsync(0);
		expect(notices).toEqual([
			"Erreur du démon GrasBot. `reload` : le rechargement du coffre a échoué — dossier du coffre introuvable : /coffre (réglez --vault ou VAULT_DIR) (code -32004)",
		]);
	});

	it("says how to start the daemon when it is not running", async () => {
		setRequestUrlHandler(() => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED")));
		const { stub } = await load(null);
		stub.ribbonIcons[0].callback();
		await vi.advanceTimersByTimeAsync(0);
		expect(notices[0]).toContain("Le démon GrasBot ne tourne pas");
		expect(notices[0]).toContain("grasbot serve");
	});

	it("tells a wrong access token from a missing one, and says where the daemon's token is", async () => {
		setRequestUrlHandler(async (request) => {
			const body = JSON.parse(request.body ?? "{}") as { id: number };
			const error = { code: -32001, message: "Unauthorized", data: "jeton du propriétaire requis" };
			return { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, error }) };
		});
		const wrong = await load({ token: "not-the-owner-token" });
		wrong.stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await vi.advanceTimersByTimeAsync(0);
		expect(notices[0]).toContain("Jeton d'accès refusé");
		expect(notices[0]).not.toContain("required");
		expect(notices[0]).toContain("~/.config/grasbot/token");
		const missing = await load(null);
		missing.stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await vi.advanceTimersByTimeAsync(0);
		expect(notices[1]).toContain("Jeton d'accès requis");
		expect(notices[1]).toContain("~/.config/grasbot/token");
	});

	it("tests no note with a token the daemon takes for a visitor's: its questions would be logged as visitors'", async () => {
		daemon((method) => (method === "health" ? { ...healthResult(false), caller: "token_refused", question_log: undefined } : { results: [], grounded: false }));
		const { app, stub } = await load({ token: "an-old-token" });
		const leaf = Object.assign(new WorkspaceLeaf(), { loadIfDeferred: async () => undefined });
		Object.assign(app.workspace, { ensureSideLeaf: async () => leaf });
		Object.assign(app.metadataCache, { getFileCache: () => ({ frontmatter: { visibility: "public", answers: ["c'est quoi A ?"] } }) });
		app.workspace.activeFile = new TFile("notes/a.md");
		stub.commands.find((c) => c.id === "test-note")?.checkCallback?.(false);
		await vi.advanceTimersByTimeAsync(0);
		expect(calls.map((c) => [c.method, c.auth])).toEqual([["health", "Bearer an-old-token"]]);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatch(/^Jeton d'accès refusé par le démon\. Le jeton d'accès réglé dans le plugin n'est pas celui du démon GrasBot/);
		expect(notices[0]).toContain("~/.config/grasbot/token");
	});

	it("the connection check says, as a note test does, that the daemon received no token when a proxy strips it", async () => {
		daemon((method) => (method === "health" ? { ...healthResult(false), caller: "visitor", question_log: undefined } : { results: [], grounded: false }));
		const { app, plugin, stub } = await load({ token: "tok" });
		const leaf = Object.assign(new WorkspaceLeaf(), { loadIfDeferred: async () => undefined });
		Object.assign(app.workspace, { ensureSideLeaf: async () => leaf });
		app.workspace.activeFile = new TFile("notes/a.md");
		stub.commands.find((c) => c.id === "test-note")?.checkCallback?.(false);
		await vi.advanceTimersByTimeAsync(0);
		const refusal = notices[0];
		expect(refusal).toMatch(/^Jeton d'accès non reçu par le démon\. Le plugin envoie un jeton d'accès, mais le démon GrasBot \(http:\/\/127\.0\.0\.1:8765\) n'en a reçu aucun/);
		await plugin.checkConnection();
		expect(notices[1].split("\n")).toEqual(["Démon GrasBot à http://127.0.0.1:8765 : en marche, 42 notes publiques, modèle qwen3:8b, version 3.2.0.", refusal]);
		// without a token, a visitor's view is what was asked for
		notices.length = 0;
		const bare = await load(null);
		await bare.plugin.checkConnection();
		expect(notices).toEqual(["Démon GrasBot à http://127.0.0.1:8765 : en marche, 42 notes publiques, modèle qwen3:8b, version 3.2.0."]);
	});

	it("offers « Tester cette note » only on a Markdown note", async () => {
		const { app, stub } = await load(null);
		const command = stub.commands.find((c) => c.id === "test-note");
		expect(command?.checkCallback?.(true)).toBe(false);
		app.workspace.activeFile = new TFile("notes/a.md");
		expect(command?.checkCallback?.(true)).toBe(true);
	});

	it("keeps the question typed in the panel across a restart of Obsidian or of the plugin (an update), through the view's state", async () => {
		daemon(() => healthResult(false));
		const { app, stub } = await load({});
		const saveLayout = vi.fn();
		Object.assign(app.workspace, { requestSaveLayout: saveLayout });
		const view = stub.views[VIEW_TYPE_PREVIEW](new WorkspaceLeaf()) as PreviewView;
		await view.onOpen();
		const typed = view.contentEl.querySelector("textarea") as HTMLTextAreaElement;
		typed.value = "et avec quel modèle ?";
		typed.dispatchEvent(new Event("input"));
		expect(saveLayout).toHaveBeenCalled(); // Obsidian then reads the state below
		expect(view.getState()).toMatchObject({ question: "et avec quel modèle ?" });
		await view.onClose();
		// restored: the state given before the view opens, or after, as Obsidian may
		for (const order of ["before", "after"] as const) {
			const again = stub.views[VIEW_TYPE_PREVIEW](new WorkspaceLeaf()) as PreviewView;
			if (order === "before") await again.setState(view.getState(), { history: false });
			await again.onOpen();
			if (order === "after") await again.setState(view.getState(), { history: false });
			expect((again.contentEl.querySelector("textarea") as HTMLTextAreaElement).value, order).toBe("et avec quel modèle ?");
		}
		// a state of another shape restores nothing, and breaks nothing
		const odd = stub.views[VIEW_TYPE_PREVIEW](new WorkspaceLeaf()) as PreviewView;
		await odd.setState({ question: 42 }, { history: false });
		await odd.onOpen();
		expect((odd.contentEl.querySelector("textarea") as HTMLTextAreaElement).value).toBe("");
	});

	it("shows the note test in the panel even when its side leaf comes back deferred", async () => {
		daemon((method) =>
			method === "health"
				? healthResult(false)
				: { results: [{ slug: "a", title: "A", type: null, score: 9, reasons: [], url: null, path: "notes/a.md", passages: [] }], grounded: true },
		);
		const { app, stub } = await load({ token: "tok" });
		Object.assign(app.metadataCache, { getFileCache: () => ({ frontmatter: { visibility: "public", answers: ["c'est quoi A ?"] } }) });
		// Obsidian 1.7.2+: a background leaf holds a placeholder until it is loaded.
		const leaf = new WorkspaceLeaf();
		leaf.view = { getViewType: () => "deferred" };
		const opened: { panel: HTMLElement | null } = { panel: null };
		Object.assign(leaf, {
			loadIfDeferred: async () => {
				if (!(leaf.view instanceof PreviewView)) {
					const view = stub.views[VIEW_TYPE_PREVIEW](leaf) as PreviewView;
					await view.onOpen();
					opened.panel = view.contentEl;
					leaf.view = view;
				}
			},
		});
		Object.assign(app.workspace, { ensureSideLeaf: async () => leaf });
		app.workspace.activeFile = new TFile("notes/a.md");
		stub.commands.find((c) => c.id === "test-note")?.checkCallback?.(false);
		await vi.advanceTimersByTimeAsync(0);
		expect(notices).toEqual(["Cette note arrive en tête pour 1 question sur 1."]);
		expect(opened.panel).not.toBeNull();
		expect(opened.panel?.querySelector(".grasbot-note-test")?.textContent).toContain("c'est quoi A ?");
	});

	it("tests a note without `visibility` as the owner's health says such notes are: private without asking, public by asking", async () => {
		const found = { results: [{ slug: "a", title: "A", type: null, score: 9, reasons: [], url: null, path: "notes/a.md", passages: [] }], grounded: true };
		for (const [visibility, methods, notice] of [
			["private", ["health"], NOTE_TEST.private],
			["public", ["health", "search"], "Cette note arrive en tête pour 1 question sur 1."],
			[undefined, ["health", "search"], "Cette note arrive en tête pour 1 question sur 1."], // an older daemon does not say: asked
		] as const) {
			daemon((method) => (method === "health" ? { ...healthResult(false), default_visibility: visibility } : found));
			calls = [];
			notices.length = 0;
			const { app, stub } = await load({ token: "tok" });
			const leaf = Object.assign(new WorkspaceLeaf(), { loadIfDeferred: async () => undefined });
			Object.assign(app.workspace, { ensureSideLeaf: async () => leaf });
			Object.assign(app.metadataCache, { getFileCache: () => ({ frontmatter: { answers: ["c'est quoi A ?"] } }) });
			app.workspace.activeFile = new TFile("notes/a.md");
			stub.commands.find((c) => c.id === "test-note")?.checkCallback?.(false);
			await vi.advanceTimersByTimeAsync(0);
			expect(calls.map((c) => c.method), visibility).toEqual(methods);
			expect(notices, visibility).toEqual([notice]);
		}
	});

	it("tests a scheduled note's dates in the zone the owner's health says the daemon reads them in", async () => {
		const found = { results: [{ slug: "a", title: "A", type: null, score: 9, reasons: [], url: null, path: "notes/a.md", passages: [] }], grounded: true };
		vi.setSystemTime(Date.UTC(2026, 11, 7, 12)); // 13:00 in Paris
		/** What « Tester cette note » asks the daemon for a note published at 12:30, the owner's health given `zone`. */
		const asked = async (zone: string | undefined): Promise<string[]> => {
			daemon((method) => (method === "health" ? { ...healthResult(false), default_visibility: "private", time_zone: zone } : found));
			calls = [];
			const { app, stub } = await load({ token: "tok" });
			const leaf = Object.assign(new WorkspaceLeaf(), { loadIfDeferred: async () => undefined });
			Object.assign(app.workspace, { ensureSideLeaf: async () => leaf });
			const frontmatter = { visibility: "public", publishDate: "2026-12-07T12:30:00", answers: ["c'est quoi A ?"] };
			Object.assign(app.metadataCache, { getFileCache: () => ({ frontmatter }) });
			app.workspace.activeFile = new TFile("notes/a.md");
			stub.commands.find((c) => c.id === "test-note")?.checkCallback?.(false);
			await vi.advanceTimersByTimeAsync(0);
			return calls.map((c) => c.method);
		};
		expect(await asked("Europe/Paris")).toEqual(["health", "search"]); // 12:30 in Paris is past: the note is public, its questions asked
		expect(await asked("UTC")).toEqual(["health"]); // the daemon's default: 12:30 UTC is to come, the note private
		// a 3.5 daemon says its default visibility and not its zone: it read the dates where it
		// ran, which the test's machine zone stands for (12:30 in Paris, 11:30 UTC: past at noon
		// UTC, the questions asked, where UTC would hold the note back)
		const before = process.env.TZ;
		process.env.TZ = "Europe/Paris";
		try {
			expect(await asked(undefined)).toEqual(["health", "search"]);
		} finally {
			if (before === undefined) delete process.env.TZ;
			else process.env.TZ = before;
		}
	});

	it("opens a source's note, and says a note gone since the daemon's last reload instead of creating it empty", async () => {
		const { app, plugin } = await load(null);
		const opened: string[] = [];
		const files = ["notes/a.md", "notes/Issue #12.md"];
		// Obsidian's openLinkText reads a link text (parseLinktext: the path ends at the first #)
		// and creates the note it does not find
		Object.assign(app.workspace, {
			openLinkText: async (text: string) => {
				const [path, ...subpath] = text.split("#");
				opened.push(files.includes(path) ? [path, ...subpath].join("#") : `created ${path}.md`);
			},
			getLeaf: () => ({
				openFile: async (file: TFile, state?: { eState?: { subpath?: string } }) => void opened.push(file.path + (state?.eState?.subpath ?? "")),
			}),
		});
		Object.assign(app.vault, { getFileByPath: (path: string) => (files.includes(path) ? new TFile(path) : null) });
		const open = (path: string, heading?: string[]) =>
			(plugin as unknown as { openSource(s: unknown, p?: unknown): Promise<void> }).openSource({ path }, heading ? { heading } : undefined);
		await open("notes/a.md", ["Intro", "Détails"]);
		await open("notes/renommee.md");
		await open("notes/Issue #12.md"); // an imported file: its # is no heading
		expect(opened).toEqual(["notes/a.md#Intro#Détails", "notes/Issue #12.md"]);
		expect(notices).toEqual([
			"« notes/renommee.md » n'est plus dans le coffre : l'index du démon est plus ancien que le coffre. Rechargez-le (commande « Recharger le coffre dans le démon »), puis posez la question à nouveau.",
		]);
	});

	it("opens a source's note at the passage's own section, as Obsidian resolves a subpath: under its parents, a # inside a heading kept", async () => {
		const { app, plugin } = await load(null);
		const headings = [
			{ heading: "Linux", level: 2 },
			{ heading: "Installation", level: 3 },
			{ heading: "Windows", level: 2 },
			{ heading: "Installation", level: 3 },
			{ heading: "Langages", level: 2 },
			{ heading: "C", level: 3 },
			{ heading: "C# et .NET", level: 3 },
			{ heading: "Issue #12 | suivi", level: 3 },
		];
		// Obsidian's resolveSubpath: the subpath split at each #, each part the first heading
		// after the previous part's, at a deeper level, compared by stripHeading; what is not
		// found opens the note at its top
		const resolve = (subpath: string): string => {
			const parts = subpath.split("#").filter(Boolean);
			let depth = 0;
			let level = 0;
			for (const [i, h] of headings.entries()) {
				if (h.level > level && stripHeading(h.heading).toLowerCase() === stripHeading(parts[depth] ?? "").toLowerCase()) {
					depth++;
					level = h.level;
					if (depth === parts.length) return `${h.heading} (${i + 1})`;
				}
			}
			return "(top)";
		};
		const opened: string[] = [];
		Object.assign(app.workspace, {
			getLeaf: () => ({
				openFile: async (file: TFile, state?: { eState?: { subpath?: string } }) =>
					void opened.push(`${file.path} › ${resolve(state?.eState?.subpath ?? "")}`),
			}),
		});
		Object.assign(app.vault, { getFileByPath: (path: string) => new TFile(path) });
		const open = (heading: string[]) => (plugin as unknown as { openSource(s: unknown, p?: unknown): Promise<void> }).openSource({ path: "dev.md" }, { heading });
		await open(["Windows", "Installation"]);
		await open(["Linux", "Installation"]);
		await open(["Langages", "C# et .NET"]);
		await open(["Langages", "Issue #12 | suivi"]);
		await open(["Langages", "C"]);
		expect(opened).toEqual([
			"dev.md › Installation (4)",
			"dev.md › Installation (2)",
			"dev.md › C# et .NET (7)",
			"dev.md › Issue #12 | suivi (8)",
			"dev.md › C (6)",
		]);
	});

	it("keeps the access token out of data.json, in Obsidian's keychain, and moves an older data.json's token there", async () => {
		daemon(() => reloadResult);
		const { app, plugin, stub } = await load({ token: "owner-token-from-3.1", reloadOnSave: true });
		expect(JSON.stringify(stub.saved)).not.toContain("owner-token-from-3.1");
		expect(stub.saved).toMatchObject({ reloadOnSave: true });
		const secret = plugin.settings.tokenSecret;
		expect(app.secretStorage.getSecret(secret)).toBe("owner-token-from-3.1");
		stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await vi.advanceTimersByTimeAsync(0);
		expect(calls.map((c) => c.auth)).toEqual(["Bearer owner-token-from-3.1", "Bearer owner-token-from-3.1"]);
		// Another secret picked in the settings: its value is sent, never written to data.json.
		app.secretStorage.setSecret("grasbot-laptop", "new-owner-token");
		await plugin.updateSettings({ tokenSecret: "grasbot-laptop" });
		stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await vi.advanceTimersByTimeAsync(0);
		expect(calls.map((c) => c.auth)).toEqual(["Bearer owner-token-from-3.1", "Bearer owner-token-from-3.1", "Bearer new-owner-token", "Bearer new-owner-token"]);
		expect(JSON.stringify(stub.saved)).not.toContain("owner-token");
		expect(stub.saved).toMatchObject({ tokenSecret: "grasbot-laptop" });
	});

	it("loses no token when an older data.json's and the keychain's differ: the daemon's owner token is used, the other kept, and the author told", async () => {
		// the daemon's token was rotated and pasted under 3.1 on a synced machine: data.json's is the good one
		let owner = "newer-token";
		setRequestUrlHandler(async (request) => {
			const body = JSON.parse(request.body ?? "{}") as { id: number; method: string };
			calls.push({ url: request.url, method: body.method, auth: request.headers?.Authorization });
			const caller = request.headers?.Authorization === `Bearer ${owner}` ? "owner" : "token_refused";
			return { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, result: { ...healthResult(false), caller } }) };
		});
		const first = await load({ token: "newer-token" }, { "grasbot-owner-token": "older-token" });
		await vi.advanceTimersByTimeAsync(0);
		expect(first.app.secretStorage.getSecret("grasbot-owner-token")).toBe("older-token");
		expect(first.app.secretStorage.getSecret("grasbot-owner-token-3-1")).toBe("newer-token");
		expect(first.plugin.settings.tokenSecret).toBe("grasbot-owner-token-3-1");
		expect(first.plugin.token()).toBe("newer-token");
		expect(JSON.stringify(first.stub.saved)).not.toContain("token\"");
		expect(first.stub.saved).toMatchObject({ tokenSecret: "grasbot-owner-token-3-1" });
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain("il est rangé dans le secret « grasbot-owner-token-3-1 »");
		expect(notices[0]).toContain("le réglage « Jeton d'accès » désigne désormais « grasbot-owner-token-3-1 »");
		// the keychain's is the daemon's: kept in use, data.json's kept aside and named
		owner = "older-token";
		const second = await load({ token: "newer-token" }, { "grasbot-owner-token": "older-token" });
		await vi.advanceTimersByTimeAsync(0);
		expect(second.plugin.token()).toBe("older-token");
		expect(second.app.secretStorage.getSecret("grasbot-owner-token-3-1")).toBe("newer-token");
		expect(second.stub.saved).toMatchObject({ tokenSecret: "grasbot-owner-token" });
		expect(notices[1]).toContain("reconnaît celui de « grasbot-owner-token », qui reste utilisé");
		// the daemon down: the keychain's in use, the other kept, the author told where
		setRequestUrlHandler(() => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED")));
		const third = await load({ token: "newer-token" }, { "grasbot-owner-token": "older-token", "grasbot-owner-token-3-1": "another" });
		await vi.advanceTimersByTimeAsync(0);
		expect(third.plugin.token()).toBe("older-token");
		expect(third.app.secretStorage.getSecret("grasbot-owner-token-3-1")).toBe("another");
		expect(third.app.secretStorage.getSecret("grasbot-owner-token-3-1-2")).toBe("newer-token");
		expect(notices[2]).toContain("choisissez « grasbot-owner-token-3-1-2 » dans le réglage « Jeton d'accès »");
		expect(JSON.stringify(third.stub.saved)).not.toContain("newer-token");
	});

	it("moves an older data.json's token silently when the keychain holds the same one", async () => {
		const { app, plugin, stub } = await load({ token: "same-token" }, { "grasbot-owner-token": "same-token" });
		await vi.advanceTimersByTimeAsync(0);
		expect(plugin.token()).toBe("same-token");
		expect(app.secretStorage.listSecrets()).toEqual(["grasbot-owner-token"]);
		expect(JSON.stringify(stub.saved)).not.toContain("same-token");
		expect(notices).toEqual([]);
		expect(calls).toEqual([]);
	});

	it("asks for the access token with Obsidian's secret picker, not a text field saved in data.json", async () => {
		const { plugin, stub } = await load(null);
		const tab = stub.settingTabs[0] as GrasbotSettingTab;
		const item = tab.getSettingDefinitions().find((d) => "name" in d && d.name === "Jeton d'accès") as SettingDefinitionRender;
		expect("control" in item).toBe(false);
		let picker: SecretComponent | null = null;
		const setting = { addComponent: (cb: (el: HTMLElement) => SecretComponent) => (picker = cb(createDiv())) };
		item.render(setting as unknown as Setting, {} as SettingGroup);
		expect(picker).toBeInstanceOf(SecretComponent);
		await (picker as unknown as StubSecretComponent).choose("grasbot-owner-token");
		expect(plugin.settings.tokenSecret).toBe("grasbot-owner-token");
		expect(stub.saved).toMatchObject({ tokenSecret: "grasbot-owner-token" });
	});

	it("keeps what a newer plugin wrote in data.json on another machine sharing the vault, and saves it again", async () => {
		const newer = { daemonUrl: "http://127.0.0.1:9000", tokenSecret: "grasbot-laptop", previewLanguage: "en", history: { keep: 3 } };
		const { plugin, stub } = await load({ ...newer, token: "" });
		expect(plugin.settings).toMatchObject({ daemonUrl: "http://127.0.0.1:9000", tokenSecret: "grasbot-laptop" });
		await plugin.updateSettings({ reloadOnSave: true });
		expect(stub.saved).toEqual({ ...newer, reloadOnSave: true, debounceMs: 2000, dismissedAliases: {} });
	});

	it("keeps dismissed suggestions data.json holds in a shape it cannot read, says so in French, and saves them again as written", async () => {
		const written = { "projets/a.md": ["tri"], "projets/b.md": { alias: "rachat" } };
		const { plugin, stub } = await load({ reloadOnSave: true, dismissedAliases: written });
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain('• Suggestions d\'alias écartées (dismissedAliases : {"projets/b.md":{"alias":"rachat"}}) : la note « projets/b.md » n\'a ni liste d\'alias ni alias');
		await plugin.updateSettings({ debounceMs: 1000 });
		// what it reads, as the key of each alias; what it cannot, as written
		expect(stub.saved).toMatchObject({ dismissedAliases: { "projets/a.md": [await dismissedKey("tri")], "projets/b.md": { alias: "rachat" } } });
		// a list where the map goes: kept as written
		const list = ["tri", "rachat"];
		const second = await load({ dismissedAliases: list });
		await second.plugin.updateSettings({ debounceMs: 1000 });
		expect(second.stub.saved).toMatchObject({ dismissedAliases: list });
	});

	it("carries a renamed note's dismissed suggestions it cannot read to its new path, as written", async () => {
		const written = { "projets/a.md": ["tri"], "projets/b.md": { alias: "rachat" } };
		const { app, stub } = await load({ dismissedAliases: written });
		app.workspace.setLayoutReady();
		app.vault.trigger("rename", new TFile("archives/b.md"), "projets/b.md");
		await vi.advanceTimersByTimeAsync(0);
		expect(stub.saved).toMatchObject({ dismissedAliases: { "projets/a.md": [await dismissedKey("tri")], "archives/b.md": { alias: "rachat" } } });
		expect(Object.keys((stub.saved as { dismissedAliases: object }).dismissedAliases)).not.toContain("projets/b.md");
	});

	it("shows in the settings tab a Reload delay data.json holds that it refuses, as written, and says it is refused and what applies", async () => {
		const { plugin, stub } = await load({ reloadOnSave: true, debounceMs: -5 });
		const tab = stub.settingTabs[0] as GrasbotSettingTab;
		// what the tab draws (Obsidian's settingItems), not the definitions read again
		const delay = () => tab.settingItems.find((d) => "name" in d && d.name === "Délai de rechargement") as { desc: string; control: { validate: (v: unknown) => unknown } };
		expect(plugin.settings.debounceMs).toBe(2000);
		expect(tab.getControlValue("debounceMs")).toBe(-5);
		expect(delay().desc).toContain("Le data.json du plugin contient -5, que cette version refuse : 2000 ms s'appliquent tant qu'aucun délai n'est réglé.");
		expect(delay().control.validate(tab.getControlValue("debounceMs"))).toBe("Saisissez un délai entre 250 et 60000 ms.");
		await tab.setControlValue("debounceMs", 1500);
		expect(tab.getControlValue("debounceMs")).toBe(1500);
		expect(delay().desc).not.toContain("refuse");
		// a secret picked in the « Jeton d'accès » picker: its note goes too
		const { stub: tokenStub } = await load({ tokenSecret: 5 });
		const tokenTab = tokenStub.settingTabs[0] as GrasbotSettingTab;
		const token = () => tokenTab.settingItems.find((d) => "name" in d && d.name === "Jeton d'accès") as SettingDefinitionRender & { desc: string };
		expect(token().desc).toContain("Le data.json du plugin contient 5, que cette version refuse");
		let picker: SecretComponent | null = null;
		const setting = { addComponent: (cb: (el: HTMLElement) => SecretComponent) => (picker = cb(createDiv())) };
		token().render(setting as unknown as Setting, {} as SettingGroup);
		await (picker as unknown as StubSecretComponent).choose("grasbot-owner-token");
		expect(token().desc).not.toContain("refuse");
		// a text where a number goes: shown as written, refused by the control's check too
		const other = await load({ debounceMs: "3000" });
		const otherTab = other.stub.settingTabs[0] as GrasbotSettingTab;
		expect(otherTab.getControlValue("debounceMs")).toBe("3000");
		expect(validateDebounce(otherTab.getControlValue("debounceMs"))).toBeDefined();
	});

	it("keeps settings in data.json, normalized", async () => {
		const { plugin, stub } = await load({ daemonUrl: "http://localhost:8765", debounceMs: 5 });
		expect(plugin.settings).toMatchObject({ daemonUrl: "http://localhost:8765", debounceMs: 2000 });
		await plugin.updateSettings({ daemonUrl: "http://localhost:9000/", reloadOnSave: true, debounceMs: 1000 });
		expect(stub.saved).toMatchObject({ daemonUrl: "http://localhost:9000", reloadOnSave: true, debounceMs: 1000 });
	});

	it("keeps a hand-edited setting it refuses in data.json as written, says which and why, and sends the token nowhere until the URL is fixed", async () => {
		daemon((method) => (method === "reload" ? reloadResult : healthResult(false)));
		const written = { daemonUrl: "http://127.0.0.1:9000/rpc", debounceMs: 999_999, reloadOnSave: true, tokenSecret: "grasbot-owner-token" };
		const { app, plugin, stub } = await load(written, { "grasbot-owner-token": "owner-token" });
		app.workspace.setLayoutReady();
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain("• Adresse du démon (daemonUrl : \"http://127.0.0.1:9000/rpc\") : l'adresse du démon seule, sans /rpc");
		expect(notices[0]).toContain("• Délai de rechargement (debounceMs : 999999)");
		// on save, the reload command and the connection check: no request, to the default address or any other
		await save(app, "a.md", 1, 2000);
		stub.commands.find((c) => c.id === "reload-vault")?.callback?.();
		await plugin.checkConnection();
		await vi.advanceTimersByTimeAsync(0);
		expect(calls).toEqual([]);
		expect(notices.slice(1)).toHaveLength(3);
		for (const notice of notices.slice(1)) expect(notice).toMatch(/^Adresse du démon refusée\. Le réglage « Adresse du démon » du plugin \(« http:\/\/127\.0\.0\.1:9000\/rpc »\) est refusé/);
		// another setting changed: the refused values are saved again as written
		await plugin.updateSettings({ tokenSecret: "grasbot-owner-token" });
		expect(stub.saved).toEqual({ ...written, dismissedAliases: {} });
		// the author fixes the URL: the daemon there is asked, with the token; the delay stays as written
		await plugin.updateSettings({ daemonUrl: "http://127.0.0.1:9000" });
		await plugin.checkConnection();
		expect(calls).toEqual([{ url: "http://127.0.0.1:9000/rpc", method: "health", auth: "Bearer owner-token" }]);
		expect(stub.saved).toEqual({ ...written, daemonUrl: "http://127.0.0.1:9000", dismissedAliases: {} });
	});
});
