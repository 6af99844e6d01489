// Bundles src/main.ts into obsidian-plugin/main.js, the file Obsidian loads.
// `node esbuild.config.mjs production` builds once, minified; without it, watches.
import esbuild from "esbuild";
import { builtinModules } from "node:module";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const production = process.argv[2] === "production";

const context = await esbuild.context({
	entryPoints: [path.join(here, "src", "main.ts")],
	outfile: path.join(here, "main.js"),
	bundle: true,
	format: "cjs",
	target: "es2018",
	platform: "browser",
	logLevel: "info",
	sourcemap: production ? false : "inline",
	minify: production,
	treeShaking: true,
	external: [
		"obsidian",
		"electron",
		"@codemirror/*",
		"@lezer/*",
		...builtinModules,
		...builtinModules.map((name) => `node:${name}`),
	],
});

if (production) {
	await context.rebuild();
	await context.dispose();
} else {
	await context.watch();
}
