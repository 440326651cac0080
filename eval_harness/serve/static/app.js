// orchestrate serve: live reload when the runs change, and verdict labelling.
// Served from this origin only (CSP: script-src 'self'); no inline scripts anywhere.
"use strict";

(function () {
  const body = document.body;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;

  // Reload when the eval's change token moves (a running matrix shows up live).
  const tokenUrl = body.dataset.tokenUrl;
  let token = body.dataset.token;
  let busy = false;
  async function poll() {
    if (busy || !tokenUrl) return;
    try {
      const res = await fetch(tokenUrl, { cache: "no-store" });
      if (!res.ok) return;
      const now = (await res.json()).token;
      if (token && now !== token) { location.reload(); }
      token = token || now;
      if (document.getElementById("pending") || document.getElementById("stale")) {
        // the analysis may be ready without the runs changing: reload to pick it up
        setTimeout(() => location.reload(), 1500);
      }
    } catch (e) { /* server stopped: keep the page as it is */ }
  }
  setInterval(poll, 2000);
  if (document.getElementById("pending") || document.getElementById("stale")) poll();

  async function sendLabel(cell, label, state) {
    busy = true;
    state.textContent = "saving…";
    try {
      const res = await fetch(location.pathname.replace(/\/case\/.*$/, "/labels"), {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ run: cell.dataset.run, case: cell.dataset.case,
                               judge: cell.dataset.judge, label: label,
                               who: who ? who.value : "" }),
      });
      const out = await res.json();
      if (!res.ok) { state.textContent = out.error || "not saved"; busy = false; return; }
      state.textContent = "labelled " + label;
      location.reload();
    } catch (e) {
      state.textContent = "not saved (server unreachable)";
      busy = false;
    }
  }

  // who labels: remembered in this browser only
  const who = document.getElementById("who");
  if (who) {
    try { who.value = localStorage.getItem("eh-who") || ""; } catch (e) { /* storage off */ }
    who.addEventListener("change", () => {
      try { localStorage.setItem("eh-who", who.value); } catch (e) { /* storage off */ }
    });
  }

  document.querySelectorAll("td.labelling").forEach((cell) => {
    const state = cell.querySelector(".label-state");
    cell.querySelectorAll(".label-btn").forEach((btn) => {
      btn.addEventListener("click", () => sendLabel(cell, btn.dataset.label, state));
    });
    const score = cell.querySelector(".score-btn");
    if (score) {
      score.addEventListener("click", () => {
        const v = parseFloat(cell.querySelector(".true-score").value);
        if (Number.isFinite(v)) sendLabel(cell, v, state);
        else state.textContent = "enter a number";
      });
    }
  });
})();
