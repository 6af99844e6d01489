/**
 * Draws answers, sources, failures and note tests with createEl/setText only: the daemon's
 * text (answers, titles, reasons) may contain anything a note contains, `<script>` included,
 * and must show as text, never be parsed as HTML.
 */

import type { FailureState } from "./errors";
import type { HealthNotice } from "./health";
import { renderMarkdown } from "./markdown";
import { ANSWER, NOTE_TEST, RELOAD, VISITOR_NOTES, groundedBadgeText } from "./messages";
import type { NoteTestReport } from "./noteTest";
import type { AnswerResult, Passage, ReloadResult, Source } from "./protocol";

export interface RenderOptions {
	/** Opens the note behind a source (by its vault path), at a passage's heading when given; absent in plain previews. */
	onOpenSource?: (source: Source, passage?: Passage) => void;
}

/** A title or heading as a reader tells two apart: not by case, spacing or Unicode form (the daemon's prompt labels read them so). */
const asName = (text: string): string => text.normalize("NFC").toLowerCase().split(/\s+/).filter(Boolean).join(" ");

/** What a passage is, in a line: its heading path (the note's title said once), or what it stands for. */
export function passageLabel(source: Source, passage: Passage): string {
	return passageHeadings(source, passage)?.join(" › ") ?? (source.passages.length === 1 ? ANSWER.wholeNote : ANSWER.opening);
}

/** The passage's heading path without the note's title, or null when that leaves none. */
function passageHeadings(source: Source, passage: Passage): string[] | null {
	const first = passage.heading[0];
	const heading = first !== undefined && asName(first) === asName(source.title) ? passage.heading.slice(1) : passage.heading;
	return heading.length > 0 ? heading : null;
}

/**
 * A note's text (a title, a type, a heading, a reason quoting them) drawn apart from what is
 * around it, as the site's chat draws it: a right-to-left override it leaves open (U+202E, from
 * a clipped page) turned the card's score, type or next heading right to left.
 */
const ISOLATED = { dir: "auto" } as const;

/** `parts` in `el`, each isolated from the others, ` › ` between them. */
function isolatedParts(el: HTMLElement, parts: string[]): void {
	parts.forEach((part, i) => {
		if (i > 0) el.appendText(" › ");
		el.createEl("bdi", { text: part });
	});
}

export function formatChars(chars: number): string {
	return ANSWER.chars(chars);
}

/**
 * Under a source: which of its passages the answer was written from, and how long each is:
 * those sent to the model, or, for an answer built without it (`quoted`), those its extracts
 * quote (the daemon reports those alone then).
 */
export function renderPassages(parent: HTMLElement, source: Source, options: RenderOptions = {}, quoted = false): HTMLElement {
	const box = parent.createDiv({ cls: "grasbot-passages" });
	if (source.passages.length === 0) {
		box.createDiv({ cls: "grasbot-passages-none", text: quoted ? ANSWER.noneQuoted : ANSWER.noneSent });
		return box;
	}
	box.createDiv({ cls: "grasbot-passages-title", text: quoted ? ANSWER.quoted : ANSWER.sent });
	const list = box.createEl("ul", { cls: "grasbot-passage-list" });
	for (const passage of source.passages) {
		const row = list.createEl("li", { cls: "grasbot-passage" });
		const headings = passageHeadings(source, passage);
		const label = headings ? "" : passageLabel(source, passage);
		if (options.onOpenSource && passage.heading.length > 0) {
			const link = row.createEl("a", { cls: "grasbot-passage-link", text: label, href: "#" });
			if (headings) isolatedParts(link, headings);
			const open = options.onOpenSource;
			link.addEventListener("click", (event) => {
				event.preventDefault();
				open(source, passage);
			});
		} else {
			const span = row.createSpan({ cls: "grasbot-passage-heading", text: label });
			if (headings) isolatedParts(span, headings);
		}
		row.createSpan({ cls: "grasbot-passage-chars", text: formatChars(passage.chars) });
	}
	return box;
}

export function formatPoints(points: number): string {
	const rounded = Math.round(points * 10) / 10;
	return `${rounded >= 0 ? "+" : ""}${rounded.toFixed(1)}`;
}

export function renderBadge(parent: HTMLElement, grounded: boolean, noteCount: number): HTMLElement {
	return parent.createSpan({
		cls: ["grasbot-badge", grounded ? "grasbot-badge-grounded" : "grasbot-badge-general"],
		text: groundedBadgeText(grounded, noteCount),
	});
}

/**
 * How many notes an answer is « basé sur », as the site's chat counts them: those it was written
 * from, a passage each at least (a missing `passages` reads as none, as the protocol says). None
 * read is an answer from no note, « réponse généraliste » on the chat whatever the ranking found.
 */
export function notesRead(sources: Source[]): number {
	return sources.filter((source) => source.passages.length > 0).length;
}

export function renderSources(parent: HTMLElement, sources: Source[], options: RenderOptions = {}, quoted = false): HTMLElement {
	const list = parent.createEl("ol", { cls: "grasbot-sources" });
	for (const source of sources) {
		const item = list.createEl("li", { cls: "grasbot-source" });
		const head = item.createDiv({ cls: "grasbot-source-head" });
		if (options.onOpenSource) {
			const link = head.createEl("a", {
				cls: "grasbot-source-link",
				text: source.title,
				href: "#",
				attr: { "data-slug": source.slug, "data-path": source.path, ...ISOLATED },
			});
			const open = options.onOpenSource;
			link.addEventListener("click", (event) => {
				event.preventDefault();
				open(source);
			});
		} else {
			head.createSpan({ cls: "grasbot-source-title", text: source.title, attr: ISOLATED });
		}
		head.createSpan({ cls: "grasbot-source-score", text: ANSWER.score(source.score.toFixed(1)) });
		const meta = item.createDiv({ cls: "grasbot-source-meta", text: source.slug });
		if (source.type) {
			if (source.slug) meta.appendText(" · ");
			meta.createEl("bdi", { text: source.type });
		}
		if (source.reasons.length > 0) {
			const reasons = item.createEl("ul", { cls: "grasbot-reasons" });
			for (const reason of source.reasons) {
				const row = reasons.createEl("li", { cls: "grasbot-reason" });
				row.createSpan({ cls: "grasbot-reason-signal", text: reason.signal });
				row.createSpan({ cls: "grasbot-reason-points", text: formatPoints(reason.points) });
				row.createSpan({ cls: "grasbot-reason-detail", text: reason.detail, attr: ISOLATED });
			}
		}
		renderPassages(item, source, options, quoted);
	}
	return list;
}

/**
 * The answer panel, filled as the stream arrives: sources first, then tokens as plain text,
 * then the final answer as Markdown, as the chat page shows it (it replaces the streamed text,
 * so a lost token cannot stay wrong).
 */
export class AnswerView {
	readonly el: HTMLElement;
	private readonly statusEl: HTMLElement;
	private readonly textEl: HTMLElement;
	private readonly metaEl: HTMLElement;
	private readonly sourcesEl: HTMLElement;
	private streamed = "";

	constructor(parent: HTMLElement, private readonly options: RenderOptions = {}) {
		this.el = parent.createDiv({ cls: "grasbot-answer" });
		this.statusEl = this.el.createDiv({ cls: "grasbot-answer-status" });
		this.textEl = this.el.createDiv({ cls: "grasbot-answer-text" });
		this.metaEl = this.el.createDiv({ cls: "grasbot-answer-meta" });
		this.sourcesEl = this.el.createDiv({ cls: "grasbot-answer-sources" });
	}

	setStatus(text: string): void {
		this.statusEl.setText(text);
	}

	/** `quoted`: the answer was built without the model, its sources' passages those it quotes. */
	setSources(sources: Source[], grounded: boolean, quoted = false): void {
		this.sourcesEl.empty();
		this.metaEl.empty();
		const read = notesRead(sources);
		renderBadge(this.metaEl, grounded && read > 0, read);
		if (sources.length > 0) renderSources(this.sourcesEl, sources, this.options, quoted);
	}

	appendToken(text: string): void {
		this.streamed += text;
		this.textEl.setText(this.streamed);
	}

	complete(result: AnswerResult, note?: string): void {
		this.statusEl.empty();
		if (note) this.statusEl.createDiv({ cls: "grasbot-note", text: note });
		this.streamed = result.response;
		this.textEl.empty();
		this.textEl.addClass("grasbot-md");
		const bySlug = new Map(result.sources.map((source) => [source.slug, source]));
		renderMarkdown(this.textEl, result.response, {
			cite: (slug) => bySlug.get(slug) ?? null,
			open: this.options.onOpenSource,
		});
		this.setSources(result.sources, result.grounded, result.model === null);
		// An answer built without the model, as the chat tells it (`busy`: every generation slot
		// was taken; the owner has a slot of its own), with why the model failed for the owner.
		if (result.busy || result.llm_error || result.model === null) {
			const label = this.metaEl.createDiv({ cls: "grasbot-llm-fallback" });
			label.createSpan({ cls: "grasbot-llm-fallback-label", text: result.busy ? VISITOR_NOTES.busy : VISITOR_NOTES.fallback });
			if (result.llm_error) label.createSpan({ cls: "grasbot-llm-fallback-detail", text: result.llm_error });
		}
		if (result.reused) {
			const label = this.metaEl.createDiv({ cls: "grasbot-reused" });
			label.createSpan({ cls: "grasbot-reused-label", text: ANSWER.reused });
			label.createSpan({ cls: "grasbot-reused-detail", text: ANSWER.reusedDetail });
		}
		const facts: string[] = [];
		if (result.model && !result.llm_error) facts.push(ANSWER.model(result.model));
		if (result.vault_size !== null) facts.push(ANSWER.vaultSize(result.vault_size));
		if (facts.length > 0) this.metaEl.createDiv({ cls: "grasbot-answer-facts", text: facts.join(" · ") });
	}

	fail(state: FailureState): void {
		this.statusEl.empty();
		renderFailure(this.statusEl, state);
	}
}

/** A complete answer at once (the non-streamed path). */
export function renderAnswer(parent: HTMLElement, result: AnswerResult, options: RenderOptions = {}): AnswerView {
	const view = new AnswerView(parent, options);
	view.complete(result);
	return view;
}

export function renderFailure(parent: HTMLElement, state: FailureState): HTMLElement {
	const box = parent.createDiv({ cls: ["grasbot-state", `grasbot-state-${state.kind}`] });
	box.createDiv({ cls: "grasbot-state-title", text: state.title });
	box.createDiv({ cls: "grasbot-state-detail", text: state.detail });
	return box;
}

/** The daemon's troubles that degrade visitors' answers, drawn as the failure states are. */
export function renderHealthNotices(parent: HTMLElement, notices: HealthNotice[]): void {
	for (const notice of notices) {
		const box = parent.createDiv({ cls: ["grasbot-state", notice.problem ? "grasbot-state-degraded" : "grasbot-state-progress"] });
		box.createDiv({ cls: "grasbot-state-title", text: notice.title });
		box.createDiv({ cls: "grasbot-state-detail", text: notice.detail });
	}
}

export function noteTestSummary(report: NoteTestReport): string {
	switch (report.kind) {
		case "private":
			return NOTE_TEST.private;
		case "no-questions":
			return NOTE_TEST.noQuestions;
		case "tested": {
			const first = report.outcomes.filter((o) => o.status === "first").length;
			return NOTE_TEST.tested(first, report.outcomes.length);
		}
	}
}

export function renderNoteTest(parent: HTMLElement, report: NoteTestReport): HTMLElement {
	const box = parent.createDiv({ cls: ["grasbot-note-test", `grasbot-note-test-${report.kind}`] });
	box.createDiv({ cls: "grasbot-note-test-title", text: NOTE_TEST.title(report.slug) });
	box.createDiv({ cls: "grasbot-note-test-summary", text: noteTestSummary(report) });
	if (report.kind === "private") {
		box.createDiv({ cls: "grasbot-state-detail", text: report.reason });
		return box;
	}
	if (report.kind === "no-questions") {
		box.createDiv({ cls: "grasbot-state-detail", text: NOTE_TEST.addQuestions });
		return box;
	}
	const list = box.createEl("ul", { cls: "grasbot-note-test-list" });
	for (const outcome of report.outcomes) {
		const row = list.createEl("li", { cls: ["grasbot-outcome", `grasbot-outcome-${outcome.status}`] });
		row.createDiv({ cls: "grasbot-outcome-question", text: outcome.question });
		let verdict: string;
		if (outcome.status === "first") verdict = NOTE_TEST.first(outcome.score.toFixed(1));
		else if (outcome.status === "lower") {
			verdict = NOTE_TEST.lower(outcome.rank, outcome.score.toFixed(1), outcome.beatenBy.slug, outcome.beatenBy.score.toFixed(1));
		} else {
			verdict = outcome.beatenBy ? NOTE_TEST.absentBehind(outcome.beatenBy.slug, outcome.beatenBy.score.toFixed(1)) : NOTE_TEST.absent;
		}
		row.createDiv({ cls: "grasbot-outcome-verdict", text: verdict });
	}
	if (report.visibilityHint) box.createDiv({ cls: "grasbot-state-detail", text: report.visibilityHint });
	return box;
}

/** The Notice after a reload: vault size, then each note that failed and why. */
export function formatReloadNotice(result: ReloadResult, maxListed = 5): string {
	const lines = [RELOAD.done(result.vault_size, result)];
	if (result.errors.length > 0) {
		lines.push(RELOAD.failed(result.errors.length));
		for (const issue of result.errors.slice(0, maxListed)) lines.push(`• ${issue.path} : ${issue.message}`);
		if (result.errors.length > maxListed) lines.push(RELOAD.more(result.errors.length - maxListed));
	}
	const behind = failedPeers(result);
	if (behind.length > 0) {
		lines.push(RELOAD.peersBehind(behind.length, result.peers.length));
		for (const peer of behind) lines.push(`• ${peer.url} : ${peer.error ?? RELOAD.noReason}`);
		if (behind.some(refusedToken)) lines.push(RELOAD.peerToken);
	} else if (result.peers.length > 0) {
		lines.push(RELOAD.peersDone(result.peers.length));
	}
	return lines.join("\n");
}

/** A peer that refused the owner token: its `status` 401, or, from an older daemon without
 * `status`, its `error`'s « HTTP 401 ». */
function refusedToken(peer: ReloadResult["peers"][number]): boolean {
	return peer.status === null ? /^HTTP 401\b/.test(peer.error ?? "") : peer.status === 401;
}

/** The other daemons a reload was passed on to that did not reload (down, or refusing the token). */
export function failedPeers(result: ReloadResult): ReloadResult["peers"] {
	return result.peers.filter((peer) => !peer.ok);
}
