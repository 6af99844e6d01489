/**
 * The « Aperçu visiteur » panel, mountable into any element: the Obsidian view mounts it in
 * its content element, tests and the headless-browser check mount it in a plain div.
 */

import type { GrasbotClient } from "./client";
import { DaemonNotRunningError, HttpError, RpcError, describeFailure } from "./errors";
import { type HealthNotice, healthNotices } from "./health";
import { PANEL } from "./messages";
import type { NoteTestReport } from "./noteTest";
import type { AnswerResult, HistoryTurn, Passage, Source } from "./protocol";
import { AnswerView, renderFailure, renderHealthNotices, renderNoteTest } from "./render";
import type { StreamHandlers } from "./sse";
import { MAX_URL, Thread, streamUrl } from "./thread";

export interface PreviewDeps {
	/** The current client (settings may change between two questions). */
	client: () => Pick<GrasbotClient, "answer" | "health" | "checkToken" | "daemonUrl" | "sendsToken">;
	/** Streams a visitor's answer (sse.ts streamAnswer bound to fetch and the daemon URL),
	 * after the conversation's `history`. */
	stream: (q: string, handlers: StreamHandlers, signal: AbortSignal, history: HistoryTurn[]) => Promise<AnswerResult>;
	onOpenSource?: (source: Source, passage?: Passage) => void;
	/** The question being typed changed: the host keeps it in the view's state (`questionOf`). */
	onQuestionEdited?: () => void;
}

/** The question a view's saved state holds (Obsidian restores it at start), "" for none. */
export function questionOf(state: unknown): string {
	if (typeof state !== "object" || state === null) return "";
	const question = (state as { question?: unknown }).question;
	return typeof question === "string" ? question : "";
}

export class PreviewPanel {
	readonly questionEl: HTMLTextAreaElement;
	readonly askButton: HTMLButtonElement;
	readonly resultEl: HTMLElement;
	readonly newConversationButton: HTMLButtonElement;
	/** What on the daemon makes visitors' answers worse (health.ts), above the question; empty when all is well. */
	readonly healthEl: HTMLElement;
	/** The answered exchanges a follow-up is asked after (thread.ts has the rules). */
	readonly thread = new Thread();
	private inflight: AbortController | null = null;
	private inflightTurn: HTMLElement | null = null;

	constructor(
		readonly root: HTMLElement,
		private readonly deps: PreviewDeps,
	) {
		root.empty();
		root.addClass("grasbot-preview");
		this.healthEl = root.createDiv({ cls: "grasbot-health" });
		const form = root.createDiv({ cls: "grasbot-ask" });
		this.questionEl = form.createEl("textarea", {
			cls: "grasbot-question",
			attr: { rows: "3", placeholder: PANEL.placeholder, "aria-label": PANEL.questionLabel },
		});
		this.askButton = form.createEl("button", { cls: ["mod-cta", "grasbot-ask-button"], text: PANEL.ask });
		this.newConversationButton = form.createEl("button", { cls: "grasbot-new-conversation", text: PANEL.newConversation });
		this.newConversationButton.hidden = true;
		this.resultEl = root.createDiv({ cls: "grasbot-result" });

		this.questionEl.addEventListener("input", () => this.deps.onQuestionEdited?.());
		this.newConversationButton.addEventListener("click", () => this.newConversation());
		this.askButton.addEventListener("click", () => void this.ask(this.questionEl.value));
		this.questionEl.addEventListener("keydown", (event) => {
			if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
				event.preventDefault();
				void this.ask(this.questionEl.value);
			}
		});
	}

	/** A question kept from before a restart, unless the author has typed another since. */
	restoreQuestion(question: string): void {
		if (question && !this.questionEl.value) this.questionEl.value = question;
	}

	/** Asks `q` as a visitor; resolves when the answer (or the failure) is shown. */
	async ask(q: string): Promise<void> {
		const question = q.trim();
		if (!question) return;
		this.dropInflight();
		const controller = new AbortController();
		this.inflight = controller;
		// A question after a failed one starts over: only answered exchanges make the thread.
		if (this.thread.exchanges.length === 0) this.resultEl.empty();
		this.resultEl.querySelectorAll(".grasbot-turn-failed").forEach((el) => el.remove());
		const turn = this.resultEl.createDiv({ cls: "grasbot-turn" });
		this.inflightTurn = turn;
		turn.createDiv({ cls: "grasbot-turn-question", text: question });
		const view = new AnswerView(turn, { onOpenSource: this.deps.onOpenSource });
		view.setStatus(PANEL.asking);
		this.askButton.disabled = true;
		const daemonUrl = this.deps.client().daemonUrl.replace(/\/+$/, "");
		const historyNow = () => this.thread.history((h) => streamUrl(daemonUrl, question, h).length <= MAX_URL);
		const streamed = (history: HistoryTurn[]) =>
			this.deps.stream(
				question,
				{
					onSources: (sources, grounded) => view.setSources(sources, grounded),
					onToken: (text) => view.appendToken(text),
				},
				controller.signal,
				history,
			);
		try {
			// A token the daemon does not take would make this question a visitor's, logged as one.
			await this.deps.client().checkToken();
			if (controller.signal.aborted) return;
			const result = await this.withinLimits(streamed, historyNow, controller.signal);
			if (!controller.signal.aborted) this.answered(question, result, view);
		} catch (error) {
			if (controller.signal.aborted) return;
			if (!canFallBack(error)) {
				this.failed(turn, view, error);
				return;
			}
			await this.answerWithoutStream(question, historyNow, turn, view, controller.signal);
		} finally {
			if (this.inflight === controller) {
				this.inflight = null;
				this.inflightTurn = null;
				this.askButton.disabled = false;
			}
		}
	}

	/**
	 * `send` with the thread's history until the daemon takes it: a daemon holding to lower
	 * history limits names them in its -32602, and the question is sent again within them (at
	 * most 3 times). The stream and the answer method alike: without it, the fallback showed the
	 * refusal, and every follow-up after it was refused the same way.
	 */
	private async withinLimits(
		send: (history: HistoryTurn[]) => Promise<AnswerResult>,
		historyNow: () => HistoryTurn[],
		signal: AbortSignal,
	): Promise<AnswerResult> {
		for (let attempt = 0; ; attempt++) {
			try {
				return await send(historyNow());
			} catch (error) {
				if (attempt >= 3 || signal.aborted || !(error instanceof RpcError && error.code === -32602 && this.thread.lower(error.data))) throw error;
			}
		}
	}

	/** Forgets the thread: the next question is asked without history. */
	newConversation(): void {
		this.reset();
		this.questionEl.focus();
	}

	private reset(): void {
		this.dropInflight();
		this.thread.clear();
		this.resultEl.empty();
		this.updateLabels();
	}

	private answered(question: string, result: AnswerResult, view: AnswerView, note?: string): void {
		view.complete(result, note);
		this.thread.add(question, result.response);
		this.updateLabels();
	}

	private failed(turn: HTMLElement, view: AnswerView, error: unknown): void {
		turn.addClass("grasbot-turn-failed");
		view.fail(describeFailure(error, this.deps.client().daemonUrl));
	}

	private updateLabels(): void {
		const following = this.thread.exchanges.length > 0;
		this.askButton.setText(following ? PANEL.followUp : PANEL.ask);
		this.newConversationButton.hidden = !following;
	}

	/** A question still streaming is cancelled and its turn removed: a newer one replaces it. */
	private dropInflight(): void {
		this.inflight?.abort();
		this.inflight = null;
		this.inflightTurn?.remove();
		this.inflightTurn = null;
		this.askButton.disabled = false; // the dropped question's `finally` leaves it to whoever took over
	}

	/**
	 * The stream failed before any HTTP answer: either the daemon is down, or the browser side
	 * refused the stream (CORS). `health` through the client tells which.
	 */
	private async answerWithoutStream(
		question: string,
		historyNow: () => HistoryTurn[],
		turn: HTMLElement,
		view: AnswerView,
		signal: AbortSignal,
	): Promise<void> {
		const client = this.deps.client();
		const answer = (history: HistoryTurn[]) =>
			client.answer(question, history.length > 0 ? { audience: "visitor", history } : { audience: "visitor" });
		try {
			await client.health();
			const result = await this.withinLimits(answer, historyNow, signal);
			if (!signal.aborted) this.answered(question, result, view, PANEL.streamFallback);
		} catch (error) {
			if (!signal.aborted) this.failed(turn, view, error);
		}
	}

	/**
	 * Asks the daemon's health and shows what degrades visitors' answers. Quiet when the daemon
	 * cannot be asked: the next question says why, with what to do.
	 */
	async checkHealth(): Promise<void> {
		try {
			const client = this.deps.client();
			this.showHealth(healthNotices(await client.health(), { tokenSent: client.sendsToken, daemonUrl: client.daemonUrl }));
		} catch {
			this.showHealth([]);
		}
	}

	showHealth(notices: HealthNotice[]): void {
		this.healthEl.empty();
		renderHealthNotices(this.healthEl, notices);
	}

	showNoteTest(report: NoteTestReport): void {
		this.reset();
		renderNoteTest(this.resultEl, report);
	}

	showFailure(error: unknown): void {
		this.reset();
		renderFailure(this.resultEl, describeFailure(error, this.deps.client().daemonUrl));
	}

	destroy(): void {
		this.dropInflight();
		this.root.empty();
	}
}

function canFallBack(error: unknown): boolean {
	if (error instanceof DaemonNotRunningError) return true;
	return error instanceof HttpError && (error.status === 404 || error.status === 405);
}
