// Headless Debian Chromium for every browser test (the chat page's, the plugin's), launched
// the way REFERENCE.md says it must run as root on a closed network: these flags, and a
// fresh profile each time. Never a browser download of playwright's own.
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
];

/** A persistent context on `userDataDir` (a new temporary profile when none is given). */
export async function launchChromium(options = {}, userDataDir = undefined, executablePath = CHROMIUM) {
	if (!existsSync(executablePath)) {
		throw new Error(
			`${executablePath} is missing: the browser tests need Debian's chromium. ` +
				"Run `bash scripts/setup.sh --test` (it runs `apt-get install -y chromium`).",
		);
	}
	const profile = userDataDir ?? (await mkdtemp(path.join(tmpdir(), "grasbot-chromium-")));
	return chromium.launchPersistentContext(profile, {
		executablePath,
		headless: true,
		args: CHROMIUM_FLAGS,
		...options,
	});
}
