// The chat page at `/`: the shared chat (chat.js) mounted in the page's <main>.
"use strict";

(function () {
  const root = document.getElementById("grasbot-page-chat");
  // Relative to the page: works at / and under any prefix a proxy gives it.
  const base = new URL(".", document.baseURI).href;
  const chat = window.GrasBotChat.mount(root, { base, storageKey: "grasbot-chat:" + base });
  chat.input.focus();
})();
