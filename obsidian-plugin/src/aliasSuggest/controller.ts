/**
 * Asks the daemon for a note's alias suggestions and hands them to the editors; adds and
 * dismisses them. Silent by design: a note the daemon does not know, a daemon that is down or
 * a missing token only clear the suggestions, with one debug line when the state changes. A
 * token the daemon refuses, or a daemon older than the plugin or whose answer it cannot read,
 * is the author's to fix, not a state: it is said once.
 * Obsidian stays outside (main.ts injects it), so this is tested as is.
 */

import { RPC_NOTE_NOT_FOUND, RpcError, describeFailure } from "../errors";
import { ALIASES, aliasNotAdded } from "../messages";
import type { AliasSuggestion, AliasSuggestions } from "../protocol";
import { noteSlug, pathSlug } from "../slug";
import type { AliasSuggestHub } from "./extension";
import { addAlias } from "./frontmatter";
import type { DismissedAliases } from "./suggestions";

export interface NoteRef {
	path: string;
	basename: string;
	extension: string;
	frontmatter?: Record<string, unknown>;
}

export interface AliasSuggestDeps {
	hub: AliasSuggestHub;
	dismissed: DismissedAliases;
	/** The owner token is set (suggest_aliases is owner only). */
	hasToken(): boolean;
	/** `path` too: a slug two notes share would give another note's suggestions (a private draft's). */
	suggest(slug: string, path: string): Promise<AliasSuggestions>;
	saveDismissed(): Promise<void>;
	/** `app.fileManager.processFrontMatter` on the note at `path`. */
	editFrontMatter(path: string, edit: (frontmatter: Record<string, unknown>) => void): Promise<void>;
	daemonUrl(): string;
	debug?(message: string): void;
	/** Tells the author (a Notice): the token set is refused, an alias not added. */
	warn?(message: string): void;
}

export const SUGGESTION_LIMIT = 8;

export class AliasSuggestController {
	private latest = 0;
	private lastState = "";

	constructor(private readonly deps: AliasSuggestDeps) {}

	/** Fetches and shows the suggestions of `note`; stale answers (another note opened since) are dropped. */
	async refresh(note: NoteRef | null): Promise<void> {
		const request = ++this.latest;
		if (!note || note.extension !== "md") return;
		if (!this.deps.hasToken()) {
			this.deps.hub.clear(note.path);
			this.state(ALIASES.noToken);
			return;
		}
		const slug = noteSlug(note.basename, note.frontmatter) || (await pathSlug(note.path));
		if (request !== this.latest) return;
		try {
			const result = await this.deps.suggest(slug, note.path);
			if (request !== this.latest) return;
			const dismissed = await this.deps.dismissed.dismissedAmong(note.path, result.suggestions.map((s) => s.alias));
			if (request !== this.latest) return;
			this.deps.hub.show({ path: note.path, suggestions: result.suggestions, dismissed });
			this.state("");
		} catch (error) {
			if (request !== this.latest) return;
			this.deps.hub.clear(note.path);
			if (error instanceof RpcError && error.code === RPC_NOTE_NOT_FOUND) return; // a note the daemon does not serve
			const failure = describeFailure(error, this.deps.daemonUrl(), { tokenSet: true }); // asked only with a token
			const said = ALIASES.off(failure.title);
			if (failure.kind === "auth" && said !== this.lastState) this.deps.warn?.(ALIASES.offNotice(said, failure.detail));
			// a daemon older than the plugin (no `path` param, no method): off until it is updated, said once
			// or of another version, whose answer this plugin cannot read: the same, said once
			if ((failure.kind === "outdated" || failure.kind === "mismatch") && said !== this.lastState)
				this.deps.warn?.(ALIASES.outdatedNotice(failure.detail));
			this.state(said);
		}
	}

	/**
	 * Adds the alias to the note's frontmatter (a list, no duplicate, other fields kept). A failure
	 * is said: properties Obsidian cannot parse as what the author has to fix, in French (its YAML
	 * parser's message is English); the note is then as it was, and the chip stays.
	 */
	async add(path: string, suggestion: AliasSuggestion): Promise<void> {
		try {
			await this.deps.editFrontMatter(path, (frontmatter) => {
				addAlias(frontmatter, suggestion.alias);
			});
		} catch (error) {
			// processFrontMatter's documented throw for a YAML it cannot parse (the `yaml` package's error)
			const invalid = error instanceof Error && error.name === "YAMLParseError";
			const reason = invalid ? ALIASES.invalidFrontmatter : error instanceof Error ? error.message : String(error);
			this.deps.warn?.(aliasNotAdded(suggestion.alias, reason));
		}
	}

	/**
	 * Hides the suggestion for good: saved in the plugin's data, per note and alias. A save that
	 * fails is said: the chip went, and it would come back at the next start without a word.
	 */
	async dismiss(path: string, suggestion: AliasSuggestion): Promise<void> {
		this.deps.hub.dismissed(path, suggestion.alias);
		if (!(await this.deps.dismissed.add(path, suggestion.alias))) return;
		try {
			await this.deps.saveDismissed();
		} catch (error) {
			const reason = error instanceof Error ? error.message : String(error);
			this.deps.warn?.(ALIASES.unsaved(suggestion.alias, reason));
		}
	}

	private state(message: string): void {
		if (message === this.lastState) return;
		this.lastState = message;
		if (message) this.deps.debug?.(`GrasBot : ${message}`);
	}
}
