/* Counts down the lobby's wait limit. The server renders the seconds left into every board it
   sends (data-seconds-left); this script only ticks it down between boards, measured from when
   each element appeared, so the browser's clock does not need to agree with the server's.
   Without JavaScript the number shown is the one the server rendered. */
(function () {
  var ends = new WeakMap();

  function tick() {
    document.querySelectorAll('.countdown[data-seconds-left]').forEach(function (el) {
      if (!ends.has(el)) {
        ends.set(el, Date.now() + Number(el.dataset.secondsLeft) * 1000);
      }
      var left = Math.max(0, Math.round((ends.get(el) - Date.now()) / 1000));
      var minutes = Math.floor(left / 60);
      var seconds = left % 60;
      el.textContent = minutes ? minutes + ' min ' + seconds + ' s' : seconds + ' s';
    });
  }

  setInterval(tick, 1000);
  document.addEventListener('DOMContentLoaded', tick);
})();

/* Notices the server renders hidden with data-show-after (the slow-agent notice): shown that many
   seconds after they appeared, unless a newer board replaced them first. */
(function () {
  var shown = new WeakMap();

  function reveal() {
    document.querySelectorAll('[data-show-after][hidden]').forEach(function (el) {
      if (!shown.has(el)) {
        shown.set(el, Date.now() + Number(el.dataset.showAfter) * 1000);
      }
      if (Date.now() >= shown.get(el)) {
        el.hidden = false;
      }
    });
  }

  setInterval(reveal, 500);
  document.addEventListener('DOMContentLoaded', reveal);
})();
