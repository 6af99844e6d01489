/**
 * The CodeMirror 6 side: suggestions are fed into the editor with a StateEffect, kept in a
 * StateField, and drawn as one widget of chips (add, dismiss, source and evidence on hover).
 * Where depends on how the frontmatter is shown: as raw YAML (Source mode), at the end of
 * the `aliases:` line; hidden behind Obsidian's Properties panel (Live Preview), on a line of
 * their own right after the frontmatter. No Obsidian here: the host (main.ts) says which note
 * an editor shows, what add and dismiss do, and feeds `aliasSuggestLivePreview`.
 */

import { type EditorState, type Extension, Facet, StateEffect, StateField, type Text } from "@codemirror/state";
import { Decoration, type DecorationSet, EditorView, ViewPlugin, type ViewUpdate, WidgetType } from "@codemirror/view";
import { ALIASES } from "../messages";
import type { AliasSuggestion } from "../protocol";
import { locateAliases, normalizeAlias } from "./frontmatter";
import { hoverText, visibleSuggestions } from "./suggestions";

/** What the editor of one note is given. */
export interface AliasSuggestFeed {
	path: string;
	suggestions: readonly AliasSuggestion[];
	/** Normalized aliases the author dismissed for this note. */
	dismissed: ReadonlySet<string>;
}

export interface AliasSuggestHost {
	/** The path of the note an editor shows, null when it shows none. */
	pathOf(state: EditorState): string | null;
	add(path: string, suggestion: AliasSuggestion): void;
	dismiss(path: string, suggestion: AliasSuggestion): void;
}

/** Replaces the suggestions of an editor (null clears them). */
export const setAliasSuggestions = StateEffect.define<AliasSuggestFeed | null>();
/** Hides one suggestion at once, before the dismissed list is saved. */
export const dismissAliasSuggestion = StateEffect.define<string>();

/**
 * Whether the editor is in Live Preview, where the frontmatter's lines are hidden. A facet,
 * so the host can compute it from Obsidian's `editorLivePreviewField` and tests can set it.
 */
export const aliasSuggestLivePreview = Facet.define<boolean, boolean>({ combine: (values) => values.some((value) => value) });

const hostFacet = Facet.define<AliasSuggestHost, AliasSuggestHost | null>({ combine: (hosts) => hosts[0] ?? null });

interface FieldValue {
	feed: AliasSuggestFeed | null;
	decorations: DecorationSet;
}

/**
 * The frontmatter alone: suggestions only care about it, and notes can be large. Null for a
 * frontmatter opened and not closed (yet): an alias added then would start a second one. Only
 * `---` closes it, as for Obsidian and `locateAliases`: YAML's `...` closes nothing there.
 */
function frontmatterText(doc: Text): string | null {
	if (!/^---[ \t]*$/.test(doc.line(1).text)) return "";
	const last = Math.min(doc.lines, 5000);
	for (let i = 2; i <= last; i++) {
		const line = doc.line(i);
		if (/^---[ \t]*$/.test(line.text)) return doc.sliceString(0, line.to);
	}
	return null;
}

/**
 * Where the chips go. "inline": at the end of the `aliases:` line; "above-fence": a line of
 * its own above the closing fence (no `aliases` key yet) or at the top (no frontmatter);
 * "after-frontmatter": a line of its own below the closing fence, outside the hidden lines.
 */
export type AliasSuggestPlacement = "inline" | "above-fence" | "after-frontmatter";

function buildDecorations(state: EditorState, feed: AliasSuggestFeed | null): DecorationSet {
	if (!feed || feed.suggestions.length === 0) return Decoration.none;
	const host = state.facet(hostFacet);
	if (host && host.pathOf(state) !== feed.path) return Decoration.none;
	const text = frontmatterText(state.doc);
	if (text === null) return Decoration.none;
	const where = locateAliases(text);
	const shown = visibleSuggestions(feed.suggestions, where.values, feed.dismissed);
	if (shown.length === 0) return Decoration.none;
	if (where.kind === "none") {
		const widget = new AliasSuggestionsWidget(feed.path, shown, "above-fence");
		return Decoration.set([Decoration.widget({ widget, block: true, side: -1 }).range(0)]);
	}
	if (state.facet(aliasSuggestLivePreview)) {
		// After the end of the closing fence line: a block widget there sorts after a block
		// replacement of the frontmatter (Properties), so it stays visible.
		const widget = new AliasSuggestionsWidget(feed.path, shown, "after-frontmatter");
		return Decoration.set([Decoration.widget({ widget, block: true, side: 1 }).range(state.doc.lineAt(where.closingFence).to)]);
	}
	if (where.kind === "missing") {
		const widget = new AliasSuggestionsWidget(feed.path, shown, "above-fence");
		return Decoration.set([Decoration.widget({ widget, block: true, side: -1 }).range(where.closingFence)]);
	}
	const widget = new AliasSuggestionsWidget(feed.path, shown, "inline");
	return Decoration.set([Decoration.widget({ widget, side: 1 }).range(where.keyLineEnd)]);
}

export const aliasSuggestField = StateField.define<FieldValue>({
	create: () => ({ feed: null, decorations: Decoration.none }),
	update(value, tr) {
		let feed = value.feed;
		let fed = false;
		for (const effect of tr.effects) {
			if (effect.is(setAliasSuggestions)) {
				feed = effect.value;
				fed = true;
			} else if (effect.is(dismissAliasSuggestion) && feed) {
				feed = { ...feed, dismissed: new Set([...feed.dismissed, normalizeAlias(effect.value)]) };
				fed = true;
			}
		}
		const modeChanged = tr.startState.facet(aliasSuggestLivePreview) !== tr.state.facet(aliasSuggestLivePreview);
		if (!fed && !tr.docChanged && !modeChanged) return value;
		return { feed, decorations: buildDecorations(tr.state, feed) };
	},
	provide: (field) => EditorView.decorations.from(field, (value) => value.decorations),
});

export class AliasSuggestionsWidget extends WidgetType {
	constructor(
		readonly path: string,
		readonly suggestions: readonly AliasSuggestion[],
		readonly placement: AliasSuggestPlacement,
	) {
		super();
	}

	eq(other: AliasSuggestionsWidget): boolean {
		return (
			other.path === this.path &&
			other.placement === this.placement &&
			other.suggestions.length === this.suggestions.length &&
			other.suggestions.every((s, i) => sameSuggestion(s, this.suggestions[i]))
		);
	}

	toDOM(view: EditorView): HTMLElement {
		const inline = this.placement === "inline";
		const box = createEl(inline ? "span" : "div", {
			cls: ["grasbot-alias-suggestions", `grasbot-alias-suggestions-${this.placement}`],
			attr: { "aria-label": ALIASES.boxLabel },
		});
		// Away from the `aliases:` line, the label says what the chips are for.
		box.createSpan({ cls: "grasbot-alias-suggestions-label", text: inline ? ALIASES.inlineLabel : ALIASES.blockLabel });
		for (const suggestion of this.suggestions) this.chip(view, box, suggestion);
		return box;
	}

	private chip(view: EditorView, box: HTMLElement, suggestion: AliasSuggestion): void {
		const chip = box.createSpan({ cls: "grasbot-alias-suggestion", title: hoverText(suggestion) });
		chip.dataset.alias = suggestion.alias;
		chip.dataset.source = suggestion.source;
		chip.createSpan({ cls: "grasbot-alias-suggestion-text", text: suggestion.alias });
		button(chip, "grasbot-alias-suggestion-add", "+", ALIASES.add(suggestion.alias), () => {
			view.state.facet(hostFacet)?.add(this.path, suggestion);
		});
		button(chip, "grasbot-alias-suggestion-dismiss", "×", ALIASES.dismiss(suggestion.alias), () => {
			view.dispatch({ effects: dismissAliasSuggestion.of(suggestion.alias) });
			view.state.facet(hostFacet)?.dismiss(this.path, suggestion);
		});
	}

	ignoreEvent(): boolean {
		return true;
	}
}

function button(parent: HTMLElement, cls: string, text: string, label: string, onClick: () => void): HTMLButtonElement {
	const el = parent.createEl("button", { cls, text, type: "button", attr: { "aria-label": label } });
	// Keep the editor's selection and focus where they are.
	el.addEventListener("mousedown", (event) => event.preventDefault());
	el.addEventListener("click", (event) => {
		event.preventDefault();
		event.stopPropagation();
		onClick();
	});
	return el;
}

function sameSuggestion(a: AliasSuggestion, b: AliasSuggestion): boolean {
	return a.alias === b.alias && a.source === b.source && a.score === b.score && a.evidence.join("\n") === b.evidence.join("\n");
}

/**
 * Feeds every open editor: keeps the latest suggestions per note path and gives them to each
 * editor showing that note, now and whenever an editor starts showing it.
 */
export class AliasSuggestHub {
	private readonly views = new Set<EditorView>();
	private readonly feeds = new Map<string, AliasSuggestFeed>();

	constructor(readonly host: AliasSuggestHost) {}

	/** The editor extension to register (once per plugin). */
	extension(): Extension {
		return [hostFacet.of(this.host), aliasSuggestField, ViewPlugin.define((view) => new EditorTracker(this, view))];
	}

	/** @internal An editor appeared (EditorTracker). */
	attach(view: EditorView): void {
		this.views.add(view);
		this.syncLater(view);
	}

	/** @internal An editor went away (EditorTracker). */
	detach(view: EditorView): void {
		this.views.delete(view);
	}

	show(feed: AliasSuggestFeed): void {
		this.feeds.set(feed.path, feed);
		for (const view of this.views) this.sync(view);
	}

	clear(path: string): void {
		this.feeds.delete(path);
		for (const view of this.views) this.sync(view);
	}

	/** Remembers a dismissal in the cached feed, so a later sync does not bring it back. */
	dismissed(path: string, alias: string): void {
		const feed = this.feeds.get(path);
		if (feed) this.feeds.set(path, { ...feed, dismissed: new Set([...feed.dismissed, normalizeAlias(alias)]) });
	}

	/** @internal */
	syncLater(view: EditorView): void {
		// A view cannot be updated while it is updating.
		queueMicrotask(() => {
			if (this.views.has(view)) this.sync(view);
		});
	}

	private sync(view: EditorView): void {
		const path = this.host.pathOf(view.state);
		const wanted = path === null ? null : (this.feeds.get(path) ?? null);
		const current = view.state.field(aliasSuggestField, false)?.feed ?? null;
		if (wanted === current) return;
		if (wanted && current && wanted.path === current.path && sameFeed(wanted, current)) return;
		view.dispatch({ effects: setAliasSuggestions.of(wanted) });
	}
}

function sameFeed(a: AliasSuggestFeed, b: AliasSuggestFeed): boolean {
	return (
		a.suggestions.length === b.suggestions.length &&
		a.suggestions.every((s, i) => sameSuggestion(s, b.suggestions[i])) &&
		a.dismissed.size === b.dismissed.size &&
		[...a.dismissed].every((d) => b.dismissed.has(d))
	);
}

/** Tells the hub which editors exist and when one starts showing another note. */
class EditorTracker {
	private path: string | null;

	constructor(
		private readonly hub: AliasSuggestHub,
		private readonly view: EditorView,
	) {
		this.path = hub.host.pathOf(view.state);
		hub.attach(view);
	}

	update(update: ViewUpdate): void {
		// Obsidian may reuse an editor for another note: follow the path it shows.
		const path = this.hub.host.pathOf(update.state);
		if (path !== this.path) {
			this.path = path;
			this.hub.syncLater(update.view);
		}
	}

	destroy(): void {
		this.hub.detach(this.view);
	}
}
