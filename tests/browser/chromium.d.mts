import type { BrowserContext } from "playwright-core";

export const CHROMIUM: string;
export const CHROMIUM_FLAGS: string[];
export function launchChromium(
	options?: Parameters<typeof import("playwright-core").chromium.launchPersistentContext>[1],
	userDataDir?: string,
	executablePath?: string,
): Promise<BrowserContext>;
