// seckill live: the browser side of `loadtest ui`.
// Builds the run form from /api/options, starts and stops runs, follows a run's
// Server-Sent Events into live charts, and lists past runs. No framework, no network
// besides the page's own server. Its helpers (h, s, num, api, ...) are in lib.js.
"use strict";

// ---------- page state ----------

let view = null;   // the run shown: {id, run, es, items: Map(name -> item), ended, statusText}
let liveId = null; // id of the run the server is running, when known
let defaults = {}; // /api/options' defaults
let shownRuns = ""; // the run list in the table, as JSON
const dirty = new Set(); // items whose chart needs redrawing on the next frame
let drawPending = false;

const setState = (st) => { document.body.dataset.state = st; };
const setStatus = (text) => { $("status").textContent = text; };
const showError = (text) => { $("form-error").textContent = text; };
const updateStop = () => { $("stop").disabled = !liveId; };

// ---------- the form ----------

// checkboxes fills box with one labelled checkbox per value (label: its text, when not v).
function checkboxes(box, name, values, checked, label = (v) => v) {
  box.replaceChildren(...values.map((v) => h("label", { class: "check" },
    h("input", { type: "checkbox", name, value: v, checked: checked.includes(v) }), " " + label(v))));
}

function buildForm(o) {
  const d = (defaults = o.defaults || {}), lim = o.limits || {};
  checkboxes($("strategy-list"), "strategy", o.strategies || [], d.strategies || []);
  checkboxes($("lock-list"), "lock", o.locks || [], d.locks || []);
  $("scenario").replaceChildren(...(o.scenarios || []).map((sc) =>
    h("option", { value: sc.name, title: sc.about || false }, `${sc.name} (${sc.fault || "no fault"})`)));
  if (d.scenario) $("scenario").value = d.scenario;
  $("scenario").scenarios = o.scenarios || [];
  for (const [id, key] of [["stock", "stock"], ["think-ms", "think_ms"], ["buyers", "buyers"], ["duration", "duration_s"], ["rate", "rate"]]) {
    if (has(d[key])) $(id).value = d[key];
    if (has(lim[key + "_max"])) $(id).max = lim[key + "_max"];
  }
  // The targets are fixed when loadtest ui starts: a run picks among them, by name.
  const names = (ts) => (ts || []).map((t) => t.name), urls = new Map();
  for (const t of [...(o.targets || []), ...(o.etcd_targets || [])]) urls.set(t.name, t.url);
  checkboxes($("target-list"), "target", names(o.targets), names(o.targets), (n) => urls.get(n));
  checkboxes($("etcd-target-list"), "etcd-target", names(o.etcd_targets), names(o.etcd_targets), (n) => urls.get(n));
  $("etcd-target-fields").hidden = !(o.etcd_targets || []).length;
  showAbout();
  showKind();
  $("run").disabled = false;
}

// showKind shows the fieldset of the chosen kind; the other is hidden and disabled
// (a disabled fieldset is left out of the browser's validation).
function showKind() {
  const kind = $("run-form").elements.kind.value;
  for (const [id, k] of [["strategies-fields", "strategies"], ["lab-fields", "lab"]]) {
    $(id).hidden = $(id).disabled = kind !== k;
  }
}

// The strategies an abandonment sale leaves out; showSale shows its fields.
const NO_WINDOW = ["naive"];
function showSale() {
  const on = $("sale").value === "abandon", opening = $("sale").value === "opening";
  $("abandon-fields").hidden = $("abandon-about").hidden = !on;
  $("opening-fields").hidden = $("opening-about").hidden = !opening;
}

function showAbout() {
  const sc = ($("scenario").scenarios || []).find((x) => x.name === $("scenario").value);
  $("scenario-about").textContent = sc ? sc.about || "" : "";
}

// submit starts a run from the form (Enter in any field submits too).
async function submit(ev) {
  ev.preventDefault();
  showError("");
  const f = $("run-form"), kind = f.elements.kind.value;
  // Checked values; those in the defaults come first, in the defaults' order (naive before dlock).
  const picked = (name, first = []) => [...f.querySelectorAll(`input[name=${name}]:checked`)].map((i) => i.value)
    .sort((a, b) => rank(first, a) - rank(first, b));
  let body;
  if (kind === "lab") {
    body = { kind, locks: picked("lock", defaults.locks), scenario: $("scenario").value };
    if (!body.locks.length) return showError("Pick at least one lock.");
  } else {
    body = { kind, strategies: picked("strategy", defaults.strategies), stock: Number($("stock").value),
      think_ms: Number($("think-ms").value), buyers: Number($("buyers").value),
      duration_s: Number($("duration").value), rate: Number($("rate").value),
      targets: picked("target"), etcd_targets: picked("etcd-target") };
    if ($("sale").value === "abandon") {
      // An abandonment sale (loadtest -pay-within): naive takes no window.
      body.strategies = body.strategies.filter((x) => !NO_WINDOW.includes(x));
      Object.assign(body, { pay_within_ms: Number($("pay-within").value), pay_ratio: Number($("pay-ratio").value) / 100,
        cancel_ratio: Number($("cancel-ratio").value) / 100, pay_delay_ms: Number($("pay-delay").value) });
    }
    if ($("sale").value === "opening") {
      body.opening = { in_ms: Number($("opening-in").value), burst: Number($("burst").value),
        window_ms: Number($("burst-window").value), early_share: Number($("early-share").value) / 100 };
    }
    if (!body.strategies.length) return showError("Pick at least one strategy.");
    if (!body.targets.length) return showError("Pick at least one target.");
  }
  setStatus("Starting…");
  try {
    const run = await api("POST", "/api/runs", body);
    liveId = run.id;
    attach(run);
    refreshRuns();
  } catch (e) {
    const busy = e.status === 409; // a run is going: say so, and follow it
    setStatus(busy ? "Refused: a run is going" : e.status === 400 ? "Refused: check the form" : "Could not start the run");
    showError(busy ? `${e.message} (watching it below)` : e.message);
    if (busy) refreshRuns(true);
  }
}

async function stop() {
  if (!liveId) return;
  $("stop").disabled = true;
  setStatus("Stopping…");
  try { await api("POST", `/api/runs/${encodeURIComponent(liveId)}/stop`); }
  catch (e) { showError(`Could not stop: ${e.message}`); refreshRuns(); }
}

// ---------- following a run ----------

// attach clears the live area and follows (or replays) one run's events.
function attach(run) {
  if (view && view.es) view.es.close();
  dirty.clear();
  $("items").replaceChildren();
  view = { id: run.id, run, es: null, items: new Map(), ended: null, statusText: "" };
  showRun(run);
  setOverall(null);
  showDownloads({});
  setState("running");
  view.statusText = run.status === "running" ? `Run ${run.id} started…` : `Replaying run ${run.id}…`;
  setStatus(view.statusText);
  markOpenRow();
  const es = new EventSource(`/api/runs/${encodeURIComponent(run.id)}/events`);
  view.es = es;
  const mine = () => view && view.es === es; // false for a stale stream of a run no longer shown
  const handlers = { run: onRun, item: onItem, sample: onSample, verdict: onVerdict, end: onEnd };
  for (const [type, fn] of Object.entries(handlers)) {
    es.addEventListener(type, (ev) => {
      let data;
      try { data = JSON.parse(ev.data); } catch { return; }
      if (mine()) fn(data);
    });
  }
  // EventSource reconnects by itself (sending Last-Event-ID); just say so meanwhile.
  es.onopen = () => { if (mine()) setStatus(view.statusText); };
  es.onerror = () => {
    if (mine()) setStatus(es.readyState === EventSource.CLOSED
      ? "Lost the event stream; reopen the run from the list below." : "Connection lost; reconnecting…");
  };
}

// showRun shows a run's command, and turns the form to its kind (a reopened lab run shows
// the lab's fields).
function showRun(run) {
  $("command").textContent = run.command || "";
  $("command-line").hidden = !run.command;
  const radio = document.querySelector(`input[name="kind"][value="${run.kind}"]`);
  if (radio && !radio.checked) { radio.checked = true; showKind(); }
}

function onRun(run) {
  view.run = run;
  showRun(run);
  if (run.status === "running") liveId = run.id;
  updateStop();
}

function onItem(info) {
  let it = view.items.get(info.name);
  if (!it) { it = makeItem(info); view.items.set(info.name, it); $("items").append(it.el); }
  it.info = info;
  const n = view.items.size, total = Math.max(n, (view.run.items || []).length);
  view.statusText = `${view.run.status === "running" ? "Running" : "Replaying"} ${info.name} (${n} of ${total})…`;
  setStatus(view.statusText);
  markDirty(it);
}

function onSample(p) {
  if (!view.items.has(p.name)) onItem({ name: p.name }); // no item event seen: make its card
  const it = view.items.get(p.name);
  it.points.push(p);
  markDirty(it);
}

function onVerdict(v) {
  const it = view.items.get(v.name);
  if (it) { it.verdict = v; renderVerdict(it); markDirty(it); }
  if (it && v.timeline) SeckillTimeline.append(it.details, v.timeline, v.name, it.el); // timeline.js
}

// onEnd closes the stream (EventSource would reconnect otherwise) and shows the outcome.
function onEnd(d) {
  view.es.close();
  view.ended = d;
  flush();
  showError("");
  const failed = [...view.items.values()].filter((i) => i.verdict && !i.verdict.ok).length;
  const lab = view.run.kind === "lab", noun = lab ? "cell" : "item";
  const secs = has(d.seconds) ? ` in ${num(d.seconds)} s` : "";
  setStatus({ passed: `Done: every audit passed${secs}`, failed: `Done: ${plural(failed, noun)} failed the audit${secs}`,
    stopped: `Stopped${secs}` }[d.status] || `Error: ${d.error || "the run failed"}`);
  setOverall(!!d.ok, d.ok ? "PASS: every audit passed"
    : failed ? `FAIL: ${plural(failed, noun)} ` + (lab ? "did not come out as expected"
      : failed === 1 ? "did not keep its promise" : "did not keep their promise")
    : d.status === "stopped" ? "FAIL: the run was stopped before it finished"
    : `FAIL: ${d.error || d.status || "the run did not pass"}`);
  showDownloads(d.files || {}); // the reports the run wrote (none when it could not run)
  setState("done");
  if (liveId === view.id) liveId = null;
  updateStop();
  refreshRuns();
}

function setOverall(ok, text) {
  const el = $("verdict");
  if (ok === null) { el.replaceChildren(); delete el.dataset.ok; return; }
  el.dataset.ok = String(ok);
  el.replaceChildren(h("span", { class: "glyph", "aria-hidden": "true" }, ok ? "✔" : "✘"), " " + text);
}

function showDownloads(files) {
  for (const kind of ["json", "html"]) {
    $(`download-${kind}`).hidden = !files[kind];
    if (files[kind]) $(`download-${kind}`).href = files[kind];
  }
  $("downloads").hidden = !files.json && !files.html;
}

// ---------- past runs ----------

const STATUS = { running: "● running", passed: "✔ passed", failed: "✘ failed", stopped: "■ stopped", error: "✘ error" };

function runRow(r) {
  const done = r.status !== "running", files = done && r.status !== "error", base = `/api/runs/${encodeURIComponent(r.id)}`;
  const open = h("button", { type: "button", class: "open", "aria-label": `Open run ${r.id}` }, "Open");
  open.addEventListener("click", () => { attach(r); $("run-panel").scrollIntoView({ block: "start" }); });
  const started = new Date(r.started);
  return h("tr", { "data-id": r.id },
    h("td", {}, h("time", { datetime: r.started || false }, isNaN(started) ? r.started || "" : started.toLocaleString())),
    h("td", {}, r.kind === "lab" ? "lab" : "strategies"),
    h("td", {}, (r.items || []).map((i) => i.name).join(", ")),
    h("td", { class: `st-${r.status}`, title: r.error || false }, STATUS[r.status] || r.status || ""),
    h("td", { class: "num" }, done && has(r.seconds) ? `${num(r.seconds)} s` : "–"),
    h("td", { class: "actions" }, open, ...(files ? [
      h("a", { href: `${base}/report.json`, download: true, "aria-label": `JSON report of ${r.id}` }, "JSON"),
      h("a", { href: `${base}/report.html`, download: true, "aria-label": `HTML report of ${r.id}` }, "HTML")] : [])));
}

// refreshRuns reloads the table; with attachLive it also follows a running run.
async function refreshRuns(attachLive = false) {
  let runs;
  try { runs = (await api("GET", "/api/runs")).runs || []; }
  catch (e) { showError(`Could not list the runs: ${e.message}`); return; }
  const body = $("runs").tBodies[0], json = JSON.stringify(runs);
  if (json !== shownRuns) { // re-render only on change, so a focused Open button keeps its focus
    shownRuns = json;
    body.replaceChildren(...runs.map(runRow));
    if (!runs.length) body.append(h("tr", {}, h("td", { colspan: 6 }, "No runs yet.")));
  }
  const live = runs.find((r) => r.status === "running");
  liveId = live ? live.id : null;
  updateStop();
  if (attachLive && live && (!view || view.id !== live.id)) attach(live);
  markOpenRow();
}

// markOpenRow highlights the row of the run shown above.
function markOpenRow() {
  for (const tr of $("runs").tBodies[0].rows) tr.setAttribute("aria-current", String(!!view && tr.dataset.id === view.id));
}

// ---------- start ----------

async function init() {
  const f = $("run-form");
  f.addEventListener("submit", submit);
  for (const r of f.elements.kind) r.addEventListener("change", showKind);
  $("scenario").addEventListener("change", showAbout);
  $("sale").addEventListener("change", showSale);
  $("stop").addEventListener("click", stop);
  try {
    buildForm(await api("GET", "/api/options"));
    setStatus("Idle: pick what to run and press Run.");
  } catch (e) {
    setStatus("Could not load the options.");
    showError(`Could not load the options: ${e.message}`);
  }
  await refreshRuns(true);
  if (!view) setState("idle"); // ready: the form is built and no run is going
  // Unless following a live run, poll the list: it keeps Stop current, and an idle page
  // follows a run started elsewhere (say from the teacher's laptop).
  setInterval(() => { if (!view || view.ended || view.id !== liveId) refreshRuns(!view); }, 3000);
}

init();
