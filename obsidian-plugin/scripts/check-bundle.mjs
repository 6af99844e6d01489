// Checks the built main.js: it must require `obsidian` (provided by the app) and nothing but
// the externals of esbuild.config.mjs, so no copy of the obsidian module is bundled into it.
import { readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const file = path.join(here, "..", "main.js");
const code = readFileSync(file, "utf8");
const required = [...code.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
const problems = [];
if (!required.includes("obsidian")) problems.push("main.js ne requiert pas \"obsidian\"");
const allowed = (name) => name === "obsidian" || name === "electron" || /^@(codemirror|lezer)\//.test(name) || /^(node:)?[a-z_]+$/.test(name);
for (const name of required) if (!allowed(name)) problems.push(`main.js requiert "${name}", qui n'est pas un module externe`);
if (/node_modules[\\/]obsidian/.test(code)) problems.push("main.js contient du code de node_modules/obsidian");
if (problems.length > 0) {
	console.error(problems.join("\n"));
	process.exit(1);
}
const size = (code.length / 1024).toFixed(1).replace(".", ",");
console.debug(`main.js OK : ${size} Kio, requiert ${[...new Set(required)].join(", ")}`);
