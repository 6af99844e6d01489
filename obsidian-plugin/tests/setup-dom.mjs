// Obsidian adds DOM helpers (createEl, createDiv, empty, setText…) to Node and to the global
// scope; happy-dom has none. This polyfill gives the plain modules the same helpers, with the
// same rule Obsidian follows: `text` becomes textContent, never HTML.

function applyInfo(el, info) {
	if (info === undefined) return;
	if (typeof info === "string") {
		el.className = info;
		return;
	}
	if (info.cls !== undefined) {
		const classes = Array.isArray(info.cls) ? info.cls : info.cls.split(" ");
		el.classList.add(...classes.filter((c) => c.length > 0));
	}
	if (info.text !== undefined) {
		if (typeof info.text === "string") el.textContent = info.text;
		else el.appendChild(info.text);
	}
	if (info.attr !== undefined) {
		for (const [name, value] of Object.entries(info.attr)) {
			if (value === null || value === false) el.removeAttribute(name);
			else el.setAttribute(name, String(value));
		}
	}
	if (info.title !== undefined) el.title = info.title;
	if (info.value !== undefined) el.value = info.value;
	if (info.type !== undefined) el.type = info.type;
	if (info.placeholder !== undefined) el.placeholder = info.placeholder;
	if (info.href !== undefined) el.href = info.href;
}

function make(tag, info, callback, parent) {
	const el = document.createElement(tag);
	applyInfo(el, info);
	const target = parent ?? (typeof info === "object" ? info.parent : undefined);
	if (target) {
		if (typeof info === "object" && info.prepend) target.insertBefore(el, target.firstChild);
		else target.appendChild(el);
	}
	callback?.(el);
	return el;
}

const nodeHelpers = {
	createEl(tag, info, callback) {
		return make(tag, info, callback, this);
	},
	createDiv(info, callback) {
		return make("div", info, callback, this);
	},
	createSpan(info, callback) {
		return make("span", info, callback, this);
	},
	appendText(text) {
		this.appendChild(document.createTextNode(text));
	},
};

const elementHelpers = {
	empty() {
		while (this.firstChild) this.removeChild(this.firstChild);
	},
	setText(text) {
		this.textContent = text;
	},
	addClass(...classes) {
		this.classList.add(...classes);
	},
	removeClass(...classes) {
		this.classList.remove(...classes);
	},
	toggleClass(classes, value) {
		for (const c of Array.isArray(classes) ? classes : [classes]) this.classList.toggle(c, value);
	},
	hasClass(c) {
		return this.classList.contains(c);
	},
	setAttr(name, value) {
		if (value === null) this.removeAttribute(name);
		else this.setAttribute(name, String(value));
	},
};

// Node-environment test files (the bundle check) have no DOM to extend.
if (typeof Node !== "undefined") {
	for (const [name, fn] of Object.entries(nodeHelpers)) {
		Object.defineProperty(Node.prototype, name, { value: fn, configurable: true, writable: true });
	}
	for (const [name, fn] of Object.entries(elementHelpers)) {
		Object.defineProperty(HTMLElement.prototype, name, { value: fn, configurable: true, writable: true });
	}
	window.createEl = (tag, info, callback) => make(tag, info, callback);
	window.createDiv = (info, callback) => make("div", info, callback);
	window.createSpan = (info, callback) => make("span", info, callback);
}
