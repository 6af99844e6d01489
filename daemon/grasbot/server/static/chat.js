// GrasBot's chat, shared by the chat page (page.js) and the widget a site embeds (widget.js).
// No build step, no dependency. Text from the daemon (notes, the model's answer) only ever
// reaches the page as text nodes and textContent: the small Markdown reader below builds
// elements itself, so markup in an answer or a note shows as text and is never parsed.
// What is sent: the question and the conversation's last exchanges, to the daemon's
// /ask/stream only; the thread is kept in this tab's sessionStorage, nowhere else.
"use strict";

(function () {
  const STREAM_PATH = "ask/stream";

  //: The daemon's limits on `history` (Settings.max_history, max_turn; openrpc.json's ceiling):
  //: a daemon configured lower says so in its 400, and the chat adapts to what it says.
  const LIMITS = { maxItems: 8, maxTurnChars: 2000, maxUrl: 7000 };
  // maxUrl: the question and history travel in the query string; a proxy at its defaults refuses
  // a request line over 8 KiB (nginx's large_client_header_buffers, Apache's LimitRequestLine;
  // deploy/nginx and the daemon read up to 64 KiB). 7000 leaves room.

  const MESSAGES = {
    searching: "Recherche dans les notes…",
    queued: (n) => (n <= 1 ? "Vous êtes le prochain dans la file d'attente…" : "Vous êtes en position " + n + " dans la file d'attente…"),
    writing: "Rédaction de la réponse…",
    done: "Réponse terminée.",
    answerIs: "Réponse de GrasBot : ",
    stopped: "Réponse arrêtée.",
    network: "Impossible de joindre GrasBot : vérifiez votre connexion, puis réessayez.",
    interrupted: "La réponse a été interrompue avant la fin. Réessayez dans un instant.",
    rateLimited: (s) => "Trop de questions à la suite : réessayez dans " + s + " s.",
    http: (status) => "GrasBot a répondu par une erreur (HTTP " + status + "). Réessayez dans un instant.",
    refused: "GrasBot n'a pas accepté cette question. Reformulez-la, puis réessayez.",
    tooLong: (n) => "Votre question est trop longue : " + n + " caractères au plus. Raccourcissez-la, puis réessayez.",
    server: "GrasBot a rencontré une erreur en rédigeant la réponse. Réessayez dans un instant.",
    busy: "Le modèle de langue est occupé par d'autres questions : voici les passages des notes les plus proches. Réessayez dans un instant pour une réponse rédigée.",
    fallback: "Cette réponse est faite d'extraits des notes, sans le modèle de langue.",
    general: "réponse généraliste",
    grounded: (n) => (n === 1 ? "basé sur 1 note" : "basé sur " + n + " notes"),
    empty: "Écrivez une question avant d'envoyer.",
    wait: "Une réponse est en cours : arrêtez-la (Échap) ou attendez la fin.",
    cleared: "Nouvelle conversation.",
    restored: (n) => (n === 1 ? "Conversation reprise : 1 question." : "Conversation reprise : " + n + " questions."),
  };

  // ------------------------------------------------------------ history (pure)

  // The history a question is sent with: the answered turns before it, as user/assistant
  // pairs, oldest dropped first, each turn cut to the daemon's length, and as many exchanges
  // as keep `fits(history)` (the request's URL length) true. The Obsidian preview follows the
  // same rule (obsidian-plugin/src/thread.ts); both are tested on shared-protocol/cases/history.json.
  // The first `n` UTF-16 units of `text`, one fewer when the last would split a surrogate pair:
  // an emoji cut in half is sent as a lone "\ud83d", which the daemon refuses.
  function cutText(text, n) {
    const cut = text.slice(0, n);
    return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
  }

  function historyFor(turns, limits, fits) {
    const maxChars = limits.maxTurnChars;
    const pairs = [];
    for (const t of turns) {
      if (t.status !== "done" || typeof t.response !== "string") continue;
      pairs.push([
        { role: "user", content: cutText(t.q, maxChars) },
        { role: "assistant", content: cutText(t.response, maxChars) },
      ]);
    }
    const most = Math.floor(limits.maxItems / 2);
    if (most === 0) {
      // A daemon that takes one turn: the last question, what finds a follow-up's notes
      // (slice(-0) would have kept every exchange, refused again at each try).
      const last = pairs.length ? [pairs[pairs.length - 1][0]] : [];
      return fits(last) ? last : [];
    }
    let kept = pairs.slice(-most);
    const flat = () => kept.flat();
    while (kept.length > 1 && !fits(flat())) kept = kept.slice(1);
    if (kept.length === 1 && !fits(flat())) {
      // One exchange left, still too long: its answer is cut until it fits.
      const [user, assistant] = kept[0];
      let length = assistant.content.length;
      while (length > 0 && !fits([user, { role: "assistant", content: cutText(assistant.content, length) }])) {
        length = Math.floor(length / 2);
      }
      kept = length > 0 ? [[user, { role: "assistant", content: cutText(assistant.content, length) }]] : [];
    }
    return flat();
  }

  // A daemon whose limits are lower than the protocol's says which in its 400's `data`, in
  // fields (`{"reason": "…", "param": "history", "max_history": 4}`, `max_turn` for a turn's
  // characters: openrpc.json's InvalidParamsData), never read from the sentence, whose words may
  // change; a daemon before the fields said the sentence alone (« `history` : doit compter au
  // plus 4 éléments (nombre reçu : 8) », or, older still, in English), read as it was. The new
  // limits, or null when the refusal is about something else.
  function lowerLimits(limits, detail) {
    if (detail && typeof detail === "object") {
      const items = count(detail.max_history);
      if (items !== null) return { ...limits, maxItems: items };
      const chars = count(detail.max_turn);
      return chars === null ? null : { ...limits, maxTurnChars: chars };
    }
    if (typeof detail !== "string") return null;
    const items = /^(?:`history` : doit compter au plus (\d+) éléments|history: must have at most (\d+) items)/.exec(detail);
    if (items) return { ...limits, maxItems: Number(items[1] || items[2]) };
    const chars = /^(?:`history\[\d+\]\.content` : doit compter au plus (\d+) caractères|history\[\d+\]\.content: must be at most (\d+) characters)/.exec(detail);
    if (chars) return { ...limits, maxTurnChars: Number(chars[1] || chars[2]) };
    return null;
  }

  // The most characters a daemon's 400 says a question may have (GRASBOT_MAX_QUESTION), in
  // `data.max_question`, or in an older daemon's sentence; null when it says something else.
  function questionLimit(detail) {
    if (detail && typeof detail === "object") return count(detail.max_question);
    const said = typeof detail === "string" && /^(?:`q` : doit compter au plus (\d+) caractères|q: must be at most (\d+) characters)/.exec(detail);
    return said ? Number(said[1] || said[2]) : null;
  }

  // A limit a daemon's `data` gives: a whole number of at least 1, else null.
  function count(value) {
    return Number.isInteger(value) && value >= 1 ? value : null;
  }

  // ------------------------------------------------------------ the stream

  class HttpFailure extends Error {
    constructor(status, retryAfter, detail) {
      super("HTTP " + status);
      this.status = status;
      this.retryAfter = retryAfter;
      this.detail = detail;
    }
  }
  class Interrupted extends Error {}
  class ServerError extends Error {}

  // GET /ask/stream by fetch (not EventSource: it would hide the HTTP status, a 429's
  // Retry-After, and reconnect by itself), its events handed to `onEvent(name, data)`.
  async function streamAnswer(url, onEvent, signal) {
    const response = await fetch(url, {
      signal,
      headers: { Accept: "text/event-stream" },
      credentials: "omit",
      cache: "no-store",
      referrerPolicy: "no-referrer",
    });
    if (!response.ok) {
      let detail = null;
      try {
        const body = await response.json();
        detail = body && body.error ? body.error.data : null;
      } catch (_) {
        detail = null;
      }
      const retry = Number(response.headers.get("Retry-After"));
      throw new HttpFailure(response.status, Number.isFinite(retry) && retry > 0 ? retry : null, detail);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let finished = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const blocks = buffer.split(/\r\n\r\n|\n\n|\r\r/);
      buffer = blocks.pop();
      for (const block of blocks) {
        const event = parseEvent(block);
        if (!event) continue;
        if (event.name === "error") throw new ServerError(event.data && event.data.message);
        onEvent(event.name, event.data);
        if (event.name === "done") finished = true;
      }
    }
    if (!finished) throw new Interrupted();
  }

  function parseEvent(block) {
    let name = "message";
    const data = [];
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (!data.length) return null;
    try {
      return { name, data: JSON.parse(data.join("\n")) };
    } catch (_) {
      return null;
    }
  }

  // ------------------------------------------------------------ rendering (text only)

  function make(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // Only http(s) and relative links: a `javascript:` URL from a note's frontmatter stays inert.
  // A relative link is one of the site's pages: read against the page's <base> when that is on
  // the page's own host, else against the page (a <base> of a CDN's host sent visitors there).
  function safeHref(url) {
    try {
      const own = new URL(document.baseURI).origin === new URL(document.URL).origin;
      const parsed = new URL(url, own ? document.baseURI : document.URL);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (_) {
      return null;
    }
  }

  // A note's text (a title, a type, a heading) is isolated from what is around it (dir="auto":
  // unicode-bidi: isolate): a right-to-left override it leaves open (U+202E, from a clipped
  // page) turned the rest of the answer's line, or of the source's card, right to left.
  function isolated(node) {
    node.dir = "auto";
    return node;
  }

  // `text`: a string, or the parts of a heading path, each isolated from the others.
  function linkOrText(parent, url, text, className) {
    const href = typeof url === "string" && url ? safeHref(url) : null;
    const node = isolated(make(href ? "a" : "span", className, typeof text === "string" ? text : undefined));
    if (Array.isArray(text)) {
      text.forEach((part, i) => {
        if (i) node.appendChild(document.createTextNode(" › "));
        node.appendChild(make("bdi", null, part));
      });
    }
    if (href) node.href = href;
    parent.appendChild(node);
    return node;
  }

  // A fence opens with ``` or ~~~ and at most a language name, and closes with the same alone.
  const FENCE = /^\s*(`{3,}|~{3,})\s*[\w+-]*\s*$/;
  const ITEM = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;
  const HEADING = /^\s*#{1,6}\s+(.*)$/;
  // code span | **bold** | __bold__ | *italic* | _italic_ | [slug] (the daemon's citation form)
  const INLINE =
    /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)|(?<![\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])|(?<!\w)_(?=[^\s_])([^_]*?[^\s_])_(?!\w)|\[([a-z0-9][a-z0-9-]*)\](?!\()/g;

  // Plain Markdown (paragraphs, lists, bold, italics, inline code, code blocks) into `parent`,
  // built node by node. `cite(slug)` gives the source a `[slug]` names, or null.
  function renderMarkdown(parent, text, cite) {
    const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    let paragraph = null;
    let list = null;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = FENCE.exec(line);
      if (fence) {
        const body = [];
        for (i++; i < lines.length && lines[i].trim() !== fence[1]; i++) body.push(lines[i]);
        const pre = make("pre", "grasbot-md-code");
        pre.tabIndex = 0; // it may scroll sideways: the keyboard must reach it
        pre.appendChild(make("code", null, body.join("\n")));
        parent.appendChild(pre);
        paragraph = list = null;
        continue;
      }
      if (!line.trim()) {
        paragraph = list = null;
        continue;
      }
      const item = ITEM.exec(line);
      if (item) {
        const ordered = !item[1];
        if (!list || list.ordered !== ordered) {
          list = { node: make(ordered ? "ol" : "ul"), ordered, last: null };
          if (ordered && item[2] !== "1") list.node.start = Number(item[2]);
          parent.appendChild(list.node);
        }
        list.last = make("li");
        renderInline(list.last, item[3], cite);
        list.node.appendChild(list.last);
        paragraph = null;
        continue;
      }
      if (list && /^\s+\S/.test(line)) {
        list.last.appendChild(document.createTextNode(" "));
        renderInline(list.last, line.trim(), cite);
        continue;
      }
      list = null;
      const heading = HEADING.exec(line);
      if (heading) {
        const p = make("p", "grasbot-md-heading");
        const strong = make("strong");
        renderInline(strong, heading[1], cite);
        p.appendChild(strong);
        parent.appendChild(p);
        paragraph = null;
        continue;
      }
      if (paragraph) paragraph.appendChild(make("br"));
      else paragraph = parent.appendChild(make("p"));
      renderInline(paragraph, line, cite);
    }
  }

  function renderInline(parent, text, cite) {
    let at = 0;
    for (const m of text.matchAll(INLINE)) {
      if (m.index > at) parent.appendChild(document.createTextNode(text.slice(at, m.index)));
      at = m.index + m[0].length;
      if (m[1]) {
        parent.appendChild(make("code", null, m[2]));
      } else if (m[3] !== undefined || m[4] !== undefined) {
        const strong = parent.appendChild(make("strong"));
        renderInline(strong, m[3] !== undefined ? m[3] : m[4], cite);
      } else if (m[5] !== undefined || m[6] !== undefined) {
        const em = parent.appendChild(make("em"));
        renderInline(em, m[5] !== undefined ? m[5] : m[6], cite);
      } else {
        const source = cite ? cite(m[7]) : null;
        if (source) {
          parent.appendChild(document.createTextNode("["));
          linkOrText(parent, source.url, sourceName(source), "grasbot-cite");
          parent.appendChild(document.createTextNode("]"));
        } else {
          parent.appendChild(document.createTextNode(m[0]));
        }
      }
    }
    if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
  }

  function sourceName(s) {
    return typeof s.title === "string" && s.title ? s.title : String(s.slug || "");
  }

  function renderSources(sources) {
    const list = make("ul", "grasbot-sources");
    list.setAttribute("role", "list"); // unstyled (list-style: none): Safari no longer says it is a list
    for (const s of sources) {
      const card = make("li", "grasbot-source");
      const name = sourceName(s);
      linkOrText(card, s.url, name, "grasbot-source-title");
      if (typeof s.type === "string" && s.type) card.appendChild(isolated(make("span", "grasbot-source-type", s.type)));
      const passages = renderPassages(s, name);
      if (passages) card.appendChild(passages);
      list.appendChild(card);
    }
    return list;
  }

  // The sections of a note the answer was written from, each a link to that section of its
  // page. A note sent whole has no heading: the card's own title links to it.
  function renderPassages(s, name) {
    const list = make("ul", "grasbot-passages");
    list.setAttribute("role", "list");
    for (const p of Array.isArray(s.passages) ? s.passages : []) {
      const heading = Array.isArray(p.heading) ? p.heading.filter((h) => typeof h === "string" && h) : [];
      if (heading.length && heading[0] === name) heading.shift();
      if (!heading.length) continue;
      const item = make("li", "grasbot-passage");
      linkOrText(item, p.url, heading);
      list.appendChild(item);
    }
    return list.children.length ? list : null;
  }

  // ------------------------------------------------------------ the chat

  let mounted = 0;

  // Mounts a chat in `root`. options: base (the daemon's URL, ending in "/"), storageKey
  // (sessionStorage key of the thread). Escape while an answer streams stops it and goes no
  // further (the widget's panel stays open); otherwise it is the page's.
  function mount(root, options) {
    const base = options.base;
    const storageKey = options.storageKey;
    const id = "grasbot-" + ++mounted;
    let limits = { ...LIMITS };
    let turns = load(storageKey);
    let inflight = null; // {controller, turn}
    let leaving = false; // the page is being left (pagehide): a failing stream is not an error to show

    // The element with the focus in the chat's own tree, the document or the widget's shadow root
    // (where document.activeElement is the shadow's host); read when needed: the widget mounts
    // the chat before it puts it in its shadow root.
    const focused = () => root.getRootNode().activeElement;
    root.classList.add("grasbot");
    root.dataset.state = "idle";
    const toolbar = root.appendChild(make("div", "grasbot-toolbar"));
    const reset = toolbar.appendChild(make("button", "grasbot-new", "Nouvelle conversation"));
    reset.type = "button";
    const thread = root.appendChild(make("ol", "grasbot-thread"));
    thread.setAttribute("role", "list"); // as the sources': without bullets, VoiceOver read no list
    thread.setAttribute("aria-label", "Conversation");
    const status = root.appendChild(make("p", "grasbot-status"));
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    // The answer is announced once complete, not token by token.
    const announcer = root.appendChild(make("div", "grasbot-visually-hidden grasbot-announce"));
    announcer.setAttribute("aria-live", "polite");
    announcer.setAttribute("aria-atomic", "true");
    const form = root.appendChild(make("form", "grasbot-form"));
    form.setAttribute("autocomplete", "off");
    const label = form.appendChild(make("label", "grasbot-label", "Votre question"));
    label.htmlFor = id + "-question";
    const input = form.appendChild(make("textarea", "grasbot-input"));
    input.dir = "auto"; // a question typed in Arabic or Hebrew reads right to left
    input.id = id + "-question";
    input.rows = 2;
    input.maxLength = 500;
    input.placeholder = "Par exemple : quels projets utilisent Python ?";
    input.setAttribute("aria-describedby", id + "-hint");
    const actions = form.appendChild(make("div", "grasbot-actions"));
    const send = actions.appendChild(make("button", "grasbot-send", "Envoyer"));
    send.type = "submit";
    const stop = actions.appendChild(make("button", "grasbot-stop", "Arrêter"));
    stop.type = "button";
    stop.hidden = true;
    const hint = form.appendChild(
      make("p", "grasbot-hint", "Entrée pour envoyer, Maj+Entrée pour aller à la ligne, Échap pour arrêter la réponse."),
    );
    hint.id = id + "-hint";

    for (const turn of turns) {
      if (turn.status === "streaming") Object.assign(turn, { status: "error", error: { kind: "interrupted" } });
      thread.appendChild(renderTurn(turn));
    }
    if (turns.length) status.textContent = MESSAGES.restored(turns.length);

    function setState(state) {
      root.dataset.state = state;
      const busy = state === "streaming";
      send.disabled = busy;
      stop.hidden = !busy;
    }

    function save() {
      try {
        const kept = turns.map((turn) => {
          const { node, progress, ...fields } = turn; // not kept: its element, its passing progress line
          return fields;
        });
        sessionStorage.setItem(storageKey, JSON.stringify({ v: 1, turns: kept }));
      } catch (_) {
        // storage full or disabled: the thread lives as long as the page
      }
    }

    // `fresh`: the turn has just ended here. Only then is its error an alert: one kept from
    // before a reload, said again as it was drawn, would sound like a new failure.
    function renderTurn(turn, fresh) {
      const item = make("li", "grasbot-turn");
      item.dataset.status = turn.status;
      const question = item.appendChild(make("div", "grasbot-question"));
      question.dir = "auto";
      question.appendChild(make("span", "grasbot-visually-hidden", "Vous : "));
      question.appendChild(document.createTextNode(turn.q));
      const reply = item.appendChild(make("div", "grasbot-reply"));
      reply.appendChild(make("span", "grasbot-visually-hidden", "GrasBot : "));
      // the notes the answer was written from: grounded, and with a passage the model was given
      // (the ranking's other notes, and those of an answer from no note, were never read)
      const read = turn.grounded && turn.sources ? turn.sources.filter((s) => !Array.isArray(s.passages) || s.passages.length > 0) : [];
      if (turn.sources) {
        // none read (a note with no text to quote, an extract that found no sentence): the
        // answer came from no note, « basé sur 0 notes » said otherwise (the preview reads it so too)
        const badge = reply.appendChild(make("span", "grasbot-badge"));
        badge.classList.toggle("is-general", !read.length);
        badge.textContent = read.length ? MESSAGES.grounded(read.length) : MESSAGES.general;
      }
      if (turn.status === "streaming") {
        reply.appendChild(make("p", "grasbot-progress", turn.progress || MESSAGES.searching));
      }
      // An answer built from the notes alone (model busy or failed) can be asked for again.
      const done = turn.status === "done";
      const extractive = done && (turn.busy || turn.llmError || turn.model === null);
      if (extractive) reply.appendChild(make("p", "grasbot-note", turn.busy ? MESSAGES.busy : MESSAGES.fallback));
      const answer = reply.appendChild(make("div", "grasbot-answer"));
      answer.dir = "auto";
      if (done) renderMarkdown(answer, turn.response || "", citeIn(turn.sources));
      else if (turn.partial) renderMarkdown(answer, turn.partial, citeIn(turn.sources)); // stopped or cut: as it was shown
      if (turn.status === "stopped") reply.appendChild(make("p", "grasbot-note", MESSAGES.stopped));
      if (turn.status === "error") {
        const error = reply.appendChild(make("p", "grasbot-error", errorText(turn.error)));
        if (fresh) error.setAttribute("role", "alert");
      }
      // a question the daemon refused (400) would be refused again: no Retry for it
      const refused = turn.status === "error" && turn.error && (turn.error.kind === "tooLong" || (turn.error.kind === "http" && turn.error.status === 400));
      if (turn.status === "stopped" || (turn.status === "error" && !refused) || extractive) {
        const retry = reply.appendChild(make("button", "grasbot-retry", "Réessayer"));
        retry.type = "button";
        const wait = turn.error && turn.error.kind === "rate" && turn.error.until ? turn.error.until - Date.now() : 0;
        if (wait > 0) {
          // the daemon said when: a Retry before then is refused again, with the same words
          retry.disabled = true;
          setTimeout(() => {
            retry.disabled = false;
          }, wait);
        }
        retry.addEventListener("click", () => {
          void ask(turn.q, turn);
          if (inflight) stop.focus(); // the button is gone with the turn it was in: Escape still stops
        });
      }
      if (read.length) {
        const sources = reply.appendChild(make("div", "grasbot-sources-block"));
        sources.appendChild(make("p", "grasbot-sources-title", "Sources"));
        sources.appendChild(renderSources(read));
      }
      turn.node = item;
      return item;
    }

    function refresh(turn, fresh) {
      const old = turn.node;
      const item = renderTurn(turn, fresh);
      if (old && old.parentNode === thread) thread.replaceChild(item, old);
      else thread.appendChild(item);
    }

    function citeIn(sources) {
      const bySlug = new Map((sources || []).map((s) => [s.slug, s]));
      return (slug) => bySlug.get(slug) || null;
    }

    function errorText(error) {
      if (!error) return MESSAGES.interrupted;
      if (error.kind === "network") return MESSAGES.network;
      if (error.kind === "rate") return error.reason || MESSAGES.rateLimited(error.retryAfter || 60);
      if (error.kind === "tooLong") return MESSAGES.tooLong(error.max);
      if (error.kind === "http") return error.status === 400 ? MESSAGES.refused : MESSAGES.http(error.status);
      if (error.kind === "server") return MESSAGES.server;
      return MESSAGES.interrupted;
    }

    function urlFor(q, history) {
      let url = base + STREAM_PATH + "?q=" + encodeURIComponent(q);
      if (history.length) url += "&history=" + encodeURIComponent(JSON.stringify(history));
      return url;
    }

    // Asks `q`, as a new turn or again in place of `again` (a retry), with the history of
    // the turns before it.
    async function ask(q, again) {
      if (inflight) {
        status.textContent = MESSAGES.wait;
        return;
      }
      const turn = again || { q };
      const before = turns.slice(0, again ? turns.indexOf(again) : turns.length);
      Object.assign(turn, {
        status: "streaming", response: null, partial: "", sources: null, grounded: false, model: undefined,
        llmError: false, busy: false, error: null, progress: MESSAGES.searching,
      });
      if (!again) turns.push(turn);
      refresh(turn);
      const controller = new AbortController();
      inflight = { controller, turn };
      setState("streaming");
      status.textContent = MESSAGES.searching;
      announcer.textContent = "";
      save();
      let answerNode = null;
      let pending = false;
      const showPartial = () => {
        pending = false;
        if (turn.status !== "streaming") return; // the final answer is already shown
        if (!answerNode) answerNode = turn.node.querySelector(".grasbot-answer");
        answerNode.replaceChildren();
        renderMarkdown(answerNode, turn.partial, citeIn(turn.sources));
      };
      const onEvent = (name, data) => {
        if (name === "queue" && data && Number.isInteger(data.position)) {
          turn.progress = MESSAGES.queued(data.position);
          status.textContent = turn.progress;
          refresh(turn);
        } else if (name === "sources" && data) {
          turn.sources = Array.isArray(data.sources) ? data.sources : [];
          turn.grounded = Boolean(data.grounded);
          turn.progress = MESSAGES.writing;
          status.textContent = MESSAGES.writing;
          refresh(turn);
          answerNode = null;
        } else if (name === "token" && data && typeof data.text === "string") {
          if (turn.progress !== MESSAGES.writing) {
            // out of the queue: the model writes
            turn.progress = MESSAGES.writing;
            status.textContent = MESSAGES.writing;
            refresh(turn);
            answerNode = null;
          }
          turn.partial += data.text;
          if (!pending) {
            pending = true;
            requestAnimationFrame(showPartial);
          }
        } else if (name === "done" && data) {
          Object.assign(turn, {
            status: "done",
            response: typeof data.response === "string" ? data.response : "",
            sources: Array.isArray(data.sources) ? data.sources : turn.sources || [],
            grounded: Boolean(data.grounded),
            model: data.model === undefined ? undefined : data.model,
            llmError: Boolean(data.llm_error),
            busy: data.busy === true,
          });
        }
      };
      let attempts = 0;
      for (;;) {
        const history = historyFor(before, limits, (h) => urlFor(q, h).length <= limits.maxUrl);
        try {
          await streamAnswer(urlFor(q, history), onEvent, controller.signal);
          break;
        } catch (error) {
          if (leaving) {
            // the page goes (a reload, a closed tab): interrupted, not a network error, and kept so
            Object.assign(turn, { status: "error", error: { kind: "interrupted" } });
            break;
          }
          const lower = error instanceof HttpFailure && error.status === 400 ? lowerLimits(limits, error.detail) : null;
          if (lower && attempts++ < 3) {
            limits = lower;
            continue;
          }
          if (controller.signal.aborted) turn.status = "stopped";
          else {
            const said = describe(error);
            // words had come: the connection broke on the daemon's side, not the visitor's
            Object.assign(turn, { status: "error", error: said.kind === "network" && turn.partial ? { kind: "interrupted" } : said });
            if (said.kind === "tooLong") input.value = q; // to shorten, not to type again
          }
          break;
        }
      }
      if (!turns.includes(turn)) return; // "Nouvelle conversation" meanwhile
      inflight = null;
      delete turn.progress;
      const stopFocused = focused() === stop;
      setState(turn.status === "done" ? "done" : turn.status);
      refresh(turn, true);
      save();
      if (turn.status === "done") {
        status.textContent = MESSAGES.done;
        // innerText: paragraphs, list items and lines apart, as a screen reader must say them;
        // an answer made of the notes' extracts says so first
        const notes = [...turn.node.querySelectorAll(".grasbot-note")].map((note) => note.textContent + " ");
        announcer.textContent = notes.join("") + MESSAGES.answerIs + turn.node.querySelector(".grasbot-answer").innerText;
      } else {
        // An error is said by its own alert in the turn: the status line would say it twice.
        status.textContent = turn.status === "stopped" ? MESSAGES.stopped : "";
      }
      // No scrolling here: on a phone, or in the widget's panel, the form is below a long answer,
      // and bringing it into view took the answer the visitor was reading out of it.
      // Back to the box from the stop button, or when the focus went with a replaced turn; not
      // from wherever else the visitor went meanwhile (a field of the site around the widget).
      const lost = !document.activeElement || document.activeElement === document.body;
      if (stopFocused || lost) input.focus({ preventScroll: true });
    }

    function describe(error) {
      if (error instanceof HttpFailure) {
        if (error.status === 429) {
          // The daemon's own French words when it says why (answers already awaited in other tabs)
          const reason = error.detail && typeof error.detail.reason === "string" ? error.detail.reason : null;
          return { kind: "rate", retryAfter: error.retryAfter, until: Date.now() + 1000 * (error.retryAfter || 60), reason };
        }
        // A daemon configured with a shorter GRASBOT_MAX_QUESTION: say it, and hold the box to it.
        const max = error.status === 400 ? questionLimit(error.detail) : null;
        if (max !== null) {
          input.maxLength = max;
          return { kind: "tooLong", max };
        }
        return { kind: "http", status: error.status };
      }
      if (error instanceof ServerError) return { kind: "server" };
      if (error instanceof Interrupted) return { kind: "interrupted" };
      return { kind: "network" };
    }

    function stopAnswer() {
      if (inflight) inflight.controller.abort();
    }

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const q = input.value.trim();
      if (!q) {
        status.textContent = MESSAGES.empty;
        input.focus();
        return;
      }
      if (inflight) {
        status.textContent = MESSAGES.wait;
        return;
      }
      const fromButton = focused() === send;
      input.value = "";
      void ask(q);
      if (fromButton) stop.focus();
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    root.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || !inflight) return;
      event.preventDefault();
      event.stopPropagation();
      stopAnswer();
    });
    stop.addEventListener("click", stopAnswer);
    // A reload or a closed tab mid-answer: what was written so far is kept with the turn,
    // shown again (interrupted, with a retry) when the page comes back.
    window.addEventListener("pagehide", () => {
      leaving = true;
      if (inflight) save();
    });
    window.addEventListener("pageshow", () => {
      leaving = false; // back from the back-forward cache: this page lives on
    });
    reset.addEventListener("click", () => {
      stopAnswer();
      inflight = null;
      turns = [];
      thread.replaceChildren();
      announcer.textContent = "";
      status.textContent = MESSAGES.cleared;
      setState("idle");
      save();
      input.focus();
    });

    return { input, stop: stopAnswer };
  }

  function load(storageKey) {
    try {
      const saved = JSON.parse(sessionStorage.getItem(storageKey) || "null");
      if (!saved || saved.v !== 1 || !Array.isArray(saved.turns)) return [];
      return saved.turns.filter((t) => t && typeof t.q === "string" && typeof t.status === "string");
    } catch (_) {
      return [];
    }
  }

  window.GrasBotChat = { mount, historyFor, lowerLimits, questionLimit, renderMarkdown, LIMITS, MESSAGES };
})();
