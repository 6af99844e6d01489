/** Obsidian glue: the side panel that hosts the preview (preview.ts does the work). */

import { ItemView, type ViewStateResult, type WorkspaceLeaf } from "obsidian";
import type { HealthNotice } from "./health";
import { VIEW_TITLE } from "./messages";
import type { NoteTestReport } from "./noteTest";
import { type PreviewDeps, PreviewPanel, questionOf } from "./preview";

export const VIEW_TYPE_PREVIEW = "grasbot-preview-view";

export class PreviewView extends ItemView {
	private panel: PreviewPanel | null = null;
	/** The question of a restored state that came before the panel was made. */
	private restored = "";

	constructor(
		leaf: WorkspaceLeaf,
		private readonly deps: PreviewDeps,
	) {
		super(leaf);
	}

	getViewType(): string {
		return VIEW_TYPE_PREVIEW;
	}

	getDisplayText(): string {
		return VIEW_TITLE;
	}

	getIcon(): string {
		return "message-circle";
	}

	async onOpen(): Promise<void> {
		this.panel = new PreviewPanel(this.contentEl, this.deps);
		this.panel.restoreQuestion(this.restored);
		void this.panel.checkHealth();
	}

	/** The question being typed is kept with the workspace: a restart of Obsidian, or of the plugin for an update, loses none. */
	getState(): Record<string, unknown> {
		const question = this.panel?.questionEl.value ?? this.restored;
		return { ...super.getState(), ...(question ? { question } : {}) };
	}

	async setState(state: unknown, result: ViewStateResult): Promise<void> {
		this.restored = questionOf(state);
		this.panel?.restoreQuestion(this.restored);
		await super.setState(state, result);
	}

	async onClose(): Promise<void> {
		// the state may be read once the panel is gone (the workspace saved as the plugin unloads)
		if (this.panel) this.restored = this.panel.questionEl.value;
		this.panel?.destroy();
		this.panel = null;
	}

	showNoteTest(report: NoteTestReport): void {
		this.panel?.showNoteTest(report);
	}

	showHealth(notices: HealthNotice[]): void {
		this.panel?.showHealth(notices);
	}

	showFailure(error: unknown): void {
		this.panel?.showFailure(error);
	}
}
