// Drives GrasBot's chat (the page at `/`, or the widget on a host page) in headless Chromium
// (Debian's, through playwright-core) for tests/e2e/test_chat_page.py and test_widget.py (through tests/support/browser.py).
// One JSON argument:
//   {url, userDataDir, chromium?, viewport?, artifacts?, routes?, steps: [...]}
// Each step is {do: NAME, ...}; `snapshot` steps record what is on screen under their name.
// It prints one JSON report on its last line; the assertions live in the Python tests.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { CHROMIUM, launchChromium } from "./chromium.mjs";

const config = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const TIMEOUT = 30000;

const context = await launchChromium(
	// forcedColors: "active" is Windows' high contrast mode, which repaints every colour
	{ viewport: config.viewport || { width: 900, height: 900 }, locale: "fr-FR", forcedColors: config.forcedColors || "none" },
	config.userDataDir,
	config.chromium || CHROMIUM,
);
const report = { requests: [], pageErrors: [], console: [], dialogs: [], snapshots: {}, axe: {}, focus: {}, live: {} };
// Set up in every document before its own scripts: what the tests watch for.
await context.addInitScript(() => {
	// The widget draws in a shadow root: the tests look into open shadow roots as into the page.
	const roots = () => {
		const found = [document];
		for (let i = 0; i < found.length; i++) for (const el of found[i].querySelectorAll("*")) if (el.shadowRoot) found.push(el.shadowRoot);
		return found;
	};
	window.__q = (selector) => {
		for (const root of roots()) {
			const el = root.querySelector(selector);
			if (el) return el;
		}
		return null;
	};
	window.__qa = (selector) => roots().flatMap((root) => [...root.querySelectorAll(selector)]);
	// the element with the focus, inside a shadow root if it is in one
	window.__active = () => {
		let el = document.activeElement;
		while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
		return el;
	};
	// el.closest(selector), going on from a shadow root to its host
	window.__closest = (el, selector) => {
		for (let at = el; at; ) {
			const found = at.closest(selector);
			if (found) return found;
			const root = at.getRootNode();
			at = root instanceof ShadowRoot ? root.host : null;
		}
		return null;
	};
	window.__cspViolations = [];
	document.addEventListener("securitypolicyviolation", (e) => {
		window.__cspViolations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
	});
	// "tag.first-class:text" of the element with the focus
	window.__describeFocus = () => {
		const el = window.__active();
		if (!el || el === document.body) return "body";
		const name = typeof el.className === "string" ? el.className.split(" ")[0] : "";
		const label = (el.textContent || el.getAttribute("aria-label") || "").trim().slice(0, 40);
		return `${el.tagName.toLowerCase()}${name ? "." + name : ""}:${label}`;
	};
	window.__announcements = [];
	// Every text put in a live region: what a screen reader would be told, and how often.
	const observer = new MutationObserver((mutations) => {
		for (const m of mutations) {
			const target = m.target.nodeType === 1 ? m.target : m.target.parentElement;
			const live = target && target.closest && target.closest("[aria-live]");
			if (!live) continue;
			const region = live.classList.contains("grasbot-announce") ? "announce" : String(live.className);
			const texts = m.type === "characterData" ? [m.target.data] : [...m.addedNodes].map((n) => n.textContent);
			for (const text of texts) if (text) window.__announcements.push({ region, text });
		}
	});
	const watch = (root) => observer.observe(root, { subtree: true, childList: true, characterData: true });
	watch(document);
	// and in every shadow root, as it is made
	const attachShadow = Element.prototype.attachShadow;
	Element.prototype.attachShadow = function (init) {
		const root = attachShadow.call(this, init);
		watch(root);
		return root;
	};
});

try {
	const page = context.pages()[0] || (await context.newPage());
	// fontSize: the default font size a visitor chose in the browser's settings (16 unless set)
	if (config.fontSize) {
		const cdp = await context.newCDPSession(page);
		await cdp.send("Page.setFontSizes", { fontSizes: { standard: config.fontSize, fixed: 13 } });
	}
	page.on("request", (request) => report.requests.push(request.url()));
	page.on("pageerror", (error) => report.pageErrors.push(String(error)));
	page.on("console", (message) => report.console.push(`${message.type()}: ${message.text()}`));
	page.on("dialog", async (dialog) => {
		report.dialogs.push(dialog.message());
		await dialog.dismiss();
	});
	// routes: [{match, times?, body?, status?, headers?}]: the first `times` requests whose URL
	// contains `match` get `body` (a crafted response), or without one fail at the network
	// level (the connection is reset: a visitor's broken connection).
	for (const route of config.routes || []) {
		let left = route.times ?? Infinity;
		await page.route(
			(url) => url.href.includes(route.match),
			async (r) => {
				if (left-- <= 0) await r.continue();
				else if (route.body === undefined) await r.abort("connectionreset");
				else await r.fulfill({ status: route.status || 200, headers: route.headers || {}, body: route.body });
			},
		);
	}

	const response = await page.goto(config.url, { waitUntil: "load" });
	report.pageStatus = response ? response.status() : null;
	report.title = await page.title();
	if (report.pageStatus === 200) {
		for (const step of config.steps || []) await run(page, step);
	}
} finally {
	await context.close();
}
process.stdout.write(JSON.stringify(report) + "\n");

async function run(page, step) {
	const chat = step.chat || ".grasbot";
	switch (step.do) {
		case "ask": // type the question, send it by Enter (keyboard) or by the button
			await page.locator(`${chat} .grasbot-input`).fill(step.q);
			if (step.click) await page.locator(`${chat} .grasbot-send`).click();
			else await page.locator(`${chat} .grasbot-input`).press("Enter");
			return;
		case "type": // keyboard only: whatever has the focus receives the text
			await page.keyboard.type(step.text);
			return;
		case "press":
			await page.keyboard.press(step.key);
			return;
		case "click":
			await page.locator(step.selector).last().click();
			return;
		case "focusOn": // the focus on one control, as Tab would put it there
			await page.locator(step.selector).last().focus();
			return;
		case "wait": // until the chat is in one of `states` and has `turns` turns
			await page.waitForFunction(
				({ chat, states, turns }) => {
					const root = window.__q(chat);
					return (
						root &&
						states.includes(root.dataset.state) &&
						(turns === undefined || root.querySelectorAll(".grasbot-turn").length === turns)
					);
				},
				{ chat, states: step.states, turns: step.turns },
				{ timeout: TIMEOUT },
			);
			await page.waitForTimeout(200); // for anything a stray reconnection would do
			return;
		case "waitFor":
			await page.waitForSelector(step.selector, { timeout: TIMEOUT, state: step.state || "visible" });
			return;
		case "waitText": // until the last turn's streamed text contains `text`
			await page.waitForFunction(
				({ chat, text }) => {
					const turns = window.__qa(`${chat} .grasbot-turn`);
					const last = turns[turns.length - 1];
					return Boolean(last) && last.querySelector(".grasbot-answer").textContent.includes(text);
				},
				{ chat, text: step.text },
				{ timeout: TIMEOUT },
			);
			return;
		case "reload":
			await page.reload({ waitUntil: "load" });
			if (step.waitFor) await page.waitForSelector(step.waitFor, { timeout: TIMEOUT });
			return;
		case "viewport":
			await page.setViewportSize({ width: step.width, height: step.height });
			return;
		case "scrollIntoView": // the first element `selector` names, at the top of what scrolls it
			await page.locator(step.selector).first().evaluate((el) => el.scrollIntoView({ block: "start" }));
			return;
		case "sleep":
			await page.waitForTimeout(step.ms);
			return;
		case "focus": // Tab `count` times, recording what takes the focus each time
			report.focus[step.name] = [];
			for (let i = 0; i < step.count; i++) {
				await page.keyboard.press(step.shift ? "Shift+Tab" : "Tab");
				report.focus[step.name].push(await page.evaluate(() => window.__describeFocus()));
			}
			return;
		case "screenshot":
			if (config.artifacts) {
				await page.screenshot({ path: path.join(config.artifacts, step.name), fullPage: step.fullPage ?? true });
			}
			return;
		case "axe": {
			await page.evaluate(AXE); // by the DevTools protocol: the page's CSP does not apply to it
			const result = await page.evaluate(
				async ({ selector, tags }) => {
					const r = await window.axe.run(selector ? window.__q(selector) : document, {
						runOnly: { type: "tag", values: tags },
						resultTypes: ["violations"],
					});
					return {
						violations: r.violations.map((v) => ({
							id: v.id,
							impact: v.impact,
							help: v.help,
							nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
						})),
						passes: r.passes.length,
					};
				},
				{ selector: step.selector || null, tags: AXE_TAGS },
			);
			report.axe[step.name] = result;
			return;
		}
		case "snapshot":
			report.snapshots[step.name] = await page.evaluate(snapshot, chat);
			return;
		case "liveRegions": {
			// the live regions of Chromium's accessibility tree, what a screen reader is told of,
			// each with its text: a region in a shadow root must be one as well
			const cdp = await page.context().newCDPSession(page);
			const { nodes } = await cdp.send("Accessibility.getFullAXTree");
			const byId = new Map(nodes.map((n) => [n.nodeId, n]));
			const prop = (n, name) => (n.properties || []).find((p) => p.name === name)?.value?.value;
			const textOf = (n) =>
				n.role?.value === "StaticText" ? n.name?.value || "" : (n.childIds || []).map((id) => (byId.has(id) ? textOf(byId.get(id)) : "")).join("");
			report.live[step.name] = nodes
				.filter((n) => prop(n, "live") && prop(n, "live") !== "off" && !n.ignored)
				.map((n) => ({ role: n.role?.value, live: prop(n, "live"), atomic: prop(n, "atomic") ?? false, text: textOf(n) }));
			await cdp.detach();
			return;
		}
		default:
			throw new Error(`unknown step ${JSON.stringify(step)}`);
	}
}

// What a visitor sees, and what the tests watch for, in the browser.
function snapshot(chat) {
	function* textNodes(root) {
		const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
		for (let node = walker.nextNode(); node; node = walker.nextNode()) yield node;
	}
	// Two letters after one another on a line, the second left of the first.
	function drawnRightToLeft(node) {
		const range = document.createRange();
		let before = null;
		for (let i = 0; i < node.data.length; i++) {
			if (!/\p{L}/u.test(node.data[i])) continue;
			range.setStart(node, i);
			range.setEnd(node, i + 1);
			const rect = range.getBoundingClientRect();
			if (before && Math.abs(rect.top - before.top) < 1 && rect.left < before.left) return true;
			before = rect;
		}
		return false;
	}

	// The properties a site's stylesheet could change on the widget's elements.
	const LOOK = [
		"color", "background-color", "font-family", "font-size", "font-weight", "font-style", "line-height",
		"letter-spacing", "word-spacing", "text-transform", "text-align", "text-indent", "text-decoration-line",
		"white-space", "direction", "display", "position", "box-sizing", "width", "height", "padding", "margin",
		"border-top", "border-radius", "list-style-type", "opacity", "visibility", "transform", "filter",
		"box-shadow", "outline", "cursor", "flex-direction", "justify-content", "align-items",
	];
	// The widget's parts: its panel and launcher, the chat and an answer with its sources.
	const LOOK_PARTS = [
		".grasbot-panel", ".grasbot-panel-head", ".grasbot-panel-title", ".grasbot-close", ".grasbot-panel-body",
		".grasbot-launcher", ".grasbot", ".grasbot-toolbar", ".grasbot-new", ".grasbot-thread", ".grasbot-turn",
		".grasbot-question", ".grasbot-reply", ".grasbot-badge", ".grasbot-answer p", ".grasbot-cite",
		".grasbot-sources-title", ".grasbot-source", ".grasbot-source-title", ".grasbot-status", ".grasbot-form",
		".grasbot-label", ".grasbot-input", ".grasbot-actions", ".grasbot-send", ".grasbot-hint",
	];
	const root = window.__q(chat);
	const visible = (el) => Boolean(el) && !el.hidden && el.getClientRects().length > 0;
	const text = (el) => (visible(el) ? el.textContent : null);
	const turns = [...(root ? root.querySelectorAll(".grasbot-turn") : [])].map((turn) => {
		const answer = turn.querySelector(".grasbot-answer");
		const count = (selector) => answer.querySelectorAll(selector).length;
		return {
			status: turn.dataset.status,
			question: turn.querySelector(".grasbot-question").textContent,
			top: Math.round(turn.querySelector(".grasbot-question").getBoundingClientRect().top), // where the visitor sees it
			dirs: [...turn.querySelectorAll(".grasbot-question, .grasbot-answer")].map((el) => el.getAttribute("dir")),
			answer: answer.textContent,
			spoken: answer.innerText, // its blocks apart, as a screen reader says them
			markup: {
				p: count("p"),
				strong: count("strong"),
				em: count("em"),
				code: count(":not(pre) > code"),
				pre: count("pre > code"),
				ul: count("ul > li"),
				ol: count("ol > li"),
			},
			// the reply's texts drawn right to left: a bidi override in a note's title or heading
			// that reached past it (the rest of the answer, the card's type) shows them so
			reversed: [...textNodes(turn.querySelector(".grasbot-reply"))].filter(drawnRightToLeft).map((node) => node.data),
			cites: [...answer.querySelectorAll(".grasbot-cite")].map((a) => ({ text: a.textContent, href: a.getAttribute("href") })),
			badge: text(turn.querySelector(".grasbot-badge")),
			notes: [...turn.querySelectorAll(".grasbot-note")].filter(visible).map((n) => n.textContent),
			error: text(turn.querySelector(".grasbot-error")),
			errorRole: turn.querySelector(".grasbot-error")?.getAttribute("role") ?? null, // "alert": read out at once
			progress: text(turn.querySelector(".grasbot-progress")),
			retry: visible(turn.querySelector(".grasbot-retry")),
			retryEnabled: visible(turn.querySelector(".grasbot-retry")) && !turn.querySelector(".grasbot-retry").disabled,
			sources: [...turn.querySelectorAll(".grasbot-source")].map((card) => {
				const link = card.querySelector("a.grasbot-source-title");
				return {
					text: card.querySelector(".grasbot-source-title").textContent,
					href: link ? link.getAttribute("href") : null,
					visible: visible(card),
					passages: [...card.querySelectorAll(".grasbot-passage")].map((item) => {
						const a = item.querySelector("a");
						return { text: item.textContent, href: a ? a.getAttribute("href") : null, visible: visible(item) };
					}),
				};
			}),
		};
	});
	const live = window.__qa("[aria-live]").map((el) => ({
		cls: String(el.className),
		live: el.getAttribute("aria-live"),
	}));
	return {
		state: root ? root.dataset.state : null,
		turns,
		status: root ? text(root.querySelector(".grasbot-status")) : null,
		input: root ? root.querySelector(".grasbot-input").value : null,
		maxLength: root ? root.querySelector(".grasbot-input").maxLength : null,
		placeholder: root ? (({ color, opacity }) => ({ color, opacity }))(getComputedStyle(root.querySelector(".grasbot-input"), "::placeholder")) : null,
		stopVisible: root ? visible(root.querySelector(".grasbot-stop")) : false,
		announcements: window.__announcements.slice(),
		live,
		cspViolations: window.__cspViolations.slice(),
		// Markup from the server must stay text: no element was made from it.
		injectedElements: root ? root.querySelectorAll("script, img, iframe, object, [onerror], [onload]").length : 0,
		injectedWhat: root ? [...root.querySelectorAll("script, img, iframe, object, [onerror], [onload]")].map((e) => e.outerHTML.slice(0, 200)) : [],
		injectedGlobal: typeof window.__grasbotInjected === "undefined" ? null : window.__grasbotInjected,
		scripts: [...document.scripts].map((s) => s.getAttribute("src")),
		styleAttributes: window.__qa("[style]:not([style=\"\"])").length,
		styled: window.__qa("[style]:not([style=\"\"])").map((e) => e.getAttribute("style")),
		focused: window.__describeFocus(),
		// how the focused element is drawn: its outline, and the shadows around it
		focusRing: (({ outlineColor, outlineStyle, outlineWidth, outlineOffset, boxShadow }) => ({
			outline: `${outlineWidth} ${outlineStyle} ${outlineColor}`,
			offset: outlineOffset,
			boxShadow,
		}))(getComputedStyle(window.__active() || document.body)),
		scrollWidth: document.documentElement.scrollWidth,
		clientWidth: document.documentElement.clientWidth,
		innerHeight: window.innerHeight,
		storage: Object.keys(sessionStorage),
		panelOpen: visible(window.__q(".grasbot-panel")),
		launchers: window.__qa(".grasbot-launcher").length,
		// what the widget says in its corner when it cannot mount, and whether it is seen
		widgetErrors: window.__qa(".grasbot-widget > .grasbot-error").map((el) => ({
			text: el.textContent,
			role: el.getAttribute("role"),
			visible: visible(el),
			position: getComputedStyle(el.parentElement).position,
		})),
		// the widget's panel: its height, its title's lines, and how much of the thread it shows at once
		panel: (() => {
			const panel = window.__q(".grasbot-panel");
			if (!visible(panel)) return null;
			const title = panel.querySelector(".grasbot-panel-title");
			const body = panel.querySelector(".grasbot-panel-body").getBoundingClientRect();
			const thread = panel.querySelector(".grasbot-thread").getBoundingClientRect();
			return {
				height: Math.round(panel.getBoundingClientRect().height),
				titleLines: Math.round(title.getBoundingClientRect().height / parseFloat(getComputedStyle(title).lineHeight)),
				threadShown: Math.round(Math.max(0, Math.min(body.bottom, thread.bottom) - Math.max(body.top, thread.top))),
				lineHeight: parseFloat(getComputedStyle(panel.querySelector(".grasbot")).lineHeight), // a line of the chat
			};
		})(),
		// the widget's boxes as drawn (px): its panel, header, title, body, launcher and the chat's
		// question box, send button and hint, and the gaps around them
		sizes: (() => {
			const widget = window.__q(".grasbot-widget");
			if (!widget) return null;
			const px = (n) => Math.round(n * 100) / 100;
			const box = (selector) => {
				const el = widget.querySelector(selector);
				if (!visible(el)) return null;
				const s = getComputedStyle(el);
				const r = el.getBoundingClientRect();
				return { width: px(r.width), height: px(r.height), padding: s.padding, margin: s.margin, radius: s.borderRadius };
			};
			const s = getComputedStyle(widget);
			return {
				widget: { right: s.right, bottom: s.bottom, gap: s.rowGap },
				...Object.fromEntries(
					[
						["panel", ".grasbot-panel"],
						["head", ".grasbot-panel-head"],
						["title", ".grasbot-panel-title"],
						["close", ".grasbot-close"],
						["body", ".grasbot-panel-body"],
						["launcher", ".grasbot-launcher"],
						["input", ".grasbot-input"],
						["send", ".grasbot-send"],
						["hint", ".grasbot-hint"],
					].map(([name, selector]) => [name, box(selector)]),
				),
			};
		})(),
		// how the widget's title, buttons and label are written: what a site's own styles may change
		text: Object.fromEntries(
			[
				["title", ".grasbot-panel-title"],
				["close", ".grasbot-close"],
				["launcher", ".grasbot-launcher"],
				["label", ".grasbot-label"],
				["send", ".grasbot-send"],
			]
				.map(([name, selector]) => [name, window.__q(`.grasbot-widget ${selector}`)])
				.filter(([, el]) => el)
				.map(([name, el]) => {
					const s = getComputedStyle(el);
					return [
						name,
						{
							font: `${s.fontWeight} ${s.fontSize} / ${s.lineHeight} ${s.fontFamily}`,
							transform: s.textTransform,
							spacing: s.letterSpacing,
							align: s.textAlign,
						},
					];
				}),
		),
		// the text's computed sizes: the chat's, its smaller hint's, the launcher's
		fontSizes: Object.fromEntries(
			[
				["chat", root],
				["hint", root && root.querySelector(".grasbot-hint")],
				["launcher", window.__q(".grasbot-launcher")],
			]
				.filter(([, el]) => el)
				.map(([name, el]) => [name, getComputedStyle(el).fontSize]),
		),
		// each visible button's border: in forced colours, a button without one is bare text
		buttons: window.__qa("button").filter(visible).map((b) => {
			const style = getComputedStyle(b);
			return { name: b.textContent, border: `${style.borderTopWidth} ${style.borderTopStyle} ${style.borderTopColor}` };
		}),
		// each list drawn without bullets, and its role: Safari drops a list's role with its bullets
		bareLists: root
			? [...root.querySelectorAll("ol, ul")]
					.filter((list) => getComputedStyle(list).listStyleType === "none")
					.map((list) => ({ cls: list.className, role: list.getAttribute("role") }))
			: [],
		// the language a screen reader reads the chat and the launcher in
		langs: [root, window.__q(".grasbot-launcher")].filter(Boolean).map((el) => window.__closest(el, "[lang]")?.lang ?? null),
		// how each part of the widget is drawn, and the element the site's page holds (the widget's
		// own, or the host of its shadow root): what a site's stylesheet must not change
		look: (() => {
			const widget = window.__q(".grasbot-widget");
			if (!widget) return null;
			const outer = widget.getRootNode() instanceof ShadowRoot ? widget.getRootNode().host : widget;
			const drawn = (el) => {
				const s = getComputedStyle(el);
				const r = el.getBoundingClientRect();
				return {
					...Object.fromEntries(LOOK.map((name) => [name, s.getPropertyValue(name)])),
					box: [r.left, r.top, r.width, r.height].map((n) => Math.round(n * 100) / 100),
				};
			};
			const outerStyle = getComputedStyle(outer);
			return {
				outer: Object.fromEntries(["display", "opacity", "transform", "filter", "visibility", "position", "z-index"].map((n) => [n, outerStyle.getPropertyValue(n)])),
				parts: Object.fromEntries(
					LOOK_PARTS.map((selector) => [selector, [...widget.querySelectorAll(selector)].slice(0, 3).map(drawn)]).concat([[".grasbot-widget", [drawn(widget)]]]),
				),
			};
		})(),
		// the site's own elements, as it styles them: the widget's stylesheet must not reach them
		site: Object.fromEntries(
			[...document.querySelectorAll("[data-site]")].map((el) => {
				const s = getComputedStyle(el);
				return [el.dataset.site, Object.fromEntries(LOOK.map((name) => [name, s.getPropertyValue(name)]))];
			}),
		),
	};
}

