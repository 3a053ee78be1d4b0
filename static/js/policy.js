// The policy page's character count (templates/participants/policy.html), counted as the server
// counts: the browser sends each line break as two characters (CR LF). Its words come from the
// count's data attributes, translated by the template.
(() => {
  const count = document.getElementById("policy-count");
  const box = count && document.getElementById(count.dataset.box);
  if (!box) return;
  const limit = Number(count.dataset.limit);
  const show = () => {
    const n = [...box.value.replace(/\r?\n/g, "\r\n")].length;
    const over = n - limit;
    count.textContent = count.dataset.counted.replace("N", n).replace("LIMIT", limit) +
      (over > 0 ? count.dataset.tooMany.replace("OVER", over) : "");
    count.classList.toggle("error", over > 0);
  };
  box.addEventListener("input", show);
  show();
})();
