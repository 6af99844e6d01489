// GrasBot on the owner's own pages: one tag,
//   <script src="https://bot.example.org/widget.js" data-grasbot-origin="https://bot.example.org" defer></script>
// adds a floating button that opens the same chat (chat.js) in a panel. Everything it loads
// comes from the daemon's origin: its stylesheet as a <link>, chat.js as a <script src>. No
// inline script or style, no style attribute: a strict Content-Security-Policy only has to
// allow that origin (deploy/README.md gives the policy).
// The widget is drawn in a shadow root of one element, <grasbot-widget>, its stylesheet inside:
// no rule of the site's reaches it (a class, an id, a :hover or an !important beat every
// reset on plain elements), nor does any of its rules reach the site.
"use strict";

(function () {
  const tag = document.currentScript;
  // mounted once per page, though a template includes the tag twice. Only the widget's own
  // element counts, marked so: a browser names every element with an id as a global, and a
  // site's <div id="GrasBotWidget"> was window.GrasBotWidget, read as the widget mounted already.
  const OWN = Symbol.for("grasbot.widget");
  const mounted = window.GrasBotWidget;
  if (!tag || (mounted && mounted[OWN] === true)) return;
  // data-grasbot-origin, else where this script came from; a path prefix is kept. A relative one
  // ("/grasbot") is read from this tag's src, not from the page's <base>, which may name another
  // host (a CDN's): its stylesheet, chat.js and the visitors' questions went to that host.
  // Anything else (« grasbot.example », « http://[bad », « bot.example.org:8080 ») is refused in
  // the widget's corner: it threw, or was read as a path under widget.js, and the owner saw an
  // empty corner with the reason in the console alone.
  const origin = (tag.dataset.grasbotOrigin || "").trim();
  const given = (() => {
    const relative = origin === "" || origin.startsWith("/") || origin.startsWith(".");
    try {
      const url = relative ? new URL(origin || ".", tag.src) : new URL(origin);
      return /^https?:$/.test(url.protocol) ? url.href : null;
    } catch {
      return null;
    }
  })();
  const base = given === null ? null : given.endsWith("/") ? given : given + "/";
  const title = tag.dataset.grasbotTitle || "Poser une question à GrasBot";

  function make(tag, className, text) {
    const node = document.createElement(tag);
    node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The host is in the page at once, for its stylesheet to load while chat.js does: a link in a
  // shadow root loads only once the root is in the document.
  const host = document.createElement("grasbot-widget");
  host[OWN] = true;
  window.GrasBotWidget = host;
  const shadow = host.attachShadow({ mode: "open" });
  const style = document.createElement("link");
  style.rel = "stylesheet";
  // without a base, the stylesheet beside widget.js, for the message that says why
  style.href = base === null ? new URL("static/chat.css", tag.src).href : base + "static/chat.css";
  const styled = new Promise((resolve) => {
    style.addEventListener("load", resolve);
    style.addEventListener("error", resolve);
  });
  shadow.appendChild(style);
  // In the body, and back in it whenever it leaves: a site that navigates by swapping its body
  // (Turbo, htmx's hx-boost, Astro's view transitions) took the widget with the old one, and the
  // tag, already run, did not bring it back. Its conversation comes back as it was.
  const attach = () => {
    if (!host.isConnected && document.body) document.body.appendChild(host);
  };
  attach();
  const observer = new MutationObserver(attach);
  observer.observe(document.documentElement, { childList: true, subtree: true });
  let chat = null;
  let destroyed = false;
  // The way a site takes the widget off its page (deploy/README.md): remove() alone is undone at
  // once, as a body swap is. Stops an answer being written; a tag run again later mounts anew.
  host.destroy = () => {
    destroyed = true;
    observer.disconnect();
    if (chat) chat.stop();
    host.remove();
    if (window.GrasBotWidget === host) delete window.GrasBotWidget;
  };

  // What kept the widget from mounting, said where its launcher would be (in French, as the
  // rest of it) and in the console.
  function fail(message) {
    if (destroyed) return;
    console.error("GrasBot : " + message);
    const widget = make("div", "grasbot-widget");
    widget.lang = "fr";
    widget.dir = "ltr";
    const alert = widget.appendChild(make("p", "grasbot-error", "GrasBot ne peut pas s'afficher : " + message));
    alert.setAttribute("role", "alert");
    shadow.appendChild(widget);
  }

  function start() {
    if (destroyed) return;
    const launcher = make("button", "grasbot-launcher", "Une question ?");
    launcher.type = "button";
    launcher.setAttribute("aria-expanded", "false");
    launcher.setAttribute("aria-controls", "grasbot-widget-panel");
    const panel = make("section", "grasbot-panel");
    panel.id = "grasbot-widget-panel";
    panel.hidden = true;
    panel.setAttribute("aria-labelledby", "grasbot-widget-title");
    const head = panel.appendChild(make("div", "grasbot-panel-head"));
    const heading = head.appendChild(make("h2", "grasbot-panel-title", title));
    heading.id = "grasbot-widget-title";
    const close = head.appendChild(make("button", "grasbot-close", "Fermer"));
    close.type = "button";
    const body = panel.appendChild(make("div", "grasbot-panel-body"));
    chat = window.GrasBotChat.mount(body, { base, storageKey: "grasbot-widget:" + base });

    function toggle(open) {
      panel.hidden = !open;
      launcher.setAttribute("aria-expanded", String(open));
      if (open) chat.input.focus();
      else launcher.focus();
    }
    launcher.addEventListener("click", () => toggle(panel.hidden));
    close.addEventListener("click", () => toggle(false));
    const widget = make("div", "grasbot-widget");
    // French on any site: a screen reader on an English page read the French words in English
    widget.lang = "fr";
    // and left to right on a right-to-left site, whose direction no `all` resets: « Une question ? »
    // read « ? Une question », the panel's header reversed (a visitor's question keeps dir="auto")
    widget.dir = "ltr";
    widget.append(panel, launcher);
    // Escape closes the panel from anywhere in the widget, its close button and the launcher as
    // well as the chat (which keeps an Escape that stops an answer to itself).
    widget.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !event.isComposing && !panel.hidden) {
        event.preventDefault();
        toggle(false);
      }
    });
    shadow.appendChild(widget);
  }

  if (base === null) {
    const problem =
      `data-grasbot-origin="${origin}" n'est pas une adresse de GrasBot. ` +
      "Écrivez son adresse complète (https://…) ou un chemin qui commence par /.";
    styled.then(() => fail(problem));
    return;
  }
  const script = document.createElement("script");
  script.src = base + "static/chat.js";
  // drawn once styled: before its stylesheet, the launcher was a bare button on the page
  const loaded = new Promise((resolve, reject) => {
    script.addEventListener("load", resolve);
    script.addEventListener("error", reject);
  });
  Promise.all([loaded, styled]).then(start, () =>
    fail(`son script n'a pas pu être chargé depuis ${script.src} (vérifiez data-grasbot-origin).`),
  );
  document.head.appendChild(script);
})();
