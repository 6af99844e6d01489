/**
 * GrasBot preview: Obsidian glue only. It wires commands, the ribbon button, the side panel,
 * the settings tab and reload-on-save to the plain modules (client, sse, preview, noteTest,
 * debounce), which hold the logic and are unit-tested without Obsidian. Alias suggestions: an
 * editor extension (aliasSuggest/), fed when a note is opened and after a reload, told by
 * `editorLivePreviewField` whether the frontmatter is shown as raw lines or as Properties.
 *
 * Network: only the daemon URL of the settings, a loopback address. JSON-RPC goes through
 * `requestUrl`; the streamed preview uses `fetch`, because `requestUrl` cannot stream.
 */

import { Notice, Plugin, TAbstractFile, TFile, editorInfoField, editorLivePreviewField, requestUrl, stripHeadingForLink } from "obsidian";
import { AliasSuggestController, SUGGESTION_LIMIT } from "./aliasSuggest/controller";
import { AliasSuggestHub, aliasSuggestLivePreview } from "./aliasSuggest/extension";
import { DismissedAliases, type UnreadDismissed, dismissedToSave, renameUnreadDismissed, unreadDismissed } from "./aliasSuggest/suggestions";
import { GrasbotClient } from "./client";
import { Debouncer } from "./debounce";
import { describeFailure } from "./errors";
import { headingSubpath } from "./headingLink";
import { type HealthNotice, SaidOnce, formatHealthNotice, healthNotices } from "./health";
import { COMMANDS, CONNECTION, RIBBON_RELOAD, missingSourceNotice, noteGone } from "./messages";
import { testNote } from "./noteTest";
import type { Caller, Passage, Source } from "./protocol";
import { failedPeers, formatReloadNotice, noteTestSummary } from "./render";
import {
	DEFAULT_TOKEN_SECRET,
	type GrasbotSettings,
	chooseLegacyToken,
	legacySecretName,
	legacyToken,
	normalizeSettings,
	refusedSettings,
	refusedSettingsNotice,
	unknownSettings,
} from "./settings";
import { GrasbotSettingTab } from "./settingsTab";
import { streamAnswer } from "./sse";
import { type FetchLike, requestUrlTransport } from "./transport";
import { PreviewView, VIEW_TYPE_PREVIEW } from "./view";

const NOTICE_MS = 8000;

export default class GrasbotPreviewPlugin extends Plugin {
	settings: GrasbotSettings = normalizeSettings({});
	private reloader: Debouncer | null = null;
	private autoReloadFailing = false;
	/** The notes that failed at the last reload, as said: a save that changes nothing of them is quiet. */
	private lastReloadErrors = "";
	/** The daemon's troubles already said at a reload (health.ts): each said once while it lasts. */
	private readonly healthSaid = new SaidOnce();
	private aliasSuggest: AliasSuggestController | null = null;
	private readonly dismissedAliases = new DismissedAliases(() => this.settings.dismissedAliases);
	/** data.json's settings of a newer version (`unknownSettings`), saved again with ours. */
	private unknown: Record<string, unknown> = {};
	/** data.json's values this version refuses (`refusedSettings`), saved again as written until the author sets them. */
	private refused: Record<string, unknown> = {};
	/** data.json's dismissals this version cannot read (`unreadDismissed`), saved again as written beside the others. */
	private unreadDismissed: UnreadDismissed | null = null;

	async onload(): Promise<void> {
		const data: unknown = await this.loadData();
		this.settings = normalizeSettings(data);
		this.unknown = unknownSettings(data);
		const refused = refusedSettings(data);
		this.refused = Object.fromEntries(refused.filter(({ key }) => key !== "dismissedAliases").map(({ key, written }) => [key, written]));
		this.unreadDismissed = unreadDismissed((data as { dismissedAliases?: unknown } | null)?.dismissedAliases);
		if (refused.length > 0) new Notice(refusedSettingsNotice(refused), NOTICE_MS);
		// an older version's dismissals, saved as the suggestions' words: their keys take their place
		if (await this.dismissedAliases.hideWords()) await this.save();
		await this.moveLegacyToken(data);
		const reloader = new Debouncer(() => this.reloadVault(true), this.settings.debounceMs);
		this.reloader = reloader;
		this.register(() => reloader.cancel());

		this.registerView(
			VIEW_TYPE_PREVIEW,
			(leaf) =>
				new PreviewView(leaf, {
					client: () => this.client(),
					stream: (q, handlers, signal, history) =>
						streamAnswer(q, handlers, {
							daemonUrl: this.settings.daemonUrl,
							fetch: this.streamFetch,
							signal,
							token: this.token(),
							history,
						}),
					onOpenSource: (source, passage) => void this.openSource(source, passage),
					// Obsidian saves the layout (and the view's state, the question in it) a moment later
					onQuestionEdited: () => void this.app.workspace.requestSaveLayout(),
				}),
		);

		this.addRibbonIcon("refresh-cw", RIBBON_RELOAD, () => void this.reloadVault(false));
		// the ids stay as they were: hotkeys are bound to them
		this.addCommand({ id: "reload-vault", name: COMMANDS.reloadVault, callback: () => void this.reloadVault(false) });
		this.addCommand({ id: "open-preview", name: COMMANDS.openPreview, callback: () => void this.openPreview() });
		this.addCommand({
			id: "test-note",
			name: COMMANDS.testNote,
			checkCallback: (checking) => {
				const file = this.app.workspace.getActiveFile();
				if (!file || file.extension !== "md") return false;
				if (!checking) void this.testActiveNote(file);
				return true;
			},
		});
		this.addSettingTab(new GrasbotSettingTab(this.app, this));
		this.setUpAliasSuggestions();

		// After layout-ready, so the vault's initial load does not count as saves.
		this.app.workspace.onLayoutReady(() => {
			const changed = (file: TAbstractFile) => this.noteChanged(file);
			this.registerEvent(this.app.vault.on("modify", changed));
			this.registerEvent(this.app.vault.on("create", changed));
			this.registerEvent(this.app.vault.on("delete", changed));
			this.registerEvent(this.app.vault.on("rename", (file, oldPath) => this.noteChanged(file, oldPath)));
			this.registerEvent(this.app.vault.on("rename", (file, oldPath) => void this.noteRenamed(file, oldPath)));
			this.registerEvent(this.app.workspace.on("file-open", (file) => void this.refreshAliasSuggestions(file)));
			void this.refreshAliasSuggestions(this.app.workspace.getActiveFile());
		});
	}

	private setUpAliasSuggestions(): void {
		const hub = new AliasSuggestHub({
			pathOf: (state) => state.field(editorInfoField, false)?.file?.path ?? null,
			add: (path, suggestion) => void this.aliasSuggest?.add(path, suggestion),
			dismiss: (path, suggestion) => void this.aliasSuggest?.dismiss(path, suggestion),
		});
		this.aliasSuggest = new AliasSuggestController({
			hub,
			dismissed: this.dismissedAliases,
			hasToken: () => this.token().length > 0,
			suggest: (slug, path) => this.client().suggestAliases(slug, SUGGESTION_LIMIT, path),
			saveDismissed: () => this.save(),
			editFrontMatter: async (path, edit) => {
				const file = this.app.vault.getFileByPath(path);
				if (!file) throw new Error(noteGone(path));
				await this.app.fileManager.processFrontMatter(file, edit);
			},
			daemonUrl: () => this.settings.daemonUrl,
			debug: (message) => console.debug(message),
			warn: (message) => new Notice(message, NOTICE_MS),
		});
		this.registerEditorExtension([
			hub.extension(),
			// Live Preview hides the frontmatter's lines: the chips then go below it.
			aliasSuggestLivePreview.compute([editorLivePreviewField], (state) => state.field(editorLivePreviewField, false) ?? false),
		]);
	}

	private async refreshAliasSuggestions(file: TFile | null): Promise<void> {
		const note = file
			? { path: file.path, basename: file.basename, extension: file.extension, frontmatter: this.app.metadataCache.getFileCache(file)?.frontmatter }
			: null;
		await this.aliasSuggest?.refresh(note);
	}

	private async noteRenamed(file: TAbstractFile, oldPath: string): Promise<void> {
		const read = this.dismissedAliases.rename(oldPath, file.path);
		const unread = renameUnreadDismissed(this.unreadDismissed, oldPath, file.path);
		if (read || unread) await this.save();
	}

	/** The owner token, read from Obsidian's keychain under the name the settings keep. */
	token(): string {
		const name = this.settings.tokenSecret;
		return name ? (this.app.secretStorage.getSecret(name) ?? "").trim() : "";
	}

	/**
	 * A token an older version (3.1) wrote into data.json goes into the keychain, and out of
	 * data.json. When the keychain already holds another under that name (a token pasted under
	 * 3.1 on a synced machine may be the newer one), neither is lost: the older one gets its own
	 * secret, and the daemon says which to use.
	 */
	private async moveLegacyToken(data: unknown): Promise<void> {
		const token = legacyToken(data);
		if (!token) return;
		const storage = this.app.secretStorage;
		const name = this.settings.tokenSecret || DEFAULT_TOKEN_SECRET;
		const held = (storage.getSecret(name) ?? "").trim();
		let legacy: string | null = null;
		if (!held) storage.setSecret(name, token);
		else if (held !== token) {
			legacy = legacySecretName(name, token, (id) => storage.getSecret(id));
			storage.setSecret(legacy, token);
		}
		this.settings.tokenSecret = name;
		delete this.refused.tokenSecret;
		await this.save();
		// not awaited: the plugin loads without waiting for the daemon
		if (legacy !== null) void this.chooseLegacyToken(name, legacy);
	}

	private async chooseLegacyToken(current: string, legacy: string): Promise<void> {
		const [currentCaller, legacyCaller] = await Promise.all([this.callerWith(current), this.callerWith(legacy)]);
		const choice = chooseLegacyToken({ current, legacy }, { current: currentCaller, legacy: legacyCaller }, this.settings.daemonUrl);
		// unless the author picked a secret meanwhile
		if (choice.secret !== current && this.settings.tokenSecret === current) await this.updateSettings({ tokenSecret: choice.secret });
		new Notice(choice.message, NOTICE_MS);
	}

	/** Whose view the daemon gives the token of this secret; null when it cannot say. */
	private async callerWith(secret: string): Promise<Caller | null> {
		const token = (this.app.secretStorage.getSecret(secret) ?? "").trim();
		const client = new GrasbotClient({ daemonUrl: this.settings.daemonUrl, token, transport: requestUrlTransport(requestUrl) });
		try {
			return (await client.health()).caller;
		} catch {
			return null;
		}
	}

	client(): GrasbotClient {
		return new GrasbotClient({
			daemonUrl: this.settings.daemonUrl,
			token: this.token(),
			transport: requestUrlTransport(requestUrl),
		});
	}

	/** Only the streamed preview uses fetch: requestUrl returns the whole body at once. */
	private readonly streamFetch: FetchLike = (url, init) => window.fetch(url, init);

	refusedValues(): Readonly<Record<string, unknown>> {
		return this.refused;
	}

	private save(): Promise<void> {
		return this.saveData({ ...this.unknown, ...this.settings, ...dismissedToSave(this.settings.dismissedAliases, this.unreadDismissed), ...this.refused });
	}

	async updateSettings(change: Partial<GrasbotSettings>): Promise<void> {
		this.settings = normalizeSettings({ ...this.settings, ...change });
		for (const key of Object.keys(change)) delete this.refused[key];
		this.reloader?.setDelay(this.settings.debounceMs);
		if (!this.settings.reloadOnSave) this.reloader?.cancel();
		await this.save();
		// the open note's chips come with a token just set (or go with it), not at the next note opened
		if ("tokenSecret" in change || "daemonUrl" in change) void this.refreshAliasSuggestions(this.app.workspace.getActiveFile());
	}

	/** `oldPath`: a renamed file's; a note renamed to another extension (`plan.md` → `plan.txt`)
	 * leaves the daemon's notes too, and it served it until the next reload. */
	private noteChanged(file: TAbstractFile, oldPath?: string): void {
		if (!this.settings.reloadOnSave) return;
		if (file instanceof TFile && file.extension !== "md" && !oldPath?.toLowerCase().endsWith(".md")) return;
		this.reloader?.trigger();
	}

	/** `quiet`: the reload-on-save path, which only speaks up when something is wrong. */
	async reloadVault(quiet: boolean): Promise<void> {
		try {
			const client = this.client();
			const result = await client.reload();
			const failing = this.autoReloadFailing;
			this.autoReloadFailing = false;
			// a peer left behind is said as a note that failed is: once, while it lasts
			const behind = failedPeers(result);
			const errors = JSON.stringify([result.errors, behind]);
			const newErrors = result.errors.length + behind.length > 0 && errors !== this.lastReloadErrors;
			this.lastReloadErrors = errors;
			if (!quiet || newErrors || failing) new Notice(formatReloadNotice(result), NOTICE_MS);
			void this.refreshAliasSuggestions(this.app.workspace.getActiveFile());
			const health = await this.healthNotices(client);
			const fresh = this.healthSaid.fresh(health);
			// asked for: all of it; on save: only a trouble not said yet, and the owner's to fix
			const said = quiet ? fresh.filter((n) => n.problem) : health;
			if (said.length > 0) new Notice(said.map(formatHealthNotice).join("\n"), NOTICE_MS);
		} catch (error) {
			if (quiet && this.autoReloadFailing) return; // said once already
			if (quiet) this.autoReloadFailing = true;
			this.noticeFailure(error);
		}
	}

	async checkConnection(): Promise<void> {
		try {
			const client = this.client();
			const health = await client.health();
			const facts = [
				health.vault_size === null ? null : CONNECTION.publicNotes(health.vault_size),
				health.model === null ? CONNECTION.noModel : CONNECTION.model(health.model, health.llm_reachable === false),
				health.version === null ? null : CONNECTION.version(health.version),
			].filter((fact): fact is string => fact !== null);
			const notices = healthNotices(health, { tokenSent: client.sendsToken, daemonUrl: client.daemonUrl });
			this.showHealthInPreviews(notices);
			const lines = [CONNECTION.status(health.status, this.settings.daemonUrl, facts), ...notices.map(formatHealthNotice)];
			new Notice(lines.join("\n"), notices.length > 0 ? NOTICE_MS : undefined);
		} catch (error) {
			this.noticeFailure(error);
		}
	}

	/**
	 * What the daemon's health says degrades visitors' answers, shown in the open previews too;
	 * none when it cannot be asked: the reload that just answered has said what matters.
	 */
	private async healthNotices(client: GrasbotClient): Promise<HealthNotice[]> {
		let notices: HealthNotice[];
		try {
			notices = healthNotices(await client.health(), { tokenSent: client.sendsToken, daemonUrl: client.daemonUrl });
		} catch {
			return [];
		}
		this.showHealthInPreviews(notices);
		return notices;
	}

	private showHealthInPreviews(notices: HealthNotice[]): void {
		for (const leaf of this.app.workspace.getLeavesOfType(VIEW_TYPE_PREVIEW)) {
			if (leaf.view instanceof PreviewView) leaf.view.showHealth(notices);
		}
	}

	/** Tells the author what failed and what to do, knowing whether a token is set. */
	private noticeFailure(error: unknown): void {
		const state = describeFailure(error, this.settings.daemonUrl, { tokenSet: this.token().length > 0 });
		new Notice(`${state.title}. ${state.detail}`, NOTICE_MS);
	}

	private async openPreview(): Promise<PreviewView | null> {
		const leaf = await this.app.workspace.ensureSideLeaf(VIEW_TYPE_PREVIEW, "right", { active: true, reveal: true });
		// A leaf restored in the background is deferred (a placeholder view) until loaded.
		await leaf.loadIfDeferred();
		const view = leaf.view;
		return view instanceof PreviewView ? view : null;
	}

	/**
	 * Opens the source's note, at the passage's own section when it has headings (headingLink.ts:
	 * the headings above it, as Obsidian links them). The file itself, not a link text:
	 * `Issue #12.md` or `C#.md` (an imported file) read as a link is `Issue ` at its heading
	 * `12.md`, a note Obsidian does not find and creates empty.
	 */
	private async openSource(source: Source, passage?: Passage): Promise<void> {
		// a note renamed or deleted since the daemon's last reload: said, not created empty
		const file = this.app.vault.getFileByPath(source.path);
		if (!file) {
			new Notice(missingSourceNotice(source.path), NOTICE_MS);
			return;
		}
		const subpath = headingSubpath(passage?.heading ?? [], stripHeadingForLink);
		await this.app.workspace.getLeaf(false).openFile(file, { active: true, ...(subpath ? { eState: { subpath } } : {}) });
	}

	private async testActiveNote(file: TFile): Promise<void> {
		const view = await this.openPreview();
		const client = this.client();
		try {
			// the note's questions would be logged as visitors' otherwise; the owner's health says
			// whether a note without `visibility` is public and where its dates are read (unknown
			// without a token, or from an older daemon)
			const health = await client.checkToken();
			const visibility = health?.default_visibility ?? null;
			const report = await testNote(
				{
					path: file.path,
					basename: file.basename,
					frontmatter: this.app.metadataCache.getFileCache(file)?.frontmatter,
					text: await this.app.vault.cachedRead(file),
				},
				async (question) => (await client.search(question, { audience: "visitor", topK: 10 })).results,
				// an owner's health from before GRASBOT_TIME_ZONE (it says the default visibility, not
				// the zone: 3.4 and 3.5) read a note's dates where that daemon ran
				{ defaultPublic: visibility === null ? undefined : visibility === "public", timeZone: health?.time_zone ?? (visibility === null ? undefined : "local") },
			);
			view?.showNoteTest(report);
			new Notice(noteTestSummary(report));
		} catch (error) {
			view?.showFailure(error);
			this.noticeFailure(error);
		}
	}
}
