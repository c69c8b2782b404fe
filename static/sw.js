// readerproxy's service worker (served as /sw.js): the reading list offline.
// The list page asks it to keep the saved articles (a "keep" message with their addresses): each
// is fetched and kept ("kept"), then what they show (stylesheet, script, /image renditions:
// "kept-all"); articles no longer listed are let go. Pages of the list are fetched from the
// network first and answered from what was kept when the network fails; kept assets are answered
// from the cache first. Changes made offline (a reading position sent by reader.js, the list's
// Mark read / Archive forms) are queued in IndexedDB and sent, in order, once a request gets
// through again (or the page says it is online: a "flush" message). Nothing else is touched.
"use strict";
const CACHE = "readerproxy-list-v1";
// Behind --public-url with a path prefix, the worker's scope is that prefix: every path below is in it.
const BASE = new URL(self.registration.scope).pathname.replace(/\/$/, "");
const ARTICLE = /^\/list\/[A-Za-z0-9_-]{12}$/;
const local = (path) => (path.startsWith(BASE + "/") ? path.slice(BASE.length) : null);

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

// The assets a kept page shows: /static/ files and /image renditions (every srcset candidate).
const assetsOf = (html) => {
  const found = new Set();
  for (const match of html.matchAll(/\s(?:src|href|srcset)="([^"]+)"/g)) {
    for (const candidate of match[1].replaceAll("&amp;", "&").split(",")) {
      const url = candidate.trim().split(/\s+/)[0];
      const path = local(url.split("?")[0]);
      if (path && (path.startsWith("/static/") || path === "/image")) found.add(url);
    }
  }
  return found;
};

// Keep the pages first (then the list can say so), then what they show, a few at a time.
const keep = async (urls, told) => {
  const cache = await caches.open(CACHE);
  const wanted = new Set(urls.map((url) => new URL(url, self.location.origin).pathname));
  const assets = new Set();
  for (const path of wanted) {
    try {
      const response = await fetch(path, { credentials: "same-origin" });
      if (!response.ok) continue;
      const html = await response.clone().text();
      await cache.put(path, response);
      for (const asset of assetsOf(html)) assets.add(asset);
    } catch (error) { /* offline now: kept as before */ }
  }
  for (const request of await cache.keys()) { // articles no longer in the list are let go
    const path = new URL(request.url).pathname;
    if (ARTICLE.test(local(path) || "") && !wanted.has(path)) await cache.delete(request);
  }
  told();
  const queue = [...assets];
  const worker = async () => {
    for (let asset = queue.shift(); asset !== undefined; asset = queue.shift()) {
      try {
        if (await cache.match(asset)) continue;
        const kept = await fetch(asset, { credentials: "same-origin" });
        if (kept.ok) await cache.put(asset, kept);
      } catch (error) { /* an image that cannot be fetched now: the page shows without it */ }
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
};

// ---- changes made offline -------------------------------------------------------------------
const CHANGE = /^\/(?:api\/)?list\/[A-Za-z0-9_-]{12}\/(?:progress|state)$/;
const outbox = () =>
  new Promise((resolve, reject) => {
    const opening = indexedDB.open("readerproxy-list", 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore("outbox", { autoIncrement: true });
    opening.onsuccess = () => resolve(opening.result);
    opening.onerror = () => reject(opening.error);
  });
const done = (transaction) =>
  new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
  });
const queue = async (change) => {
  const db = await outbox();
  const transaction = db.transaction("outbox", "readwrite");
  transaction.objectStore("outbox").add(change);
  await done(transaction);
};
let flushing = null;
const flush = () => {
  flushing = flushing || (async () => {
    const db = await outbox();
    const read = db.transaction("outbox", "readonly").objectStore("outbox");
    const [keys, changes] = await Promise.all(
      [read.getAllKeys(), read.getAll()].map((r) => new Promise((ok, no) => { r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); })),
    );
    for (let i = 0; i < keys.length; i += 1) {
      const { url, type, body } = changes[i];
      let answer;
      try {
        answer = await fetch(url, { method: "POST", headers: { "Content-Type": type }, body, credentials: "same-origin", redirect: "manual" });
      } catch (error) {
        return; // still offline: the rest waits too, in order
      }
      if (answer.status >= 500) return;
      const transaction = db.transaction("outbox", "readwrite");
      transaction.objectStore("outbox").delete(keys[i]); // sent (or refused for good: a 4xx)
      await done(transaction);
    }
  })().finally(() => { flushing = null; });
  return flushing;
};
const queued = async (request, path) => {
  const body = await request.clone().text();
  const type = request.headers.get("Content-Type") || "application/x-www-form-urlencoded";
  try {
    const answer = await fetch(request);
    flush();
    return answer;
  } catch (error) {
    await queue({ url: request.url, type, body, at: Date.now() });
    if (path.startsWith("/api/")) {
      return new Response(JSON.stringify({ queued: true }), { status: 202, headers: { "Content-Type": "application/json" } });
    }
    const back = new URLSearchParams(body).get("back") || "/list";
    return Response.redirect(BASE + (back.startsWith("/list") && !back.includes("//") ? back : "/list"), 303);
  }
};

self.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type === "flush") {
    event.waitUntil(flush());
    return;
  }
  if (data.type !== "keep" || !Array.isArray(data.urls)) return;
  const tell = (type) => event.source && event.source.postMessage({ type });
  event.waitUntil(keep(data.urls, () => tell("kept")).then(() => tell("kept-all")));
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  const path = local(url.pathname);
  if (url.origin !== self.location.origin || path === null) return;
  if (request.method === "POST" && CHANGE.test(path)) {
    event.respondWith(queued(request, path));
    return;
  }
  if (request.method !== "GET") return;
  if (path === "/list" || ARTICLE.test(path)) {
    event.respondWith(
      fetch(request).then((answer) => { flush(); return answer; }).catch(async () => {
        const cache = await caches.open(CACHE);
        return (await cache.match(url.pathname)) || (await cache.match(BASE + "/list")) || Response.error();
      }),
    );
  } else if (path.startsWith("/static/") || path === "/image") {
    event.respondWith(caches.match(request).then((kept) => kept || fetch(request)));
  }
});
