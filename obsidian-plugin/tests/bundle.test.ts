// @vitest-environment node
// The production bundle, built in memory with the options of esbuild.config.mjs: obsidian
// stays an external require, and the bundle loads and exports the plugin class.
import * as cmState from "@codemirror/state";
import * as cmView from "@codemirror/view";
import esbuild from "esbuild";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { buildOptions } from "../esbuild.config.mjs";

describe("production bundle", () => {
	it("requires obsidian at run time instead of bundling it", async () => {
		const result = await esbuild.build({ ...buildOptions(true), write: false, logLevel: "silent" });
		const code = result.outputFiles[0].text;
		const required = [...code.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
		// The editor extension's CodeMirror modules are Obsidian's own copies, required too.
		expect([...new Set(required)].sort()).toEqual(["@codemirror/state", "@codemirror/view", "obsidian"]);

		class Plugin {}
		const fakeObsidian = { Plugin, ItemView: class {}, PluginSettingTab: class {}, Notice: class {}, TFile: class {}, requestUrl: () => undefined };
		const module = { exports: {} as Record<string, unknown> };
		const modules: Record<string, unknown> = { obsidian: fakeObsidian, "@codemirror/state": cmState, "@codemirror/view": cmView };
		const requireStub = (name: string) => {
			if (!(name in modules)) throw new Error(`unexpected require(${name})`);
			return modules[name];
		};
		runInNewContext(code, { module, exports: module.exports, require: requireStub });
		const PluginClass = module.exports.default as { prototype: unknown };
		expect(PluginClass.prototype).toBeInstanceOf(Plugin);
	});
});
