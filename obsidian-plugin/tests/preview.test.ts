import { describe, expect, it, vi } from "vitest";
import { DaemonNotRunningError, HttpError, RpcError, StreamCutError, TokenRefusedError } from "../src/errors";
import { PANEL } from "../src/messages";
import { PreviewPanel, type PreviewDeps } from "../src/preview";
import type { AnswerResult, HistoryTurn } from "../src/protocol";
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

function deps(
	overrides: Partial<PreviewDeps> & {
		answer?: (q: string, options: { history?: HistoryTurn[] }) => Promise<AnswerResult>;
		health?: () => Promise<unknown>;
		checkToken?: () => Promise<void>;
	} = {},
) {
	const answer = vi.fn(overrides.answer ?? (async () => result));
	const health = vi.fn(overrides.health ?? (async () => ({ status: "ok" })));
	const checkToken = vi.fn(overrides.checkToken ?? (async () => undefined));
	const d: PreviewDeps = {
		client: () => ({ daemonUrl: URL, answer, health, checkToken }) as unknown as ReturnType<PreviewDeps["client"]>,
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
	return { d, answer, health, checkToken };
}

describe("PreviewPanel mounted in a plain div", () => {
	it("shows above the question what on the daemon degrades visitors' answers, nothing when all is well or the daemon cannot say", async () => {
		const root = createDiv();
		const question_log = { state: "off", kept: null, dropped: null, error: "open: unable to open database file" };
		const degraded = { status: "ok", vault_size: 41, model: "qwen3:8b", llm_reachable: true, version: "3.2.0", semantic: null, hosts: null, question_log };
		let health: () => Promise<unknown> = async () => degraded;
		const panel = new PreviewPanel(root, deps({ health: () => health() }).d);
		await panel.checkHealth();
		expect(root.firstElementChild?.className).toBe("grasbot-health");
		expect([...root.querySelectorAll(".grasbot-health .grasbot-state-degraded .grasbot-state-title")].map((e) => e.textContent)).toEqual([
			"Les questions des visiteurs ne sont pas journalisées",
		]);
		expect(root.querySelector(".grasbot-health .grasbot-state-detail")?.textContent).toContain("open: unable to open database file.");
		health = async () => ({ ...degraded, question_log: { state: "on", kept: null, dropped: null, error: null } });
		await panel.checkHealth();
		expect(root.querySelector(".grasbot-health")?.children).toHaveLength(0);
		health = async () => degraded;
		await panel.checkHealth();
		health = () => Promise.reject(new DaemonNotRunningError(URL, "refused"));
		await panel.checkHealth();
		expect(root.querySelector(".grasbot-health")?.children).toHaveLength(0);
	});

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

	it("sends no question when the daemon does not take the token set, and says so in French with the fix", async () => {
		const root = createDiv();
		const stream = vi.fn();
		const refused = () => Promise.reject(new TokenRefusedError("token_refused", URL));
		const { d, answer, checkToken } = deps({ stream, checkToken: refused });
		const panel = new PreviewPanel(root, d);
		await panel.ask("C'est quoi push swap ?");
		expect(checkToken).toHaveBeenCalledTimes(1);
		expect(stream).not.toHaveBeenCalled();
		expect(answer).not.toHaveBeenCalled();
		expect(root.querySelector(".grasbot-state-title")?.textContent).toBe("Jeton d'accès refusé par le démon");
		expect(root.querySelector(".grasbot-state-detail")?.textContent).toContain("~/.config/grasbot/token");
		expect(panel.askButton.disabled).toBe(false);
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

	it("falls back to the answer method when the daemon has no stream endpoint", async () => {
		const root = createDiv();
		const { d, answer } = deps({ stream: () => Promise.reject(new HttpError(404, '{"error": {"code": -32600}}')) });
		await new PreviewPanel(root, d).ask("q");
		expect(answer).toHaveBeenCalledWith("q", { audience: "visitor" });
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe(result.response);
	});

	it("gives the Ask button back when a new conversation or a note test drops a question in flight", async () => {
		for (const drop of ["new conversation", "note test"] as const) {
			let release: (value: AnswerResult) => void = () => undefined;
			const stream = vi.fn(
				(_q: string, _handlers: unknown, signal: AbortSignal) =>
					new Promise<AnswerResult>((resolve, reject) => {
						release = resolve;
						signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
					}),
			);
			const panel = new PreviewPanel(createDiv(), deps({ stream }).d);
			const asked = panel.ask("q");
			await vi.waitFor(() => expect(stream).toHaveBeenCalled());
			expect(panel.askButton.disabled).toBe(true);
			if (drop === "new conversation") panel.newConversation();
			else panel.showNoteTest({ kind: "no-questions", slug: "a" });
			release(result);
			await asked;
			expect(panel.askButton.disabled, drop).toBe(false);
		}
	});

	it("falls back to the answer method when the stream is refused but the daemon is up", async () => {
		const root = createDiv();
		const { d, answer } = deps({ stream: () => Promise.reject(new DaemonNotRunningError(URL, "CORS")) });
		await new PreviewPanel(root, d).ask("q");
		expect(answer).toHaveBeenCalledWith("q", { audience: "visitor" });
		expect(root.querySelector(".grasbot-note")?.textContent).toBe(PANEL.streamFallback);
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe(result.response);
	});

	it("says an answer cut mid-stream, keeps what came and the question, and gives the Ask button back", async () => {
		const root = createDiv();
		const { d, answer } = deps({
			stream: async (_q, handlers) => {
				handlers.onToken?.("Push_swap ");
				throw new StreamCutError(URL, "network error");
			},
		});
		const panel = new PreviewPanel(root, d);
		panel.questionEl.value = "c'est quoi push_swap ?";
		await panel.ask(panel.questionEl.value);
		expect(root.querySelector(".grasbot-state-not-running .grasbot-state-title")?.textContent).toBe("Réponse interrompue");
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe("Push_swap ");
		expect(root.querySelector(".grasbot-answer-status")?.textContent).not.toContain("Asking the daemon");
		expect(panel.askButton.disabled).toBe(false);
		expect(panel.questionEl.value).toBe("c'est quoi push_swap ?");
		expect(answer).not.toHaveBeenCalled(); // asked again only when the author says so
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
		await vi.waitFor(() => expect(first).toBeDefined()); // past the token check, streaming
		await panel.ask("two");
		await one;
		expect(first?.aborted).toBe(true);
		expect(root.querySelectorAll(".grasbot-answer")).toHaveLength(1);
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe("two");
		expect(root.querySelector(".grasbot-state")).toBeNull();
	});
});

describe("PreviewPanel follow-ups", () => {
	const answered = (response: string): AnswerResult => ({ ...result, response });

	it("asks a follow-up with the thread's history, then starts over on New conversation", async () => {
		const calls: { q: string; history: unknown }[] = [];
		const stream = vi.fn(async (q: string, _h: unknown, _s: AbortSignal, history: unknown) => {
			calls.push({ q, history });
			return answered(`réponse à ${q}`);
		});
		const root = createDiv();
		const panel = new PreviewPanel(root, deps({ stream }).d);
		expect(panel.askButton.textContent).toBe("Demander en visiteur");
		expect(panel.newConversationButton.hidden).toBe(true);
		await panel.ask("C'est quoi push swap ?");
		expect(panel.askButton.textContent).toBe("Poursuivre en visiteur");
		expect(panel.newConversationButton.hidden).toBe(false);
		await panel.ask("Et en quel langage ?");
		expect(calls[0].history).toEqual([]);
		expect(calls[1].history).toEqual([
			{ role: "user", content: "C'est quoi push swap ?" },
			{ role: "assistant", content: "réponse à C'est quoi push swap ?" },
		]);
		// both turns stay on screen, each with its question
		expect([...root.querySelectorAll(".grasbot-turn-question")].map((el) => el.textContent)).toEqual([
			"C'est quoi push swap ?",
			"Et en quel langage ?",
		]);
		expect(root.querySelectorAll(".grasbot-answer")).toHaveLength(2);

		panel.newConversationButton.click();
		expect(root.querySelectorAll(".grasbot-turn")).toHaveLength(0);
		expect(panel.askButton.textContent).toBe("Demander en visiteur");
		await panel.ask("Autre chose ?");
		expect(calls[2].history).toEqual([]);
	});

	it("keeps 4 exchanges at most in what it sends", async () => {
		const histories: unknown[][] = [];
		const stream = vi.fn(async (q: string, _h: unknown, _s: AbortSignal, history: unknown[]) => {
			histories.push(history);
			return answered(`r ${q}`);
		});
		const panel = new PreviewPanel(createDiv(), deps({ stream }).d);
		for (let i = 1; i <= 6; i++) await panel.ask(`q${i}`);
		expect(histories.map((h) => h.length)).toEqual([0, 2, 4, 6, 8, 8]);
		expect(histories[5][0]).toEqual({ role: "user", content: "q2" });
	});

	it("holds to the lower history limits a daemon's refusal names, and asks again within them", async () => {
		const histories: { content: string }[][] = [];
		// the limits in `data`'s fields, whatever its sentence says (a later wording, here)
		const refused = (fields: object) => new RpcError("ask/stream", -32602, "Invalid params", { reason: "historique refusé", param: "history", ...fields });
		const stream = vi.fn(async (q: string, _h: unknown, _s: AbortSignal, history: { content: string }[]) => {
			histories.push(history);
			if (history.length > 4) throw refused({ max_history: 4 });
			if (history.some((t) => t.content.length > 500)) throw refused({ max_turn: 500 });
			return answered("r".repeat(900));
		});
		const root = createDiv();
		const panel = new PreviewPanel(root, deps({ stream }).d);
		for (const q of ["un", "deux", "trois", "quatre"]) await panel.ask(q);
		expect(root.querySelector(".grasbot-turn-failed")).toBeNull();
		expect(histories.map((h) => h.length)).toEqual([0, 2, 2, 4, 6, 4]);
		expect(histories[5].map((t) => t.content.length)).toEqual([4, 500, 5, 500]);
	});

	it("does not keep a failed question in the thread", async () => {
		let fail = false;
		const histories: unknown[][] = [];
		const stream = vi.fn(async (q: string, _h: unknown, _s: AbortSignal, history: unknown[]) => {
			histories.push(history);
			if (fail) throw new HttpError(500, "boom");
			return answered(`r ${q}`);
		});
		const root = createDiv();
		const panel = new PreviewPanel(root, deps({ stream }).d);
		await panel.ask("un");
		fail = true;
		await panel.ask("deux");
		expect(root.querySelector(".grasbot-state-daemon-error")).not.toBeNull();
		fail = false;
		await panel.ask("trois");
		expect(histories[2]).toEqual([
			{ role: "user", content: "un" },
			{ role: "assistant", content: "r un" },
		]);
		expect(root.querySelector(".grasbot-state-daemon-error")).toBeNull(); // the failed turn made room
		expect(root.querySelectorAll(".grasbot-turn")).toHaveLength(2);
	});

	it("sends the history to the answer method too when it falls back", async () => {
		let first = true;
		const stream = vi.fn(async () => {
			if (first) {
				first = false;
				return answered("r un");
			}
			throw new DaemonNotRunningError(URL, "CORS");
		});
		const { d, answer } = deps({ stream });
		const panel = new PreviewPanel(createDiv(), d);
		await panel.ask("un");
		await panel.ask("deux");
		expect(answer).toHaveBeenCalledWith("deux", {
			audience: "visitor",
			history: [
				{ role: "user", content: "un" },
				{ role: "assistant", content: "r un" },
			],
		});
	});

	it("holds to the lower history limits an older daemon's refusal names in its sentence alone, when it falls back to the answer method too", async () => {
		const histories: HistoryTurn[][] = [];
		const answer = vi.fn(async (q: string, options: { history?: HistoryTurn[] }) => {
			const history = options.history ?? [];
			histories.push(history);
			if (history.length > 2) throw new RpcError("answer", -32602, "Invalid params", `history: must have at most 2 items (got ${history.length})`);
			return answered(`r ${q}`);
		});
		const { d } = deps({ stream: () => Promise.reject(new HttpError(404, "no /ask/stream")), answer });
		const root = createDiv();
		const panel = new PreviewPanel(root, d);
		for (const q of ["un", "deux", "trois"]) await panel.ask(q);
		expect(root.querySelector(".grasbot-turn-failed")).toBeNull();
		expect(histories.map((h) => h.length)).toEqual([0, 2, 4, 2]);
		expect(histories[3].map((t) => t.content)).toEqual(["deux", "r deux"]);
		expect([...root.querySelectorAll(".grasbot-answer-text")].map((el) => el.textContent)).toEqual(["r un", "r deux", "r trois"]);
	});

	it("shows a hostile note and a hostile reply as text", async () => {
		const hostileTitle = "Balise <script>window.__grasbotInjected = 1</script>";
		const hostileReply = 'Voici <script>window.__grasbotInjected = 4</script> et <img src="x" onerror="window.__grasbotInjected = 2">';
		const hostile: AnswerResult = { ...result, response: hostileReply, sources: [source("balise", 3, { title: hostileTitle })] };
		const stream = vi.fn(async (_q: string, handlers: Parameters<PreviewDeps["stream"]>[1]) => {
			handlers.onSources?.(hostile.sources, true);
			handlers.onToken?.(hostileReply);
			return hostile;
		});
		const root = createDiv();
		const panel = new PreviewPanel(root, deps({ stream }).d);
		await panel.ask("<b>question</b>");
		await panel.ask("encore");
		expect(root.querySelectorAll("script, img, b")).toHaveLength(0);
		expect(root.querySelector(".grasbot-turn-question")?.textContent).toBe("<b>question</b>");
		expect([...root.querySelectorAll(".grasbot-answer-text")].map((el) => el.textContent)).toEqual([hostileReply, hostileReply]);
		expect(root.textContent).toContain(hostileTitle);
		expect((window as unknown as { __grasbotInjected?: unknown }).__grasbotInjected).toBeUndefined();
	});
});
