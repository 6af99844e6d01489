/**
 * A real CodeMirror editor with the alias-suggestion extension and a stand-in for Obsidian:
 * one note, a fake `processFrontMatter` that applies the frontmatter object back to the
 * document text (`writeAliases`), a saved-data round trip. Shared by the happy-dom tests and
 * the Chromium page, so both run the same scenario.
 */

import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { AliasSuggestController } from "../../src/aliasSuggest/controller";
import { AliasSuggestHub } from "../../src/aliasSuggest/extension";
import { locateAliases, writeAliases } from "../../src/aliasSuggest/frontmatter";
import { DismissedAliases } from "../../src/aliasSuggest/suggestions";
import type { AliasSuggestions } from "../../src/protocol";
import { normalizeSettings } from "../../src/settings";

export interface HarnessOptions {
	path: string;
	doc: string;
	/** data.json as saved by a previous run (a JSON string), if any. */
	savedData?: string | null;
	token?: string;
	/** The daemon: suggestions for a slug, or a rejection (RpcError, DaemonNotRunningError…). */
	suggest: (slug: string) => Promise<AliasSuggestions>;
}

export interface Harness {
	view: EditorView;
	controller: AliasSuggestController;
	hub: AliasSuggestHub;
	/** Slugs asked of the daemon. */
	asked: string[];
	/** Aliases passed to the add callback. */
	added: string[];
	/** data.json after the last save, a JSON string. */
	saved(): string | null;
	/** The note opened (file-open): asks the daemon and feeds the editor. */
	open(): Promise<void>;
	destroy(): void;
}

/** The parsed frontmatter an Obsidian `processFrontMatter` callback would see, aliases only. */
function frontmatterOf(text: string): Record<string, unknown> {
	const where = locateAliases(text);
	if (where.kind === "none" || where.kind === "missing") return {};
	if (where.kind === "empty") return { aliases: null };
	if (where.kind === "scalar") return { aliases: where.values[0] ?? "" };
	return { aliases: [...where.values] };
}

export function mountHarness(parent: HTMLElement, options: HarnessOptions): Harness {
	const settings = normalizeSettings(options.savedData ? JSON.parse(options.savedData) : { token: options.token ?? "tok" });
	if (options.token !== undefined) settings.token = options.token;
	let saved: string | null = options.savedData ?? null;
	const asked: string[] = [];
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
		hasToken: () => settings.token.length > 0,
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
	});

	view = new EditorView({ state: EditorState.create({ doc: options.doc, extensions: [hub.extension()] }), parent });
	const mounted = view;
	return {
		view: mounted,
		controller,
		hub,
		asked,
		added,
		saved: () => saved,
		open: () => controller.refresh({ path: options.path, basename: options.path.replace(/^.*\//, "").replace(/\.md$/, ""), extension: "md" }),
		destroy: () => mounted.destroy(),
	};
}
