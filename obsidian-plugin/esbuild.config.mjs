// Bundles src/main.ts into obsidian-plugin/main.js, the file Obsidian loads.
// `node esbuild.config.mjs production` builds once, minified; without an argument it watches.
// The options are exported so a test can build in memory with exactly the same settings.
import esbuild from "esbuild";
import { builtinModules } from "node:module";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** Provided by Obsidian at run time (or by Electron/Node), never bundled. */
export const externals = [
	"obsidian",
	"electron",
	"@codemirror/*",
	"@lezer/*",
	...builtinModules,
	...builtinModules.map((name) => `node:${name}`),
];

export function buildOptions(production) {
	return {
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
		external: externals,
	};
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const production = process.argv[2] === "production";
	const context = await esbuild.context(buildOptions(production));
	if (production) {
		await context.rebuild();
		await context.dispose();
	} else {
		await context.watch();
	}
}
