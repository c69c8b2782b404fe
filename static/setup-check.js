// The setup page's check step over HTTPS (templates/setup.html): whether this device trusts
// readerproxy's CA. Only a device that does can load the check image at https://readerproxy/check
// (the proxy answers it inside TLS, with a certificate its CA signed); a page cannot ask the browser
// which authorities it trusts, so it tries. A fresh query each time: never an answer from a cache.
(() => {
  "use strict";
  const line = document.getElementById("https-check");
  if (!line || !line.dataset.src) return;
  const text = line.querySelector(".check-text");
  const mark = line.querySelector(".mark");
  let settled = false;
  const settle = (trusted) => {
    if (settled) return;
    settled = true;
    line.classList.remove("pending");
    line.classList.add(trusted ? "ok" : "no");
    line.dataset.state = trusted ? "trusted" : "untrusted";
    if (mark) mark.textContent = trusted ? "\u2713" : "\u2717";
    if (text) text.textContent = trusted ? line.dataset.trusted : line.dataset.untrusted;
  };
  const probe = new Image();
  probe.onload = () => settle(true);
  probe.onerror = () => settle(false);
  probe.src = line.dataset.src + "?t=" + Date.now();
  setTimeout(() => settle(false), 10000); // a proxy that never answers is no trust either
})();
