/**
 * The "Preview as visitor" panel, mountable into any element: the Obsidian view mounts it in
 * its content element, tests and the headless-browser check mount it in a plain div.
 */

import type { GrasbotClient } from "./client";
import { DaemonNotRunningError, HttpError, describeFailure } from "./errors";
import type { NoteTestReport } from "./noteTest";
import type { AnswerResult, Passage, Source } from "./protocol";
import { AnswerView, renderFailure, renderNoteTest } from "./render";
import type { StreamHandlers } from "./sse";

export interface PreviewDeps {
	/** The current client (settings may change between two questions). */
	client: () => Pick<GrasbotClient, "answer" | "health" | "daemonUrl">;
	/** Streams a visitor's answer (sse.ts streamAnswer bound to fetch and the daemon URL). */
	stream: (q: string, handlers: StreamHandlers, signal: AbortSignal) => Promise<AnswerResult>;
	onOpenSource?: (source: Source, passage?: Passage) => void;
}

export const STREAM_FALLBACK_NOTE = "Streaming unavailable: showing the complete answer.";

export class PreviewPanel {
	readonly questionEl: HTMLTextAreaElement;
	readonly askButton: HTMLButtonElement;
	readonly resultEl: HTMLElement;
	private inflight: AbortController | null = null;

	constructor(
		readonly root: HTMLElement,
		private readonly deps: PreviewDeps,
	) {
		root.empty();
		root.addClass("grasbot-preview");
		const form = root.createDiv({ cls: "grasbot-ask" });
		this.questionEl = form.createEl("textarea", {
			cls: "grasbot-question",
			attr: { rows: "3", placeholder: "Ask what a visitor would ask…", "aria-label": "Question" },
		});
		this.askButton = form.createEl("button", { cls: ["mod-cta", "grasbot-ask-button"], text: "Ask as visitor" });
		this.resultEl = root.createDiv({ cls: "grasbot-result" });

		this.askButton.addEventListener("click", () => void this.ask(this.questionEl.value));
		this.questionEl.addEventListener("keydown", (event) => {
			if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
				event.preventDefault();
				void this.ask(this.questionEl.value);
			}
		});
	}

	/** Asks `q` as a visitor; resolves when the answer (or the failure) is shown. */
	async ask(q: string): Promise<void> {
		const question = q.trim();
		if (!question) return;
		this.inflight?.abort();
		const controller = new AbortController();
		this.inflight = controller;
		this.resultEl.empty();
		const view = new AnswerView(this.resultEl, { onOpenSource: this.deps.onOpenSource });
		view.setStatus("Asking the daemon…");
		this.askButton.disabled = true;
		try {
			const result = await this.deps.stream(
				question,
				{
					onSources: (sources, grounded) => view.setSources(sources, grounded),
					onToken: (text) => view.appendToken(text),
				},
				controller.signal,
			);
			if (!controller.signal.aborted) view.complete(result);
		} catch (error) {
			if (controller.signal.aborted) return;
			if (!canFallBack(error)) {
				view.fail(describeFailure(error, this.deps.client().daemonUrl));
				return;
			}
			await this.answerWithoutStream(question, view, controller.signal);
		} finally {
			if (this.inflight === controller) {
				this.inflight = null;
				this.askButton.disabled = false;
			}
		}
	}

	/**
	 * The stream failed before any HTTP answer: either the daemon is down, or the browser side
	 * refused the stream (CORS). `health` through the client tells which.
	 */
	private async answerWithoutStream(question: string, view: AnswerView, signal: AbortSignal): Promise<void> {
		const client = this.deps.client();
		try {
			await client.health();
			const result = await client.answer(question, { audience: "visitor" });
			if (!signal.aborted) view.complete(result, STREAM_FALLBACK_NOTE);
		} catch (error) {
			if (!signal.aborted) view.fail(describeFailure(error, client.daemonUrl));
		}
	}

	showNoteTest(report: NoteTestReport): void {
		this.resultEl.empty();
		renderNoteTest(this.resultEl, report);
	}

	showFailure(error: unknown): void {
		this.resultEl.empty();
		renderFailure(this.resultEl, describeFailure(error, this.deps.client().daemonUrl));
	}

	destroy(): void {
		this.inflight?.abort();
		this.inflight = null;
		this.root.empty();
	}
}

function canFallBack(error: unknown): boolean {
	if (error instanceof DaemonNotRunningError) return true;
	return error instanceof HttpError && (error.status === 404 || error.status === 405);
}
