import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { HistoryTurn } from "../src/protocol";
import { MAX_EXCHANGES, MAX_TURN_CHARS, MAX_URL, PROTOCOL_LIMITS, Thread, historyFor, lowerLimits, streamUrl } from "../src/thread";

const exchange = (i: number, answer = `réponse ${i}`) => ({ q: `question ${i}`, answer });

describe("historyFor: what a follow-up is sent with", () => {
	it("sends the last question alone to a daemon that takes one turn", () => {
		const one = lowerLimits(PROTOCOL_LIMITS, "history: must have at most 1 items (got 8)");
		expect(one).toEqual({ ...PROTOCOL_LIMITS, turns: 1 });
		const exchanges = [1, 2, 3].map((i) => exchange(i));
		expect(historyFor(exchanges, undefined, one ?? PROTOCOL_LIMITS)).toEqual([{ role: "user", content: "question 3" }]);
		expect(historyFor(exchanges, () => false, one ?? PROTOCOL_LIMITS)).toEqual([]);
		expect(lowerLimits(PROTOCOL_LIMITS, "q: must be at most 500 characters (got 600)")).toBeNull();
	});

	it("is empty for the first question", () => {
		expect(historyFor([])).toEqual([]);
	});

	it("sends user/assistant pairs, oldest first", () => {
		expect(historyFor([exchange(1), exchange(2)])).toEqual([
			{ role: "user", content: "question 1" },
			{ role: "assistant", content: "réponse 1" },
			{ role: "user", content: "question 2" },
			{ role: "assistant", content: "réponse 2" },
		]);
	});

	it("keeps the last 4 exchanges (the daemon's 8 turns), dropping the oldest", () => {
		const history = historyFor([1, 2, 3, 4, 5, 6].map((i) => exchange(i)));
		expect(history).toHaveLength(8);
		expect(history[0].content).toBe("question 3");
		expect(history[7].content).toBe("réponse 6");
	});

	it("cuts a turn to the daemon's 2,000 characters", () => {
		const [, assistant] = historyFor([exchange(1, "é".repeat(5000))]);
		expect(assistant.content).toHaveLength(MAX_TURN_CHARS);
	});

	it("drops exchanges, oldest first, until the URL fits under nginx's request line", () => {
		const long = [1, 2, 3, 4].map((i) => exchange(i, "é".repeat(1900)));
		const fits = (h: Parameters<typeof streamUrl>[2]) => streamUrl("http://127.0.0.1:8765", "et alors ?", h).length <= MAX_URL;
		const history = historyFor(long, fits);
		expect(fits(history)).toBe(true);
		expect(history.length).toBeLessThan(8);
		expect(history[history.length - 1].content).toBe("é".repeat(1900).slice(0, history[history.length - 1].content.length));
		expect(history[history.length - 2].content).toBe("question 4"); // the newest stays
		expect(fits(historyFor(long))).toBe(false); // without the check it would not fit
	});

	it("cuts the one exchange left when even it does not fit", () => {
		const fits = (h: Parameters<typeof streamUrl>[2]) => JSON.stringify(h).length <= 300;
		const answer = "0123456789".repeat(200);
		const history = historyFor([exchange(1, answer)], fits);
		expect(history).toHaveLength(2);
		expect(history[0]).toEqual({ role: "user", content: "question 1" });
		expect(history[1].role).toBe("assistant");
		// the answer's beginning, no shorter than half of the most that fits
		const room = 300 - JSON.stringify(historyFor([exchange(1, "")])).length;
		expect(answer.startsWith(history[1].content)).toBe(true);
		expect(history[1].content.length).toBeGreaterThanOrEqual(room / 2);
		expect(fits(history)).toBe(true);
	});
});

describe("Thread", () => {
	it("keeps a short thread and forgets it on clear", () => {
		const thread = new Thread();
		for (let i = 1; i <= 6; i++) thread.add(`question ${i}`, `réponse ${i}`);
		expect(thread.exchanges.map((e) => e.q)).toEqual(["question 3", "question 4", "question 5", "question 6"]);
		thread.clear();
		expect(thread.history()).toEqual([]);
	});
});

describe("streamUrl", () => {
	it("sends history as JSON in the query string, only when there is one", () => {
		expect(streamUrl("http://d", "q ?", [])).toBe("http://d/ask/stream?q=q%20%3F");
		const url = new URL(streamUrl("http://d", "q", [{ role: "user", content: "a&b" }]));
		expect(JSON.parse(url.searchParams.get("history") ?? "")).toEqual([{ role: "user", content: "a&b" }]);
	});
});

// The rule the chat page follows too (daemon/grasbot/server/static/chat.js), as cases both suites run.
type Text = string | { repeat: string; times: number } | Text[];
interface SharedCase {
	name: string;
	exchanges: [Text, Text][];
	budget: number | null;
	expect: [string, Text][];
}
const SHARED = JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "shared-protocol", "cases", "history.json"), "utf8")) as {
	limits: { turns: number; turn_chars: number };
	cases: SharedCase[];
	refusals: { detail: unknown; limits: { turns: number; turn_chars: number } | null }[];
};
const text = (s: Text): string => (Array.isArray(s) ? s.map(text).join("") : typeof s === "string" ? s : s.repeat.repeat(s.times));

describe("historyFor: the shared cases (shared-protocol/cases/history.json)", () => {
	it("has the protocol's limits", () => {
		expect(2 * MAX_EXCHANGES).toBe(SHARED.limits.turns);
		expect(MAX_TURN_CHARS).toBe(SHARED.limits.turn_chars);
		expect(SHARED.cases.length).toBeGreaterThanOrEqual(7);
	});
	for (const c of SHARED.cases) {
		it(c.name, () => {
			const exchanges = c.exchanges.map(([q, answer]) => ({ q: text(q), answer: text(answer) }));
			const fits = (h: HistoryTurn[]) => c.budget === null || h.reduce((n, t) => n + t.content.length, 0) <= c.budget;
			expect(historyFor(exchanges, fits)).toEqual(c.expect.map(([role, content]) => ({ role, content: text(content) })));
		});
	}
});

describe("lowerLimits: a daemon's -32602 says its limits in fields", () => {
	const said = (fields: object) => ({ reason: "l'historique ne passe pas", param: "history", ...fields });

	it("reads max_history and max_turn, whatever the sentence says", () => {
		expect(lowerLimits(PROTOCOL_LIMITS, said({ max_history: 4 }))).toEqual({ ...PROTOCOL_LIMITS, turns: 4 });
		expect(lowerLimits(PROTOCOL_LIMITS, said({ max_turn: 500 }))).toEqual({ ...PROTOCOL_LIMITS, turnChars: 500 });
	});

	it("never reads the sentence of a refusal that has fields", () => {
		const reason = "`history` : doit compter au plus 4 éléments (nombre reçu : 8)";
		expect(lowerLimits(PROTOCOL_LIMITS, { reason, param: "history" })).toBeNull();
		expect(lowerLimits(PROTOCOL_LIMITS, { reason: "1 paramètre inconnu (attendus : q)", expected: ["q"] })).toBeNull();
		expect(lowerLimits(PROTOCOL_LIMITS, { reason: "trop long", param: "q", max_question: 300 })).toBeNull();
	});

	it("takes no limit that is not a whole number of at least 1", () => {
		for (const wrong of [0, -1, 2.5, "4", null]) expect(lowerLimits(PROTOCOL_LIMITS, said({ max_history: wrong }))).toBeNull();
	});
});

describe("lowerLimits: the shared refusals (shared-protocol/cases/history.json)", () => {
	it("has them", () => expect(SHARED.refusals.length).toBeGreaterThanOrEqual(3));
	for (const c of SHARED.refusals) {
		it(JSON.stringify(c.detail), () => {
			const expected = c.limits && { turns: c.limits.turns, turnChars: c.limits.turn_chars };
			expect(lowerLimits(PROTOCOL_LIMITS, c.detail)).toEqual(expected);
		});
	}
});
