import { describe, expect, it, vi } from "vitest";
import { DaemonNotRunningError, HttpError } from "../src/errors";
import { PreviewPanel, STREAM_FALLBACK_NOTE, type PreviewDeps } from "../src/preview";
import type { AnswerResult } from "../src/protocol";
import { source } from "./helpers";

const URL = "http://127.0.0.1:8765";
const result: AnswerResult = {
	response: "Push_swap trie une pile [push-swap].",
	sources: [source("push-swap", 27.4)],
	grounded: true,
	model: "qwen3:8b",
	vault_size: 41,
	llm_error: null,
	busy: false,
	reused: false,
};

function deps(overrides: Partial<PreviewDeps> & { answer?: () => Promise<AnswerResult>; health?: () => Promise<unknown> } = {}) {
	const answer = vi.fn(overrides.answer ?? (async () => result));
	const health = vi.fn(overrides.health ?? (async () => ({ status: "ok" })));
	const d: PreviewDeps = {
		client: () => ({ daemonUrl: URL, answer, health }) as unknown as ReturnType<PreviewDeps["client"]>,
		stream:
			overrides.stream ??
			(async (_q, handlers) => {
				handlers.onSources?.(result.sources, true);
				handlers.onToken?.("Push_swap ");
				handlers.onToken?.("trie une pile [push-swap].");
				return result;
			}),
		onOpenSource: overrides.onOpenSource,
	};
	return { d, answer, health };
}

describe("PreviewPanel mounted in a plain div", () => {
	it("asks through the stream and shows answer, badge and sources", async () => {
		const root = createDiv();
		const open = vi.fn();
		const { d } = deps({ onOpenSource: open });
		const panel = new PreviewPanel(root, d);
		panel.questionEl.value = "C'est quoi push swap ?";
		panel.askButton.click();
		await vi.waitFor(() => expect(root.querySelector(".grasbot-badge")?.textContent).toBe("basé sur 1 note"));
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe(result.response);
		root.querySelector<HTMLAnchorElement>(".grasbot-source-link")?.click();
		expect(open).toHaveBeenCalledWith(result.sources[0]);
	});

	it("ignores an empty question", async () => {
		const stream = vi.fn();
		const panel = new PreviewPanel(createDiv(), deps({ stream }).d);
		await panel.ask("   ");
		expect(stream).not.toHaveBeenCalled();
	});

	it("says the daemon is not running, and how to start it, when nothing answers", async () => {
		const root = createDiv();
		const { d, answer } = deps({
			stream: () => Promise.reject(new DaemonNotRunningError(URL, "Failed to fetch")),
			health: () => Promise.reject(new DaemonNotRunningError(URL, "refused")),
		});
		await new PreviewPanel(root, d).ask("q");
		expect(root.querySelector(".grasbot-state-not-running")).not.toBeNull();
		expect(root.textContent).toContain("grasbot serve");
		expect(answer).not.toHaveBeenCalled();
	});

	it("falls back to the answer method when the stream is refused but the daemon is up", async () => {
		const root = createDiv();
		const { d, answer } = deps({ stream: () => Promise.reject(new DaemonNotRunningError(URL, "CORS")) });
		await new PreviewPanel(root, d).ask("q");
		expect(answer).toHaveBeenCalledWith("q", { audience: "visitor" });
		expect(root.querySelector(".grasbot-note")?.textContent).toBe(STREAM_FALLBACK_NOTE);
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe(result.response);
	});

	it("shows a daemon error as such, without falling back", async () => {
		const root = createDiv();
		const { d, answer } = deps({ stream: () => Promise.reject(new HttpError(500, "boom")) });
		await new PreviewPanel(root, d).ask("q");
		expect(root.querySelector(".grasbot-state-daemon-error")).not.toBeNull();
		expect(answer).not.toHaveBeenCalled();
	});

	it("drops the first answer when a second question is asked before it ends", async () => {
		const root = createDiv();
		let first: AbortSignal | undefined;
		const stream = vi.fn((q: string, _h: unknown, signal: AbortSignal) => {
			if (q === "one") {
				first = signal;
				return new Promise<AnswerResult>((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
			}
			return Promise.resolve({ ...result, response: "two" });
		});
		const panel = new PreviewPanel(root, deps({ stream }).d);
		const one = panel.ask("one");
		await panel.ask("two");
		await one;
		expect(first?.aborted).toBe(true);
		expect(root.querySelectorAll(".grasbot-answer")).toHaveLength(1);
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe("two");
		expect(root.querySelector(".grasbot-state")).toBeNull();
	});
});
