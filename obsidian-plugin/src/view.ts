/** Obsidian glue: the side panel that hosts the preview (preview.ts does the work). */

import { ItemView, type WorkspaceLeaf } from "obsidian";
import type { HealthNotice } from "./health";
import type { NoteTestReport } from "./noteTest";
import { type PreviewDeps, PreviewPanel } from "./preview";

export const VIEW_TYPE_PREVIEW = "grasbot-preview-view";

export class PreviewView extends ItemView {
	private panel: PreviewPanel | null = null;

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
		return "Preview as visitor";
	}

	getIcon(): string {
		return "message-circle";
	}

	async onOpen(): Promise<void> {
		this.panel = new PreviewPanel(this.contentEl, this.deps);
		void this.panel.checkHealth();
	}

	async onClose(): Promise<void> {
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
