// Alias suggestions in headless Chromium: the real extension (bundled by esbuild with the
// harness of harness.ts) in a page served from 127.0.0.1, driven by playwright-core with
// Debian's chromium. In Source mode (chips on the `aliases:` line) and in Live Preview (the
// frontmatter replaced by a stand-in Properties panel, chips below it): clicks add and dismiss
// like a user, checks the document text, saves test-artifacts/alias-suggestions.png and
// alias-suggestions-live.png. Run: node obsidian-plugin/tests/browser-aliases/run.mjs
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";
import { launchChromium } from "../../../tests/browser/chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const plugin = path.join(here, "..", "..");
const artifacts = path.join(plugin, "..", "test-artifacts");

/** What data.json keeps of a dismissed alias (suggestions.ts `dismissedKey`), for a normalized alias. */
const key = (normalized) => `sha256 ${createHash("sha256").update(normalized).digest("hex").slice(0, 32)}`;

const NOTE = ["---", "title: Push swap", "aliases:", "  - tri de piles", "tags: [c, algo]", "---", "# Push swap", "", "Trier une pile avec une autre.", ""].join("\n");

async function bundle() {
	const result = await esbuild.build({
		entryPoints: [path.join(here, "page.ts")],
		bundle: true,
		format: "iife",
		target: "es2018",
		platform: "browser",
		write: false,
		logLevel: "silent",
	});
	return result.outputFiles[0].text;
}

function page(script) {
	const css = readFileSync(path.join(plugin, "styles.css"), "utf8");
	// Stand-ins for the Obsidian theme variables styles.css uses.
	const theme = `body{font-family:sans-serif;--font-interface:sans-serif;--font-ui-smaller:12px;--size-2-1:2px;--size-2-2:4px;--size-4-1:4px;--size-4-2:8px;--radius-s:4px;--text-muted:#555;--text-faint:#888;--interactive-accent:#7b6cd9;--background-secondary:#f2f2f2;--background-modifier-border-hover:#aaa} #editor{width:900px;border:1px solid #ccc;font-family:monospace}
	.harness-properties{font-family:sans-serif;font-size:13px;padding:6px 8px;border-bottom:1px solid #e4e4e4}
	.harness-properties-heading{font-weight:600;margin-bottom:4px}
	.harness-property{display:flex;gap:16px;padding:2px 0}
	.harness-property-key{width:120px;color:#555}
	.harness-property-pill{background:#ececf8;border-radius:8px;padding:0 6px;margin-right:4px}`;
	return `<!doctype html><html><head><meta charset="utf-8"><title>Alias suggestions</title><style>${theme}\n${css}</style></head><body><div id="editor"></div><script>${script}</script></body></html>`;
}

async function main() {
	const html = page(await bundle());
	const server = createServer((req, res) => {
		if (req.url === "/") {
			res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
			res.end(html);
		} else {
			res.writeHead(404);
			res.end();
		}
	});
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address();
	const profile = mkdtempSync(path.join(tmpdir(), "grasbot-chromium-"));
	const context = await launchChromium({}, profile);
	try {
		const tab = context.pages()[0] ?? (await context.newPage());
		const errors = [];
		tab.on("pageerror", (error) => errors.push(error.message));
		await tab.goto(`http://127.0.0.1:${port}/`);
		await tab.evaluate((doc) => window.aliasTest.mount(doc, null, true), NOTE);

		// The widgets sit on the `aliases:` line, in the daemon's order, with their source on hover.
		const chips = tab.locator(".grasbot-alias-suggestion");
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["projet de tri", "tri avec deux piles", "push_swap 42"]);
		const line = await tab.locator(".grasbot-alias-suggestions").evaluate((el) => el.closest(".cm-line")?.textContent ?? "");
		assert.ok(line.startsWith("aliases:Suggestions :"), line);
		assert.match(await chips.nth(1).getAttribute("title"), /questions de visiteurs qui ont mené à cette note/);
		// Rendered on the same visual row as `aliases:`, to its right.
		const keyBox = await tab.locator(".cm-line", { hasText: "aliases:" }).first().boundingBox();
		const widgetBox = await tab.locator(".grasbot-alias-suggestions").boundingBox();
		assert.ok(widgetBox.x > keyBox.x + 40 && Math.abs(widgetBox.y - keyBox.y) < keyBox.height, JSON.stringify({ keyBox, widgetBox }));
		mkdirSync(artifacts, { recursive: true });
		await tab.locator("#editor").screenshot({ path: path.join(artifacts, "alias-suggestions.png") });

		// Add: a real mouse click on the button puts the alias in the document's aliases list.
		await chips.first().locator(".grasbot-alias-suggestion-add").click();
		await tab.waitForFunction(() => window.aliasTest.text().includes("  - projet de tri\n"));
		assert.equal(await tab.evaluate(() => window.aliasTest.text()), NOTE.replace("  - tri de piles\n", "  - tri de piles\n  - projet de tri\n"));
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["tri avec deux piles", "push_swap 42"]);

		// Dismiss: gone now, after feeding again, and after the plugin data is reloaded.
		await tab.locator('.grasbot-alias-suggestion[data-alias="push_swap 42"] .grasbot-alias-suggestion-dismiss').click();
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["tri avec deux piles"]);
		await tab.evaluate(() => window.aliasTest.open());
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["tri avec deux piles"]);
		await tab.waitForFunction(() => window.aliasTest.saved() !== null);
		const saved = await tab.evaluate(() => window.aliasTest.saved());
		assert.deepEqual(JSON.parse(saved).dismissedAliases, { "projets/push-swap.md": [key("push swap 42")] });
		await tab.evaluate(([doc, data]) => window.aliasTest.mount(doc, data, true), [NOTE, saved]);
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["projet de tri", "tri avec deux piles"]);

		// A note the daemon does not know: no widget, the document untouched.
		await tab.evaluate((doc) => window.aliasTest.mount(doc, null, false), NOTE);
		assert.equal(await tab.locator(".grasbot-alias-suggestions").count(), 0);
		assert.equal(await tab.evaluate(() => window.aliasTest.text()), NOTE);

		// Live Preview: the frontmatter's lines are replaced by Properties, the chips sit on a
		// line of their own right below it, above the note's first line.
		await tab.evaluate((doc) => window.aliasTest.mount(doc, null, true, true), NOTE);
		assert.equal(await tab.locator(".cm-line", { hasText: "aliases:" }).count(), 0);
		const liveBox = tab.locator(".grasbot-alias-suggestions");
		assert.equal(await liveBox.count(), 1);
		assert.equal(await liveBox.evaluate((el) => el.closest(".cm-line") === null && el.classList.contains("grasbot-alias-suggestions-after-frontmatter")), true);
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["projet de tri", "tri avec deux piles", "push_swap 42"]);
		const panel = await tab.locator(".harness-properties").boundingBox();
		const below = await liveBox.boundingBox();
		const body = await tab.locator(".cm-line", { hasText: "# Push swap" }).boundingBox();
		assert.ok(panel && below && body, "Properties, chips and body all drawn");
		assert.ok(below.height > 0 && below.y >= panel.y + panel.height - 1 && below.y + below.height <= body.y + 1, JSON.stringify({ panel, below, body }));
		await tab.locator("#editor").screenshot({ path: path.join(artifacts, "alias-suggestions-live.png") });

		await chips.nth(1).locator(".grasbot-alias-suggestion-add").click();
		await tab.waitForFunction(() => window.aliasTest.text().includes("  - tri avec deux piles\n"));
		assert.equal(await tab.evaluate(() => window.aliasTest.text()), NOTE.replace("  - tri de piles\n", "  - tri de piles\n  - tri avec deux piles\n"));
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["projet de tri", "push_swap 42"]);
		await tab.locator('.grasbot-alias-suggestion[data-alias="projet de tri"] .grasbot-alias-suggestion-dismiss').click();
		assert.deepEqual(await chips.evaluateAll((els) => els.map((el) => el.dataset.alias)), ["push_swap 42"]);
		await tab.waitForFunction(() => (window.aliasTest.saved() ?? "").includes("sha256"));
		assert.deepEqual(JSON.parse(await tab.evaluate(() => window.aliasTest.saved())).dismissedAliases, { "projets/push-swap.md": [key("projet de tri")] });

		// Back to Source mode in the same editor: the chips return to the `aliases:` line.
		await tab.evaluate(() => window.aliasTest.setLivePreview(false));
		assert.equal(await liveBox.count(), 1);
		assert.ok((await liveBox.evaluate((el) => el.closest(".cm-line")?.textContent ?? "")).startsWith("aliases:Suggestions :"));
		assert.deepEqual(errors, []);
		console.debug("suggestions d'alias dans Chromium : OK (test-artifacts/alias-suggestions.png, alias-suggestions-live.png)");
	} finally {
		await context.close();
		await new Promise((resolve) => server.close(resolve));
		rmSync(profile, { recursive: true, force: true });
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
