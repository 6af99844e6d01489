// The test page's script: the Obsidian DOM helpers, then the same harness the happy-dom tests
// use, driven from the Chromium runner through `window.aliasTest`.
import "../setup-dom.mjs";
import { RPC_NOTE_NOT_FOUND, RpcError } from "../../src/errors";
import type { AliasSuggestions } from "../../src/protocol";
import { type Harness, mountHarness } from "./harness";

const RESULT: AliasSuggestions = {
	slug: "push-swap",
	suggestions: [
		{ alias: "projet de tri", source: "link_text", evidence: ["competences/algorithmique.md : [[push-swap|projet de tri]]"], score: 0.82 },
		{ alias: "tri avec deux piles", source: "visitor_question", evidence: ["comment trier avec deux piles ?", "c'est quoi le tri à deux piles"], score: 0.64 },
		{ alias: "push_swap 42", source: "ungrounded_question", evidence: ["push_swap 42 note"], score: 0.41 },
	],
};

let current: Harness | null = null;

const api = {
	async mount(doc: string, savedData: string | null, known: boolean, livePreview = false): Promise<void> {
		current?.destroy();
		const parent = document.getElementById("editor") as HTMLElement;
		current = mountHarness(parent, {
			path: "projets/push-swap.md",
			doc,
			savedData,
			token: "tok",
			livePreview,
			suggest: async () => {
				if (!known) throw new RpcError("suggest_aliases", RPC_NOTE_NOT_FOUND, "Note not found");
				return RESULT;
			},
		});
		await current.open();
		await new Promise((resolve) => window.setTimeout(resolve, 0));
	},
	async open(): Promise<void> {
		await current?.open();
	},
	setLivePreview(on: boolean): void {
		current?.setLivePreview(on);
	},
	text(): string {
		return current?.view.state.doc.toString() ?? "";
	},
	saved(): string | null {
		return current?.saved() ?? null;
	},
};

Object.assign(window, { aliasTest: api });
