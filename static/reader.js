// readerproxy: optional keyboard shortcuts and read-aloud. The page works the same without it.
// Keys: + / - text size, t next theme, s read aloud / stop, Escape closes the preferences.
(() => {
  "use strict";
  const follow = (selector) => {
    const link = document.querySelector(selector);
    if (link && link.href) location.href = link.href;
  };
  const speech = "speechSynthesis" in window ? window.speechSynthesis : null;
  const button = document.getElementById("rp-speak");
  const content = document.querySelector(".reader");
  const toggleSpeech = () => {
    if (!speech || !content) return;
    if (speech.speaking) {
      speech.cancel();
      if (button) button.textContent = "Read aloud";
      return;
    }
    const utterance = new SpeechSynthesisUtterance(content.innerText);
    utterance.lang = document.documentElement.lang || "";
    utterance.onend = () => { if (button) button.textContent = "Read aloud"; };
    speech.speak(utterance);
    if (button) button.textContent = "Stop reading";
  };
  if (button && speech) {
    button.closest(".speak-row").hidden = false;
    button.addEventListener("click", toggleSpeech);
  }
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && target.closest("input, select, textarea, [contenteditable]")) return;
    if (event.key === "+" || event.key === "=") follow('a[data-key="+"]');
    else if (event.key === "-") follow('a[data-key="-"]');
    else if (event.key === "t") {
      const themes = [...document.querySelectorAll('[aria-label="Theme"] a')];
      const current = themes.findIndex((a) => a.getAttribute("aria-current") === "true");
      if (themes.length) location.href = themes[(current + 1) % themes.length].href;
    } else if (event.key === "s") toggleSpeech();
    else if (event.key === "Escape") document.querySelector(".prefs")?.removeAttribute("open");
  });
})();
