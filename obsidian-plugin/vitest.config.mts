import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
	root: here,
	resolve: {
		alias: {
			obsidian: path.join(here, "tests", "obsidian-stub.ts"),
		},
	},
	test: {
		environment: "happy-dom",
		include: ["tests/**/*.test.ts"],
		setupFiles: [path.join(here, "tests", "setup-dom.mjs")],
	},
});
