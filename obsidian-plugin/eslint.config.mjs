// Lints the plugin with the Obsidian review rules (eslint-plugin-obsidianmd, recommended set).
// Run from this folder: the plugin reads ./manifest.json relative to the working directory.
import obsidianmd from "eslint-plugin-obsidianmd";
import { DEFAULT_BRANDS } from "eslint-plugin-obsidianmd/dist/lib/rules/ui/brands.js";
import { defineConfig, globalIgnores } from "eslint/config";

export default defineConfig([
	globalIgnores(["main.js", "node_modules"]),
	...obsidianmd.configs.recommended,
	{
		files: ["**/*.ts", "**/*.mts"],
		languageOptions: {
			parserOptions: {
				projectService: true,
				tsconfigRootDir: import.meta.dirname,
			},
		},
	},
	{
		// Same rule and level as the recommended set; "GrasBot" is the product's name, kept
		// with its casing like the built-in brands.
		files: ["**/*.ts", "**/*.mts", "**/*.js", "**/*.mjs"],
		rules: {
			"obsidianmd/ui/sentence-case": [
				"warn",
				{ enforceCamelCaseLower: true, brands: [...DEFAULT_BRANDS, "GrasBot"] },
			],
		},
	},
]);
