// The test page's script: the REAL preview panel (src/preview.ts) wired the way src/main.ts
// wires it (JSON-RPC client over HTTP, stream through window.fetch), mounted in a plain div.
// Bundled by preview.test.ts with esbuild; the DOM helpers Obsidian adds come from the
// unit tests' polyfill.
import "../setup-dom.mjs";
import { GrasbotClient } from "../../src/client";
import { PreviewPanel } from "../../src/preview";
import { streamAnswer } from "../../src/sse";
import { type FetchLike, fetchTransport } from "../../src/transport";

const root = document.getElementById("app");
if (!root?.dataset.daemon) throw new Error("the test page needs <div id=app data-daemon=URL>");
const daemonUrl = root.dataset.daemon;
const fetchFn: FetchLike = (url, init) => window.fetch(url, init);
const client = new GrasbotClient({ daemonUrl, transport: fetchTransport(fetchFn) });

new PreviewPanel(root, {
	client: () => client,
	stream: (q, handlers, signal, history) => streamAnswer(q, handlers, { daemonUrl, fetch: fetchFn, signal, history }),
	onOpenSource: (source) => {
		root.dataset.opened = source.path;
	},
});
root.dataset.ready = "true";
