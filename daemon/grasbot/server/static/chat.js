// GrasBot's chat page. No build step, no dependency.
// Server text only ever reaches the page through textContent / text nodes: a note or an
// answer that contains markup shows as text, it is never parsed as HTML.
"use strict";

(function () {
  const STREAM_URL = "ask/stream"; // relative: works at / and under a proxy's prefix

  const MESSAGES = {
    searching: "Recherche dans les notes…",
    writing: "Rédaction de la réponse…",
    done: "Réponse terminée.",
    failed: "La réponse n'a pas pu être obtenue : le service est indisponible ou trop de questions ont été posées à la suite. Réessayez dans un instant.",
    interrupted: "La réponse a été interrompue avant la fin. Réessayez dans un instant.",
    serverError: "GrasBot a rencontré une erreur : ",
    empty: "Écrivez une question avant de demander.",
    general: "réponse généraliste",
  };

  const el = (id) => document.getElementById(id);
  const chat = el("chat");
  const form = el("ask-form");
  const input = el("question");
  const button = el("ask-button");
  const statusLine = el("status");
  const reply = el("reply");
  const badge = el("badge");
  const llmNote = el("llm-note");
  const answer = el("answer");
  const errorBox = el("error");
  const sourcesSection = el("sources-section");
  const sourceList = el("sources");

  let source = null; // the EventSource in flight
  let receivedTokens = false;

  function setState(state, message) {
    chat.dataset.state = state;
    statusLine.textContent = message || "";
    button.disabled = state === "loading" || state === "streaming";
  }

  function groundedLabel(count) {
    return count === 1 ? "basé sur 1 note" : "basé sur " + count + " notes";
  }

  function showBadge(grounded, count) {
    badge.hidden = false;
    badge.classList.toggle("is-general", !grounded);
    badge.textContent = grounded ? groundedLabel(count) : MESSAGES.general;
  }

  function showSources(sources) {
    sourceList.replaceChildren();
    for (const s of sources) {
      const card = document.createElement("li");
      card.className = "source-card";
      const title = document.createElement("span");
      title.className = "source-title";
      const name = typeof s.title === "string" && s.title ? s.title : String(s.slug || "");
      linkOrText(title, s.url, name);
      card.appendChild(title);
      if (typeof s.type === "string" && s.type) {
        const kind = document.createElement("span");
        kind.className = "source-type";
        kind.textContent = s.type;
        card.appendChild(kind);
      }
      const sections = showPassages(s, name);
      if (sections) card.appendChild(sections);
      sourceList.appendChild(card);
    }
    sourcesSection.hidden = sources.length === 0;
  }

  // The sections of a note the answer was written from, each a link to it on the site when
  // the note has a page (its url ends with the section's anchor). A note sent whole, or its
  // opening, has no heading: the card's own title already links to it.
  function showPassages(s, name) {
    const passages = Array.isArray(s.passages) ? s.passages : [];
    const list = document.createElement("ul");
    list.className = "source-passages";
    for (const p of passages) {
      const heading = Array.isArray(p.heading) ? p.heading.filter((h) => typeof h === "string" && h) : [];
      if (heading.length && heading[0] === name) heading.shift(); // the note's title, said by the card
      if (!heading.length) continue;
      const item = document.createElement("li");
      item.className = "source-passage";
      linkOrText(item, p.url, heading.join(" › "));
      list.appendChild(item);
    }
    return list.children.length ? list : null;
  }

  // `text` in `parent`, as a link to `url` when there is one.
  function linkOrText(parent, url, text) {
    if (typeof url === "string" && url) {
      const link = document.createElement("a");
      link.href = safeHref(url);
      link.textContent = text;
      parent.appendChild(link);
    } else {
      parent.textContent = text;
    }
  }

  // Only http(s) and relative links: a `javascript:` URL from a note's frontmatter stays inert.
  function safeHref(url) {
    try {
      const parsed = new URL(url, document.baseURI);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : "#";
    } catch (_) {
      return "#";
    }
  }

  function showError(message) {
    errorBox.hidden = false;
    errorBox.textContent = message;
  }

  function finish(payload) {
    stop();
    answer.textContent = typeof payload.response === "string" ? payload.response : "";
    const sources = Array.isArray(payload.sources) ? payload.sources : [];
    showSources(sources);
    showBadge(Boolean(payload.grounded), sources.length);
    llmNote.hidden = !payload.llm_error;
    setState("done", MESSAGES.done);
  }

  function fail(message) {
    stop();
    showError(message);
    setState("error", "");
  }

  function stop() {
    if (source) {
      source.close();
      source = null;
    }
  }

  function parse(event) {
    try {
      return JSON.parse(event.data);
    } catch (_) {
      return null;
    }
  }

  function ask(question) {
    stop();
    receivedTokens = false;
    reply.hidden = false;
    answer.replaceChildren();
    errorBox.hidden = true;
    errorBox.textContent = "";
    badge.hidden = true;
    llmNote.hidden = true;
    sourceList.replaceChildren();
    sourcesSection.hidden = true;
    setState("loading", MESSAGES.searching);

    const es = new EventSource(STREAM_URL + "?q=" + encodeURIComponent(question));
    source = es;

    es.addEventListener("sources", (event) => {
      const data = parse(event);
      if (!data) return;
      const sources = Array.isArray(data.sources) ? data.sources : [];
      showSources(sources);
      showBadge(Boolean(data.grounded), sources.length);
      setState("streaming", MESSAGES.writing);
    });

    es.addEventListener("token", (event) => {
      const data = parse(event);
      if (!data || typeof data.text !== "string") return;
      receivedTokens = true;
      answer.appendChild(document.createTextNode(data.text));
    });

    es.addEventListener("done", (event) => {
      const data = parse(event);
      if (data) finish(data);
      else fail(MESSAGES.interrupted);
    });

    // Two kinds of "error": the daemon's own event (it has data) and a failed connection
    // (no data). Either way the stream is over: close it so EventSource does not reconnect
    // and ask the question again.
    es.addEventListener("error", (event) => {
      if (source !== es) return;
      const data = event.data ? parse(event) : null;
      if (data && typeof data.message === "string") {
        fail(MESSAGES.serverError + data.message);
      } else {
        fail(receivedTokens || chat.dataset.state === "streaming" ? MESSAGES.interrupted : MESSAGES.failed);
      }
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (!question) {
      setState("idle", MESSAGES.empty);
      return;
    }
    ask(question);
  });
})();
