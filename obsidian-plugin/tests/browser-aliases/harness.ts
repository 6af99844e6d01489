/**
 * A real CodeMirror editor with the alias-suggestion extension and a stand-in for Obsidian:
 * one note, a fake `processFrontMatter` that applies the frontmatter object back to the
 * document text (`writeAliases`), a saved-data round trip, and Obsidian's two editing modes:
 * Source (raw frontmatter lines) and Live Preview, where a stand-in Properties panel replaces
 * the frontmatter's lines the way Obsidian hides them. Shared by the happy-dom tests and the
 * Chromium page, so both run the same scenario.
 */

import { type EditorState as State, EditorState, StateEffect, StateField } from "@codemirror/state";
import { Decoration, type DecorationSet, EditorView, WidgetType } from "@codemirror/view";
import { AliasSuggestController } from "../../src/aliasSuggest/controller";
import { AliasSuggestHub, aliasSuggestLivePreview } from "../../src/aliasSuggest/extension";
import { frontmatterLength, locateAliases, writeAliases } from "../../src/aliasSuggest/frontmatter";
import { DismissedAliases } from "../../src/aliasSuggest/suggestions";
import type { AliasSuggestions } from "../../src/protocol";
import { normalizeSettings } from "../../src/settings";

export interface HarnessOptions {
	path: string;
	doc: string;
	/** data.json as saved by a previous run (a JSON string), if any. */
	savedData?: string | null;
	token?: string;
	/** Start in Live Preview (the frontmatter drawn as Properties) rather than Source mode. */
	livePreview?: boolean;
	/** The daemon: suggestions for a slug, or a rejection (RpcError, DaemonNotRunningError…). */
	suggest: (slug: string) => Promise<AliasSuggestions>;
}

export interface Harness {
	view: EditorView;
	controller: AliasSuggestController;
	hub: AliasSuggestHub;
	/** Slugs asked of the daemon. */
	asked: string[];
	/** What the controller told the author (its Notices). */
	warned: string[];
	/** Aliases passed to the add callback. */
	added: string[];
	/** data.json after the last save, a JSON string. */
	saved(): string | null;
	/** The note opened (file-open): asks the daemon and feeds the editor. */
	open(): Promise<void>;
	/** Switches between Live Preview and Source mode, as Obsidian's mode toggle does. */
	setLivePreview(on: boolean): void;
	destroy(): void;
}

/** Stand-in for Obsidian's `editorLivePreviewField`, with an effect for the mode toggle. */
const setLivePreview = StateEffect.define<boolean>();
const livePreviewField = StateField.define<boolean>({
	create: () => false,
	update: (value, tr) => tr.effects.reduce((live, effect) => (effect.is(setLivePreview) ? effect.value : live), value),
});

/** Stand-in for the Properties panel: the frontmatter's keys and values, not its YAML. */
class PropertiesWidget extends WidgetType {
	constructor(readonly yaml: string) {
		super();
	}

	eq(other: PropertiesWidget): boolean {
		return other.yaml === this.yaml;
	}

	toDOM(): HTMLElement {
		const panel = createDiv({ cls: "harness-properties" });
		panel.createDiv({ cls: "harness-properties-heading", text: "Properties" });
		let values: HTMLElement | null = null;
		for (const line of this.yaml.split("\n").slice(1, -1)) {
			const item = /^\s+-\s*(.*)$/.exec(line);
			const pair = /^([^\s:][^:]*):\s*(.*)$/.exec(line);
			if (item && values) {
				values.createSpan({ cls: "harness-property-pill", text: item[1] });
			} else if (pair) {
				const row = panel.createDiv({ cls: "harness-property" });
				row.createSpan({ cls: "harness-property-key", text: pair[1] });
				values = row.createSpan({ cls: "harness-property-value" });
				if (pair[2]) values.createSpan({ text: pair[2] });
			}
		}
		return panel;
	}
}

function properties(state: State): DecorationSet {
	if (!state.field(livePreviewField)) return Decoration.none;
	const end = frontmatterLength(state.doc.toString());
	if (end === 0) return Decoration.none;
	return Decoration.set([Decoration.replace({ widget: new PropertiesWidget(state.doc.sliceString(0, end)), block: true }).range(0, end)]);
}

/** Obsidian's Live Preview, as far as the frontmatter goes: its lines replaced by Properties. */
const propertiesField = StateField.define<DecorationSet>({
	create: properties,
	update: (value, tr) => (tr.docChanged || tr.startState.field(livePreviewField) !== tr.state.field(livePreviewField) ? properties(tr.state) : value),
	provide: (field) => EditorView.decorations.from(field),
});

/** The parsed frontmatter an Obsidian `processFrontMatter` callback would see, aliases only. */
function frontmatterOf(text: string): Record<string, unknown> {
	const where = locateAliases(text);
	if (where.kind === "none" || where.kind === "missing") return {};
	if (where.kind === "empty") return { aliases: null };
	if (where.kind === "scalar") return { aliases: where.values[0] ?? "" };
	return { aliases: [...where.values] };
}

export function mountHarness(parent: HTMLElement, options: HarnessOptions): Harness {
	const settings = normalizeSettings(options.savedData ? JSON.parse(options.savedData) : {});
	// The owner token, from Obsidian's keychain in the plugin: never in the saved data.
	const token = options.token ?? "tok";
	let saved: string | null = options.savedData ?? null;
	const asked: string[] = [];
	const warned: string[] = [];
	const added: string[] = [];
	let view: EditorView | null = null;

	const hub = new AliasSuggestHub({
		pathOf: () => options.path,
		add: (path, suggestion) => {
			added.push(suggestion.alias);
			void controller.add(path, suggestion);
		},
		dismiss: (path, suggestion) => void controller.dismiss(path, suggestion),
	});
	const controller = new AliasSuggestController({
		hub,
		dismissed: new DismissedAliases(() => settings.dismissedAliases),
		hasToken: () => token.length > 0,
		suggest: (slug) => {
			asked.push(slug);
			return options.suggest(slug);
		},
		saveDismissed: async () => {
			saved = JSON.stringify(settings);
		},
		editFrontMatter: async (path, edit) => {
			if (!view || path !== options.path) throw new Error(`no note at ${path}`);
			const text = view.state.doc.toString();
			const frontmatter = frontmatterOf(text);
			const before = JSON.stringify(frontmatter);
			edit(frontmatter);
			if (JSON.stringify(frontmatter) === before) return;
			const aliases = Array.isArray(frontmatter.aliases) ? frontmatter.aliases.map(String) : [];
			view.dispatch({ changes: { from: 0, to: text.length, insert: writeAliases(text, aliases) } });
		},
		daemonUrl: () => settings.daemonUrl,
		warn: (message) => warned.push(message),
	});

	const extensions = [
		hub.extension(),
		livePreviewField.init(() => options.livePreview ?? false),
		propertiesField,
		// What main.ts does with Obsidian's field.
		aliasSuggestLivePreview.compute([livePreviewField], (state) => state.field(livePreviewField)),
	];
	view = new EditorView({ state: EditorState.create({ doc: options.doc, extensions }), parent });
	const mounted = view;
	return {
		view: mounted,
		controller,
		hub,
		asked,
		warned,
		added,
		saved: () => saved,
		open: () => controller.refresh({ path: options.path, basename: options.path.replace(/^.*\//, "").replace(/\.md$/, ""), extension: "md" }),
		setLivePreview: (on) => mounted.dispatch({ effects: setLivePreview.of(on) }),
		destroy: () => mounted.destroy(),
	};
}
