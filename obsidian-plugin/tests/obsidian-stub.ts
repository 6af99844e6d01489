/**
 * A small runtime stand-in for the `obsidian` package (types only on npm). Vitest aliases
 * `obsidian` to this file. It records what the plugin registers so tests can drive it.
 */

import { StateEffect, StateField } from "@codemirror/state";
import { parse } from "yaml";

type Callback = (...args: unknown[]) => unknown;

export interface EventRef {
	name: string;
	callback: Callback;
}

export class Events {
	private handlers: EventRef[] = [];

	on(name: string, callback: Callback): EventRef {
		const ref = { name, callback };
		this.handlers.push(ref);
		return ref;
	}

	offref(ref: EventRef): void {
		this.handlers = this.handlers.filter((h) => h !== ref);
	}

	trigger(name: string, ...args: unknown[]): void {
		for (const h of this.handlers.filter((handler) => handler.name === name)) h.callback(...args);
	}

	count(name: string): number {
		return this.handlers.filter((h) => h.name === name).length;
	}
}

export class TAbstractFile {
	constructor(public path: string) {}
}

export class TFile extends TAbstractFile {
	get basename(): string {
		const name = this.path.split("/").pop() ?? this.path;
		return name.replace(/\.[^.]*$/, "");
	}

	get extension(): string {
		const match = /\.([^./]*)$/.exec(this.path);
		return match ? match[1] : "";
	}
}

export const notices: string[] = [];

export class Notice {
	constructor(message: string) {
		notices.push(message);
	}
}

export type RequestUrlHandler = (request: { url: string; method?: string; headers?: Record<string, string>; body?: string }) => Promise<{
	status: number;
	text: string;
}>;

let requestHandler: RequestUrlHandler = () => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED"));

export function setRequestUrlHandler(handler: RequestUrlHandler): void {
	requestHandler = handler;
}

export function requestUrl(request: { url: string; method?: string; headers?: Record<string, string>; body?: string }): Promise<{
	status: number;
	text: string;
}> {
	return requestHandler(request);
}

/** Obsidian's own (1.13): the characters a link's subpath cannot hold (`#` splits it) become spaces. */
export function stripHeadingForLink(heading: string): string {
	return heading
		.replace(/([:#|^\\\r\n]|%%|\[\[|]])/g, " ")
		.replace(/\s+/g, " ")
		.trim();
}

/** Obsidian's own (1.13): how a subpath's heading and a note's heading are compared. */
export function stripHeading(heading: string): string {
	return heading
		.replace(/[!"#$%&()*+,.:;<=>?@^`{|}~/[\]\\\r\n]/g, " ")
		.replace(/\s+/g, " ")
		.trim();
}

export class Workspace extends Events {
	private layoutReady = false;
	private readyCallbacks: Callback[] = [];
	activeFile: TFile | null = null;

	onLayoutReady(callback: Callback): void {
		if (this.layoutReady) callback();
		else this.readyCallbacks.push(callback);
	}

	setLayoutReady(): void {
		this.layoutReady = true;
		for (const callback of this.readyCallbacks.splice(0)) callback();
	}

	getActiveFile(): TFile | null {
		return this.activeFile;
	}

	getLeavesOfType(): WorkspaceLeaf[] {
		return [];
	}
}

/** Obsidian's field that tells an editor which note it shows; tests set it with `.init`. */
export const editorInfoField = StateField.define<{ file: TFile | null }>({ create: () => ({ file: null }), update: (value) => value });

/** Stand-in for Obsidian switching an editor between Source mode and Live Preview. */
export const setLivePreview = StateEffect.define<boolean>();

/** Obsidian's Live Preview flag; tests set it with `.init` or switch it with `setLivePreview`. */
export const editorLivePreviewField = StateField.define<boolean>({
	create: () => false,
	update: (value, tr) => tr.effects.reduce((live, effect) => (effect.is(setLivePreview) ? effect.value : live), value),
});

/** Obsidian's keychain (1.11.4+): secrets by name, kept outside the vault. */
export class SecretStorage extends Events {
	private readonly secrets = new Map<string, string>();

	setSecret(id: string, secret: string): void {
		if (!/^[a-z0-9-]+$/.test(id)) throw new Error(`invalid secret id ${id}`);
		this.secrets.set(id, secret);
	}

	getSecret(id: string): string | null {
		return this.secrets.get(id) ?? null;
	}

	listSecrets(): string[] {
		return [...this.secrets.keys()];
	}
}

export class SecretComponent {
	value = "";
	private change: (value: string) => unknown = () => undefined;

	constructor(
		public app: App,
		public containerEl: HTMLElement,
	) {}

	setValue(value: string): this {
		this.value = value;
		return this;
	}

	onChange(cb: (value: string) => unknown): this {
		this.change = cb;
		return this;
	}

	/** Test helper: the user picks or creates a secret. */
	choose(value: string): unknown {
		this.value = value;
		return this.change(value);
	}
}

/** The vault: a note's text, when a test sets one in `texts` (by path), else empty. */
export class Vault extends Events {
	texts = new Map<string, string>();

	async cachedRead(file: TFile): Promise<string> {
		return this.texts.get(file.path) ?? "";
	}
}

export class App {
	secretStorage = new SecretStorage();
	vault = new Vault();
	workspace = new Workspace();
	metadataCache = { getFileCache: (): { frontmatter?: Record<string, unknown> } | null => null };
}

export interface Command {
	id: string;
	name: string;
	callback?: () => unknown;
	checkCallback?: (checking: boolean) => boolean | undefined;
}

export class Component {
	private cleanups: (() => void)[] = [];

	register(cleanup: () => void): void {
		this.cleanups.push(cleanup);
	}

	unload(): void {
		for (const cleanup of this.cleanups.splice(0)) cleanup();
	}
}

export class Plugin extends Component {
	commands: Command[] = [];
	ribbonIcons: { icon: string; title: string; callback: Callback }[] = [];
	views: Record<string, Callback> = {};
	settingTabs: unknown[] = [];
	events: EventRef[] = [];
	saved: unknown = undefined;

	constructor(
		public app: App,
		public manifest: unknown = {},
		private data: unknown = null,
	) {
		super();
	}

	loadData(): Promise<unknown> {
		return Promise.resolve(this.data);
	}

	saveData(data: unknown): Promise<void> {
		this.saved = JSON.parse(JSON.stringify(data));
		return Promise.resolve();
	}

	addCommand(command: Command): Command {
		this.commands.push(command);
		return command;
	}

	addRibbonIcon(icon: string, title: string, callback: Callback): HTMLElement {
		this.ribbonIcons.push({ icon, title, callback });
		return createDiv();
	}

	registerView(type: string, creator: Callback): void {
		this.views[type] = creator;
	}

	addSettingTab(tab: unknown): void {
		(tab as PluginSettingTab).update();
		this.settingTabs.push(tab);
	}

	registerEvent(ref: EventRef): void {
		this.events.push(ref);
	}

	editorExtensions: unknown[] = [];

	registerEditorExtension(extension: unknown): void {
		this.editorExtensions.push(extension);
	}
}

export class WorkspaceLeaf {
	view: unknown = null;
}

export class ItemView extends Component {
	contentEl: HTMLElement = createDiv();

	constructor(public leaf: WorkspaceLeaf) {
		super();
	}

	getState(): Record<string, unknown> {
		return {};
	}

	async setState(_state: unknown, _result: unknown): Promise<void> {}
}

export class PluginSettingTab {
	containerEl: HTMLElement = createDiv();

	constructor(
		public app: App,
		public plugin: Plugin,
	) {}

	/** What the tab draws, as Obsidian keeps it: `update()` reads the definitions again. */
	settingItems: unknown[] = [];

	getSettingDefinitions(): unknown[] {
		return [];
	}

	refreshDomState(): void {}

	update(): void {
		this.settingItems = this.getSettingDefinitions();
	}
}

/** Obsidian's `parseYaml`, which throws on YAML it cannot read. */
export function parseYaml(text: string): unknown {
	return parse(text);
}
