// An answer page's heartbeat: a person writing a long answer is not idle. While the page is
// visible and the person has done something on it lately (typed, clicked, scrolled), it tells
// the server every data-alive-seconds seconds that they are here (a small POST, no answer read),
// so the study's idle limit counts from the last sign of life instead of from the page's load.
// A page left visible with nobody at it stops beating after data-alive-quiet seconds of no use.
(() => {
  const script = document.currentScript;
  const url = script.dataset.aliveUrl;
  const every = Number(script.dataset.aliveSeconds || 25) * 1000;
  const quiet = Number(script.dataset.aliveQuiet || 900) * 1000;
  let used = Date.now();
  let sent = Date.now();
  const token = () => {
    const field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  };
  const beat = () => {
    if (document.visibilityState !== "visible" || Date.now() - used > quiet) return;
    sent = Date.now();
    fetch(url, {
      method: "POST",
      headers: { "X-CSRFToken": token() },
      credentials: "same-origin",
      keepalive: true,
    }).catch(() => {}); // a missed beat is made up by the next one
  };
  const use = () => {
    used = Date.now();
    if (used - sent > every) beat(); // back after a pause: say so at once
  };
  for (const kind of ["input", "keydown", "pointerdown", "scroll", "focusin"]) {
    document.addEventListener(kind, use, { passive: true, capture: true });
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") use();
  });
  setInterval(beat, every);
})();
