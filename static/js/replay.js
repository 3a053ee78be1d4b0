// A transcript's replay (templates/participants/admin_transcript.html): the slider shows the game
// up to one turn; every row after it is hidden.
document.querySelectorAll("input[data-replay]").forEach((slider) => {
  const round = slider.dataset.replay;
  const rows = document.querySelectorAll(`#turns-${round} tr`);
  const at = document.getElementById(`replay-at-${round}`);
  slider.addEventListener("input", () => {
    const step = Number(slider.value);
    rows.forEach((row) => { row.hidden = Number(row.dataset.step) > step; });
    at.textContent = step;
  });
});
