/** Obsidian glue: the settings tab, declared with the 1.13 settings definitions. */

import { type App, type Plugin, PluginSettingTab, SecretComponent, type SettingDefinitionItem } from "obsidian";
import { SETTING_DESCRIPTIONS, SETTING_NAMES } from "./messages";
import {
	DEFAULT_SETTINGS,
	type GrasbotSettings,
	MAX_DEBOUNCE_MS,
	MIN_DEBOUNCE_MS,
	refusedSettingNote,
	shownSetting,
	validateDaemonUrl,
	validateDebounce,
} from "./settings";

export interface SettingsHost extends Plugin {
	settings: GrasbotSettings;
	updateSettings(change: Partial<GrasbotSettings>): Promise<void>;
	checkConnection(): Promise<void>;
	/** data.json's values this version refuses, as written (key → value), until the author sets them. */
	refusedValues(): Readonly<Record<string, unknown>>;
}

export class GrasbotSettingTab extends PluginSettingTab {
	constructor(
		app: App,
		private readonly host: SettingsHost,
	) {
		super(app, host);
	}

	getSettingDefinitions(): SettingDefinitionItem[] {
		const refused = this.host.refusedValues();
		const note = (key: keyof GrasbotSettings) => refusedSettingNote(key, refused);
		return [
			{
				name: SETTING_NAMES.daemonUrl,
				desc: `${SETTING_DESCRIPTIONS.daemonUrl}${note("daemonUrl")}`,
				control: {
					type: "text",
					key: "daemonUrl",
					placeholder: DEFAULT_SETTINGS.daemonUrl,
					defaultValue: DEFAULT_SETTINGS.daemonUrl,
					validate: (value: string) => validateDaemonUrl(value),
				},
			},
			{
				name: SETTING_NAMES.tokenSecret,
				desc: `${SETTING_DESCRIPTIONS.tokenSecret}${note("tokenSecret")}`,
				render: (setting) => {
					setting.addComponent((el) =>
						new SecretComponent(this.app, el)
							.setValue(this.host.settings.tokenSecret)
							.onChange((name) => this.change("tokenSecret", name)),
					);
				},
			},
			{
				name: SETTING_NAMES.reloadOnSave,
				desc: `${SETTING_DESCRIPTIONS.reloadOnSave}${note("reloadOnSave")}`,
				control: { type: "toggle", key: "reloadOnSave", defaultValue: DEFAULT_SETTINGS.reloadOnSave },
			},
			{
				name: SETTING_NAMES.debounceMs,
				desc: `${SETTING_DESCRIPTIONS.debounceMs(MIN_DEBOUNCE_MS, MAX_DEBOUNCE_MS)}${note("debounceMs")}`,
				visible: () => this.host.settings.reloadOnSave,
				control: {
					type: "number",
					key: "debounceMs",
					min: MIN_DEBOUNCE_MS,
					max: MAX_DEBOUNCE_MS,
					step: 250,
					defaultValue: DEFAULT_SETTINGS.debounceMs,
					validate: (value: number) => validateDebounce(value),
				},
			},
			{
				name: SETTING_NAMES.checkConnection,
				desc: SETTING_DESCRIPTIONS.checkConnection,
				action: () => void this.host.checkConnection(),
			},
		];
	}

	getControlValue(key: string): unknown {
		return shownSetting(key as keyof GrasbotSettings, this.host.settings, this.host.refusedValues());
	}

	setControlValue(key: string, value: unknown): Promise<void> {
		return this.change(key as keyof GrasbotSettings, value);
	}

	/**
	 * Save a setting and draw the tab again: its description's « which this version refuses »
	 * goes once the author sets it (`update()`, as a description is part of the definitions;
	 * `refreshDomState()` redraws only what is shown, and the note stayed until the tab was
	 * opened again).
	 */
	private async change(key: keyof GrasbotSettings, value: unknown): Promise<void> {
		const noted = key in this.host.refusedValues();
		await this.host.updateSettings({ [key]: value });
		if (noted) this.update();
		else this.refreshDomState();
	}
}
