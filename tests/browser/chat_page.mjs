// Drives the chat page in headless Chromium (Debian's, through playwright-core) for
// tests/test_chat_page.py. One JSON argument:
//   {url, question, userDataDir, screenshot?, failStream?}
// It asks the question, waits until the page says it is done (or failed), and prints one JSON
// object describing what is on screen. Assertions live in the Python test.
import { CHROMIUM, launchChromium } from "./chromium.mjs";

const config = JSON.parse(process.argv[2]);

const context = await launchChromium(
  { viewport: { width: 900, height: 900 }, locale: "fr-FR" },
  config.userDataDir,
  config.chromium || CHROMIUM,
);
const report = { requests: [], pageErrors: [], console: [], dialogs: [] };
try {
  const page = context.pages()[0] || (await context.newPage());
  page.on("request", (request) => report.requests.push(request.url()));
  page.on("pageerror", (error) => report.pageErrors.push(String(error)));
  page.on("console", (message) => report.console.push(`${message.type()}: ${message.text()}`));
  page.on("dialog", async (dialog) => {
    report.dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  if (config.failStream) {
    // The connection to the stream breaks before any answer: the page must say so.
    await page.route("**/ask/stream**", (route) => route.abort("connectionreset"));
  }

  const response = await page.goto(config.url, { waitUntil: "load" });
  report.pageStatus = response ? response.status() : null;
  report.title = await page.title();
  if (report.pageStatus !== 200) {
    // No page to drive (e.g. the daemon does not serve `/`): report it rather than time out.
    await context.close();
    process.stdout.write(JSON.stringify(report) + "\n");
    process.exit(0);
  }
  await page.fill("#question", config.question);
  await page.click("#ask-button");
  await page.waitForSelector('#chat[data-state="done"], #chat[data-state="error"]', { timeout: 30000 });
  // A moment for anything a stray reconnection or injected markup would do.
  await page.waitForTimeout(300);

  Object.assign(
    report,
    await page.evaluate(() => {
      const $ = (selector) => document.querySelector(selector);
      const visible = (element) => Boolean(element) && !element.hidden && element.getClientRects().length > 0;
      return {
        state: $("#chat").dataset.state,
        status: $("#status").textContent,
        answer: $("#answer").textContent,
        badge: visible($("#badge")) ? $("#badge").textContent : null,
        llmNote: visible($("#llm-note")) ? $("#llm-note").textContent : null,
        error: visible($("#error")) ? $("#error").textContent : null,
        sources: [...document.querySelectorAll("#sources .source-card")].map((card) => {
          const link = card.querySelector(".source-title a");
          return {
            text: card.querySelector(".source-title").textContent,
            href: link ? link.getAttribute("href") : null,
            visible: visible(card),
            passages: [...card.querySelectorAll(".source-passage")].map((item) => {
              const anchor = item.querySelector("a");
              return { text: item.textContent, href: anchor ? anchor.getAttribute("href") : null, visible: visible(item) };
            }),
          };
        }),
        // Markup from the server must stay text: no element was made from it.
        injectedElements: document.querySelectorAll("#answer *, .source-title script, .source-title img, .source-passage script, .source-passage img").length,
        injectedGlobal: typeof window.__grasbotInjected === "undefined" ? null : window.__grasbotInjected,
        scripts: [...document.scripts].map((s) => s.getAttribute("src")),
      };
    }),
  );
  if (config.screenshot) {
    await page.screenshot({ path: config.screenshot, fullPage: true });
  }
} finally {
  await context.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
