// The reading list page, enhanced: installs the service worker (static/sw.js, served as /sw.js)
// that keeps every saved article for offline reading, and says how much is kept. Without this
// script (or a service worker) the list works the same, online.
(() => {
  "use strict";
  const note = document.querySelector(".offline-note");
  if (!("serviceWorker" in navigator) || !note) return;
  const base = document.documentElement.dataset.root || "";
  const CACHE = "readerproxy-list-v1";

  const show = async () => {
    const cache = await caches.open(CACHE);
    const kept = (await cache.keys()).filter((r) => /\/list\/[A-Za-z0-9_-]{12}$/.test(new URL(r.url).pathname));
    let size = "";
    if (navigator.storage && navigator.storage.estimate) {
      const { usage } = await navigator.storage.estimate();
      if (usage) size = `, ${(usage / 1048576).toFixed(1)} MB`;
    }
    note.textContent = `${kept.length} article${kept.length === 1 ? "" : "s"}${size} kept offline`;
    note.hidden = false;
    note.dataset.kept = String(kept.length);
  };

  navigator.serviceWorker.addEventListener("message", (event) => {
    if (event.data && (event.data.type === "kept" || event.data.type === "kept-all")) show();
  });
  // changes made offline (queued by the worker) go out as soon as the network is back
  addEventListener("online", () => navigator.serviceWorker.ready.then((r) => r.active.postMessage({ type: "flush" })));
  navigator.serviceWorker.register(`${base}/sw.js`).then(async () => {
    const ready = await navigator.serviceWorker.ready;
    ready.active.postMessage({ type: "flush" });
    const response = await fetch(`${base}/api/list?limit=500`, { credentials: "same-origin" });
    if (!response.ok) return show();
    const { entries } = await response.json();
    const urls = [`${base}/list`, ...entries.map((entry) => entry.links.read)];
    ready.active.postMessage({ type: "keep", urls });
  }).catch(() => show());
})();
