// readerproxy reader view, enhanced: preferences applied in the page at once (attributes on <html>
// that the stylesheet reads, the same rp_* cookies the server sets, the scroll position kept, no
// history entry), a toolbar that slides away while reading down and comes back on scrolling up, a
// reading-progress bar, read-aloud paragraph by paragraph (Web Speech API), and on a saved
// article of the reading list its reading position restored and sent back.
// Without this script the page works the same: every preference is a link the server answers.
// Keys: + / - text size, t next theme, s listen / pause, n / p next / previous paragraph,
// Escape closes the preferences.
(() => {
  "use strict";
  const root = document.documentElement;
  const article = document.querySelector("article.reader");
  if (!article) return;
  root.classList.add("js");

  const store = (storage, key, value) => {
    try {
      if (value === null) storage.removeItem(key);
      else storage.setItem(key, String(value));
    } catch (error) { /* storage disabled: nothing is remembered */ }
  };
  const recall = (storage, key) => {
    try { return storage.getItem(key); } catch (error) { return null; }
  };
  const reducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

  // ---- Preferences applied at once ---------------------------------------------------------------
  const details = document.querySelector("details.prefs");
  const panel = document.querySelector(".prefs-panel");
  const sizeRow = document.querySelector(".size-row");
  const sizes = (sizeRow && sizeRow.dataset.sizes || "s m l xl").split(" ");
  const sizeLabels = (sizeRow && sizeRow.dataset.labels || "").split("|");
  const maxAge = Number(panel && panel.dataset.maxAge) || 365 * 24 * 3600;
  let lastY = scrollY; // where the toolbar last decided to show or hide
  const READING_LINE = 0.25; // the share of the window's height where the reader's eyes are
  const ANCHORS = "p, li, h1, h2, h3, h4, h5, h6, blockquote, pre, figure, dt, dd, tr, hr, .article-head";

  // The element at the reading line, and how far into it the line falls (a share of its height).
  const readingAnchor = () => {
    if (scrollY <= 0) return null;
    const line = innerHeight * READING_LINE;
    for (const element of article.querySelectorAll(ANCHORS)) {
      const box = element.getBoundingClientRect();
      if (box.height > 0 && box.bottom > line) {
        return { element, share: (line - box.top) / box.height }; // negative: in the gap above it
      }
    }
    return null;
  };
  const keepReadingAnchor = (anchor) => {
    if (!anchor) return;
    const box = anchor.element.getBoundingClientRect(); // the new layout
    const delta = box.top + anchor.share * box.height - innerHeight * READING_LINE;
    if (Math.abs(delta) >= 1) scrollBy({ top: delta, behavior: "instant" });
    lastY = scrollY; // not a scroll of the reader's: the toolbar stays as it is
  };

  // The href of the current choice, which carries every current preference.
  const currentHref = (key, value) => {
    const current = panel && panel.querySelector("a[data-pref].on");
    if (!current) return null;
    const url = new URL(current.href);
    url.searchParams.set(key, value);
    return url.pathname + url.search;
  };

  const markChoice = (link, on) => {
    link.classList.toggle("on", on);
    const tick = link.querySelector(".tick");
    if (on) {
      link.setAttribute("aria-current", "true");
      if (!tick) {
        const mark = document.createElement("span");
        mark.className = "tick";
        mark.setAttribute("aria-hidden", "true");
        mark.textContent = "\u2713 ";
        link.prepend(mark);
      }
    } else {
      link.removeAttribute("aria-current");
      if (tick) tick.remove();
    }
  };

  // A− and A+: a link to the next size, or a dashed placeholder at either end.
  const updateSteps = (size) => {
    if (!sizeRow) return;
    const index = sizes.indexOf(size);
    for (const step of sizeRow.querySelectorAll(".step")) {
      const larger = step.dataset.key === "+";
      const target = sizes[index + (larger ? 1 : -1)] || null;
      if (target && step.tagName === "A") {
        step.dataset.value = target;
        step.href = currentHref("size", target);
        continue;
      }
      const replacement = document.createElement(target ? "a" : "span");
      replacement.className = `chip step${larger ? " big" : ""}${target ? "" : " off"}`;
      replacement.dataset.key = step.dataset.key;
      replacement.textContent = step.textContent;
      if (target) {
        replacement.href = currentHref("size", target);
        replacement.dataset.pref = "size";
        replacement.dataset.value = target;
        replacement.setAttribute("aria-label", larger ? "Larger text" : "Smaller text");
      } else {
        replacement.setAttribute("aria-disabled", "true");
      }
      const focused = step === document.activeElement;
      step.replaceWith(replacement);
      if (focused) (sizeRow.querySelector("a.step") || replacement).focus();
    }
    const label = sizeRow.querySelector(".size-now");
    if (label && sizeLabels[index]) label.textContent = sizeLabels[index];
  };

  const cookieIs = (name, value) => document.cookie.split("; ").includes(`${name}=${value}`);
  // A reader view served by the proxy under the site's own origin says where preferences live
  // (data-prefs-at, http://readerproxy): a cookie written here would go to the site, so none is; the
  // choice is made there by a navigation, as a tap on its link does, and the page comes back with it.
  const prefsAt = root.dataset.prefsAt || "";
  // Behind --public-url with a path prefix (data-root="/reader"): the server's routes and its
  // cookies live under it.
  const base = root.dataset.root || "";

  const applyPreference = (key, value) => {
    if (!value || root.dataset[key] === value) return;
    const anchor = readingAnchor();
    root.dataset[key] = value;
    keepReadingAnchor(anchor);
    if (prefsAt) {
      const choice = new URL("/view", prefsAt);
      choice.searchParams.set("url", location.href.split("#")[0]);
      choice.searchParams.set(key, value);
      location.assign(choice.href);
      return;
    }
    const name = `rp_${key}`;
    document.cookie = `${name}=${value}; path=${base || "/"}; max-age=${maxAge}; samesite=lax`;
    if (panel) {
      // Every other preference link carries the new value, so following one later keeps it.
      for (const link of panel.querySelectorAll(`a[href^="${base}/read?"]`)) {
        if (link.dataset.pref === key) continue;
        const url = new URL(link.href);
        if (!url.searchParams.has(key)) continue;
        url.searchParams.set(key, value);
        link.href = url.pathname + url.search;
      }
      for (const link of panel.querySelectorAll(`a[data-pref="${key}"]:not(.step)`)) {
        markChoice(link, link.dataset.value === value);
      }
    }
    if (key === "size") updateSteps(value);
    const here = new URL(location.href);
    if (here.searchParams.has(key)) { // a reload must not bring the old value back
      here.searchParams.set(key, value);
      history.replaceState(history.state, "", here.href);
    }
    if (!cookieIs(name, value)) {
      // An older HttpOnly cookie the page cannot overwrite: the server sets the new ones.
      const href = currentHref(key, value);
      if (href) fetch(href, { credentials: "same-origin" }).catch(() => {});
    }
  };

  if (panel) {
    panel.addEventListener("click", (event) => {
      const link = event.target.closest("a[data-pref]");
      if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      applyPreference(link.dataset.pref, link.dataset.value);
    });
    const keys = panel.querySelector(".keys-row");
    if (keys) keys.hidden = false;
  }

  const stepSize = (by) => {
    const target = sizes[sizes.indexOf(root.dataset.size) + by];
    if (target) applyPreference("size", target);
  };
  const nextTheme = () => {
    const themes = [...document.querySelectorAll('a[data-pref="theme"]')].map((link) => link.dataset.value);
    if (themes.length) applyPreference("theme", themes[(themes.indexOf(root.dataset.theme) + 1) % themes.length]);
  };

  // ---- The toolbar: hidden while reading down, back on scrolling up; reading progress --------------
  const bar = document.querySelector(".topbar.toolbar");
  const progress = document.querySelector(".progress");
  let frame = 0;
  const setToolbarHidden = (hidden) => root.classList.toggle("toolbar-hidden", hidden);
  const onScroll = () => {
    frame = 0;
    const y = Math.max(0, scrollY);
    if (bar) {
      const delta = y - lastY;
      const busy = (details && details.open) || bar.querySelector(":focus-visible");
      if (y <= bar.offsetHeight || busy) {
        setToolbarHidden(false);
        lastY = y;
      } else if (Math.abs(delta) >= 8) { // small jitters (and momentum's last pixels) change nothing
        setToolbarHidden(delta > 0);
        lastY = y;
      }
    }
    if (progress) {
      const end = article.getBoundingClientRect().bottom + y - innerHeight;
      const share = end > 0 ? Math.min(1, y / end) : 1;
      progress.style.setProperty("--progress", share.toFixed(4));
    }
  };
  addEventListener("scroll", () => { if (!frame) frame = requestAnimationFrame(onScroll); }, { passive: true });
  addEventListener("resize", () => { if (!frame) frame = requestAnimationFrame(onScroll); }, { passive: true });
  // Late layout (an image arriving, a font) makes the browser move the page to keep what is on
  // screen in place (scroll anchoring): that move is not the reader's, so the toolbar ignores it.
  if (window.ResizeObserver) new ResizeObserver(() => { lastY = Math.max(0, scrollY); }).observe(article);
  if (bar) bar.addEventListener("focusin", () => setToolbarHidden(false));
  if (details) details.addEventListener("toggle", () => { if (details.open) setToolbarHidden(false); });
  if (progress) progress.hidden = false;
  onScroll();

  // ---- Reading list: a saved article (/list/ID) opens where its reader left it, and the position
  // is sent at most once per 2 s of scrolling (and when the page is left), for every device.
  const progressAt = article.dataset.progressAt;
  if (progressAt) {
    const extent = () => Math.max(0, root.scrollHeight - innerHeight);
    const savedShare = Number(article.dataset.progress) || 0;
    if (savedShare > 0 && savedShare < 1 && !location.hash) {
      const restore = () => {
        scrollTo({ top: Math.round(savedShare * extent()), behavior: "instant" });
        lastY = scrollY;
      };
      restore();
      // Pictures arriving later change the page's height: the position is held at its share
      // until the reader moves the page themselves.
      let holding = true;
      for (const type of ["wheel", "touchstart", "keydown", "pointerdown"]) {
        addEventListener(type, () => { holding = false; }, { once: true, passive: true });
      }
      if (window.ResizeObserver) new ResizeObserver(() => { if (holding) restore(); }).observe(article);
      addEventListener("load", () => { if (holding) restore(); });
    }
    let sentShare = savedShare;
    let progressTimer = 0;
    const sendProgress = () => {
      progressTimer = 0;
      const end = extent();
      const share = end > 0 ? Math.min(1, Math.max(0, scrollY / end)) : 1;
      if (Math.abs(share - sentShare) < 0.002) return;
      sentShare = share;
      fetch(progressAt, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ progress: Number(share.toFixed(4)) }),
        credentials: "same-origin",
        keepalive: true,
      }).catch(() => { sentShare = -1; }); // offline: sent again on the next scroll
    };
    addEventListener("scroll", () => { if (!progressTimer) progressTimer = setTimeout(sendProgress, 2000); }, { passive: true });
    addEventListener("pagehide", () => { if (progressTimer) { clearTimeout(progressTimer); sendProgress(); } });
  }

  // ---- Read aloud: the article only, one utterance per paragraph ------------------------------------
  const listen = document.getElementById("rp-listen");
  const player = document.getElementById("rp-player");
  const speech = window.speechSynthesis && typeof window.SpeechSynthesisUtterance === "function"
    ? window.speechSynthesis : null;
  // The text's blocks (captions and code are left out: read aloud, they interrupt the text).
  const SPOKEN = "p, li, h2, h3, h4, h5, h6, blockquote, dt, dd";
  const pageKey = `rp-listen:${new URL(location.href).searchParams.get("url") || location.href.split("#")[0]}`;
  const lang = (root.lang || "").toLowerCase();
  let blocks = null;
  let index = 0;
  let playing = false;
  let run = 0; // bumped on every start and stop, so events of an utterance cut short are ignored

  const textOf = (element) => (element.innerText || element.textContent || "").replace(/\s+/g, " ").trim();

  // Title, byline, then the text's blocks (the outermost of nested ones), without the chrome.
  const collect = () => {
    const found = [];
    const title = article.querySelector(".article-head h1");
    const byline = article.querySelector(".article-head .byline");
    for (const element of [title, byline]) if (element && textOf(element)) found.push(element);
    // every content block in order: a listing's or thread's introduction, its items, its guide
    for (const content of article.querySelectorAll(".content")) {
      for (const element of content.querySelectorAll(SPOKEN)) {
        if (element.parentElement.closest(SPOKEN) || element.closest("figure, pre") || !textOf(element)) continue;
        found.push(element);
      }
    }
    return found;
  };

  const controls = player && player.querySelector(".player-controls");
  const message = player && player.querySelector(".player-message");
  const playButton = player && player.querySelector('[data-action="play"]');
  const rateSelect = player && player.querySelector('[data-setting="rate"]');
  const voiceSelect = player && player.querySelector('[data-setting="voice"]');
  const say = (text) => { if (message) message.textContent = text; };

  const pageVoices = () => {
    const all = speech ? speech.getVoices() || [] : [];
    const language = lang.split(/[-_]/)[0];
    return language ? all.filter((voice) => (voice.lang || "").toLowerCase().split(/[-_]/)[0] === language) : all;
  };
  const fillVoices = () => {
    if (!voiceSelect) return;
    const wanted = voiceSelect.value || recall(localStorage, "rp-voice") || "";
    voiceSelect.replaceChildren(new Option("Default", ""));
    for (const voice of pageVoices()) {
      voiceSelect.append(new Option(`${voice.name} (${voice.lang})`, voice.voiceURI || voice.name));
    }
    voiceSelect.value = [...voiceSelect.options].some((option) => option.value === wanted) ? wanted : "";
  };
  const chosenVoice = () => {
    const wanted = voiceSelect ? voiceSelect.value : "";
    return wanted ? pageVoices().find((voice) => (voice.voiceURI || voice.name) === wanted) || null : null;
  };

  const highlight = (element) => {
    for (const old of article.querySelectorAll(".rp-speaking")) if (old !== element) old.classList.remove("rp-speaking");
    if (!element) return;
    element.classList.add("rp-speaking");
    const box = element.getBoundingClientRect();
    const top = bar && !root.classList.contains("toolbar-hidden") ? bar.getBoundingClientRect().bottom : 0;
    const bottom = innerHeight - (player && !player.hidden ? player.offsetHeight : 0);
    if (box.top < top || box.bottom > bottom) {
      element.scrollIntoView({ block: box.height > bottom - top ? "start" : "center", behavior: reducedMotion() ? "instant" : "smooth" });
    }
  };

  const setPlaying = (on) => {
    playing = on;
    if (playButton) {
      playButton.classList.toggle("playing", on);
      playButton.setAttribute("aria-label", on ? "Pause" : "Play");
    }
    if (listen) listen.setAttribute("aria-pressed", String(on));
  };
  const where = () => say(`Paragraph ${index + 1} of ${blocks.length}`);

  const speakAt = (target) => {
    if (!speech || !blocks || !blocks.length) return;
    index = Math.max(0, Math.min(blocks.length - 1, target));
    run += 1;
    const mine = run;
    speech.cancel();
    const element = blocks[index];
    highlight(element);
    store(sessionStorage, pageKey, index);
    where();
    const utterance = new SpeechSynthesisUtterance(textOf(element));
    utterance.lang = root.lang || "";
    utterance.rate = Number(rateSelect && rateSelect.value) || 1;
    const voice = chosenVoice();
    if (voice) utterance.voice = voice;
    utterance.addEventListener("end", () => {
      if (mine !== run) return;
      if (index + 1 < blocks.length) speakAt(index + 1);
      else finish();
    });
    utterance.addEventListener("error", (event) => {
      if (mine !== run || event.error === "interrupted" || event.error === "canceled") return;
      run += 1;
      setPlaying(false);
      say(`Reading aloud stopped: ${event.error || "speech error"}.`);
    });
    setPlaying(true);
    speech.speak(utterance);
  };
  const pause = () => {
    run += 1;
    if (speech) speech.cancel();
    setPlaying(false);
  };
  const finish = () => {
    run += 1;
    setPlaying(false);
    highlight(null);
    index = 0;
    store(sessionStorage, pageKey, null);
    say("End of the article.");
  };
  const move = (by) => {
    if (!blocks || !blocks.length) return;
    const target = Math.max(0, Math.min(blocks.length - 1, index + by));
    if (playing) speakAt(target);
    else {
      index = target;
      highlight(blocks[index]);
      store(sessionStorage, pageKey, index);
      where();
    }
  };

  const openPlayer = () => {
    if (!player) return;
    player.hidden = false;
    root.classList.add("listening");
    if (listen) listen.setAttribute("aria-expanded", "true");
  };
  const closePlayer = () => {
    pause();
    highlight(null);
    if (player) player.hidden = true;
    root.classList.remove("listening");
    if (listen) {
      listen.setAttribute("aria-expanded", "false");
      listen.focus();
    }
  };
  const toggleListening = () => {
    openPlayer();
    if (!speech) {
      if (controls) controls.hidden = true;
      say("This browser cannot read aloud: it has no speech synthesis (Web Speech API). "
        + "Your device's screen reader or another browser can read the page.");
      return;
    }
    if (playing) { pause(); return; }
    if (!blocks) {
      blocks = collect();
      const saved = Number(recall(sessionStorage, pageKey));
      index = Number.isInteger(saved) && saved > 0 && saved < blocks.length ? saved : 0;
    }
    if (!blocks.length) { say("There is no text to read aloud."); return; }
    speakAt(index);
  };

  if (listen && player) {
    listen.hidden = false;
    listen.addEventListener("click", toggleListening);
    player.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-action]");
      if (!button) return;
      const action = button.dataset.action;
      if (action === "play") toggleListening();
      else if (action === "previous") move(-1);
      else if (action === "next") move(1);
      else if (action === "close") closePlayer();
    });
    if (speech) {
      const rate = recall(localStorage, "rp-rate");
      if (rateSelect && rate && [...rateSelect.options].some((option) => option.value === rate)) rateSelect.value = rate;
      fillVoices();
      if (typeof speech.addEventListener === "function") speech.addEventListener("voiceschanged", fillVoices);
      for (const [select, key] of [[rateSelect, "rp-rate"], [voiceSelect, "rp-voice"]]) {
        if (!select) continue;
        select.addEventListener("change", () => {
          store(localStorage, key, select.value);
          if (playing) speakAt(index); // the current paragraph again, with the new setting
        });
      }
      addEventListener("pagehide", () => { if (playing) pause(); });
    }
  }

  // ---- Keys ------------------------------------------------------------------------------------
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && target.closest("input, select, textarea, [contenteditable]")) return;
    if (event.key === "+" || event.key === "=") stepSize(1);
    else if (event.key === "-") stepSize(-1);
    else if (event.key === "t") nextTheme();
    else if (event.key === "s" && listen) toggleListening();
    else if ((event.key === "n" || event.key === "p") && player && !player.hidden) move(event.key === "n" ? 1 : -1);
    else if (event.key === "Escape") {
      if (details && details.open) details.open = false;
      else if (player && !player.hidden) closePlayer();
    }
  });
})();
