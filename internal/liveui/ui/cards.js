// seckill live: the item cards of the page (loaded before app.js, whose helpers h, s, set,
// has, num, unit and plural they use when called): a card per strategy or lab cell, its
// chart of orders and stock against the initial stock, its figures and its verdict.
"use strict";
// Chart viewBox and the plot's margins (left: y ticks, right: direct line labels).
const W = 540, H = 300, PL = 58, PR = 112, PT = 36, PB = 34;

function makeItem(info) {
  const svg = set(document.createElementNS(NS, "svg"), { class: "chart", viewBox: `0 0 ${W} ${H}`,
    "data-points": "0", role: "img", "aria-label": `Orders and stock of ${info.name} over time` });
  const it = { info, points: [], verdict: null, svg };
  it.axes = s("g", { class: "axes" }, svg);
  it.initial = s("line", { class: "initial" }, svg);
  it.stock = s("path", { class: "stock", d: "" }, svg);
  it.orders = s("path", { class: "orders", d: "" }, svg);
  it.paid = s("path", { class: "paid", d: "" }, svg); // an abandonment sale's paid units
  it.labels = s("g", { class: "labels" }, svg);
  // Legend: a sample of each line's colour and dash pattern.
  const lg = s("g", { class: "legend" }, svg);
  [["orders", "orders"], ["stock", "stock"], ["initial", "initial stock"]].forEach(([cls, text], i) => {
    const x = PL + i * 120;
    s("line", { class: cls, x1: x, x2: x + 28, y1: 14, y2: 14 }, lg);
    s("text", { x: x + 34, y: 18 }, lg).textContent = text;
  });
  it.promise = h("p", { class: "promise" });
  it.note = h("p", { class: "oversold-note", hidden: true });
  it.sampleHead = h("p", { class: "figures-head" });
  it.figures = h("dl", { class: "figures" });
  it.verdictEl = h("p", { class: "verdict" });
  it.details = h("div", { class: "verdict-details" });
  it.el = h("section", { class: "item", "data-name": info.name },
    h("h3", {}, info.name), it.promise, svg, it.note, it.sampleHead, it.figures, it.verdictEl, it.details);
  return it;
}

// markDirty queues an item's redraw for the next animation frame (one redraw per frame,
// however many events came). Hidden tabs get no frames, so they fall back to a timer.
function markDirty(it) {
  dirty.add(it);
  if (drawPending) return;
  drawPending = true; // one frame request however many items are dirty
  if (document.hidden) setTimeout(flush, 250);
  else requestAnimationFrame(flush);
}

function flush() {
  drawPending = false;
  for (const it of dirty) draw(it);
  dirty.clear();
}

// niceStep picks a round tick step (1, 2 or 5 times a power of ten) for about n ticks.
function niceStep(max, n = 5) {
  const raw = max / n, mag = 10 ** Math.floor(Math.log10(raw)), f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

// linePath turns the points' key into an SVG path, breaking it where the value is
// unknown, and thinning very long runs to about 1000 points. With step, each value is held
// until the next point (an opening's: a line sloping across T0 would show a sale before it).
function linePath(pts, key, x, y, step = false) {
  const stride = Math.ceil(pts.length / 1000);
  let d = "", pen = false;
  pts.forEach((p, i) => {
    if (i % stride && i !== pts.length - 1) return;
    if (!has(p[key])) { pen = false; return; }
    if (pen && step) d += `H${x(p.ms).toFixed(1)} `;
    d += `${pen ? "L" : "M"}${x(p.ms).toFixed(1)} ${y(p[key]).toFixed(1)} `;
    pen = true;
  });
  return d.trim();
}

// draw redraws one item's chart, figures and oversold mark from its points.
function draw(it) {
  const init = it.info.initial_stock, last = it.points[it.points.length - 1];
  // The sale begins (ms 0) with no orders and the whole stock.
  const pts = has(init) ? [{ ms: 0, orders: 0, stock: init }, ...it.points] : it.points;
  const tmax = Math.max(1000, last ? last.ms : 0, openingT0(it) || 0); // an opening's T0 in view (opening.js)
  let top = Math.max(1, has(init) ? init * 1.2 : 0);
  for (const p of pts) top = Math.max(top, p.orders || 0, p.stock || 0);
  const ystep = niceStep(top), ymax = Math.ceil(top / ystep - 1e-9) * ystep;
  const x = (ms) => PL + ((W - PL - PR) * ms) / tmax;
  const y = (v) => H - PB - ((H - PT - PB) * v) / ymax;

  // Axes, grid lines and tick labels with their units.
  const g = it.axes;
  g.replaceChildren();
  for (let i = 0; i * ystep <= ymax + 1e-9; i++) {
    const v = i * ystep, t = s("g", { class: "tick" }, g);
    s("line", { class: "grid", x1: PL, x2: W - PR, y1: y(v), y2: y(v) }, t);
    s("text", { x: PL - 6, y: y(v) + 4, "text-anchor": "end" }, t).textContent = cf.format(v);
  }
  const xstep = niceStep(tmax / 1000);
  for (let i = 0; i * xstep <= tmax / 1000 + 1e-9; i++) {
    const sec = i * xstep, t = s("g", { class: "tick" }, g);
    s("line", { class: "axis", x1: x(sec * 1000), x2: x(sec * 1000), y1: H - PB, y2: H - PB + 5 }, t);
    s("text", { x: x(sec * 1000), y: H - PB + 19, "text-anchor": "middle" }, t).textContent = `${num(sec)} s`;
  }
  s("line", { class: "axis", x1: PL, x2: W - PR, y1: H - PB, y2: H - PB }, g);
  s("line", { class: "axis", x1: PL, x2: PL, y1: PT - 6, y2: H - PB }, g);
  s("text", { x: PL - 6, y: PT - 12, "text-anchor": "end" }, g).textContent = "units";
  drawOpening(it, g, x, tmax); // an opening's T0 and answers (opening.js)

  // The three lines.
  const hasInit = has(init);
  set(it.initial, hasInit ? { visibility: "visible", x1: PL, x2: W - PR, y1: y(init), y2: y(init) } : { visibility: "hidden" });
  const step = openingT0(it) !== null; // opening.js
  it.orders.setAttribute("d", linePath(pts, "orders", x, y, step));
  it.stock.setAttribute("d", linePath(pts, "stock", x, y, step));
  // An abandonment sale: paid units, from the API's audit (reservation figures).
  it.paid.setAttribute("d", linePath(pts.map((p) => ({ ms: p.ms, paid: p.reservations ? p.reservations.paid : undefined })), "paid", x, y));

  // Direct labels at the line ends, pushed apart so they never overlap.
  const labels = [];
  if (last && has(last.orders)) labels.push(["orders", `orders ${cf.format(last.orders)}`, y(last.orders)]);
  const lastStock = [...pts].reverse().find((p) => has(p.stock));
  if (lastStock) labels.push(["stock", `stock ${cf.format(lastStock.stock)}`, y(lastStock.stock)]);
  if (hasInit) labels.push(["initial", `initial ${cf.format(init)}`, y(init)]);
  if (last && last.reservations) labels.push(["paid", `paid ${cf.format(last.reservations.paid)}`, y(last.reservations.paid)]);
  labels.sort((a, b) => a[2] - b[2]);
  for (let i = 1; i < labels.length; i++) labels[i][2] = Math.max(labels[i][2], labels[i - 1][2] + 16);
  const over = labels.length ? labels[labels.length - 1][2] - (H - PB) : 0;
  if (over > 0) labels.forEach((l) => { l[2] -= over; });
  it.labels.replaceChildren();
  for (const [cls, text, ly] of labels) {
    s("text", { class: `lbl lbl-${cls}`, x: W - PR + 6, y: ly + 4 }, it.labels).textContent = text;
  }

  it.svg.setAttribute("data-points", String(it.points.length));
  it.promise.textContent = promiseText(it.info);
  updateFigures(it, last);
  updateOversold(it, last);
}

function promiseText(info) {
  const stock = has(info.initial_stock) ? `initial stock ${unit(info.initial_stock, "units")}` : "";
  const promise = info.expected ? `lab cell, expected: ${info.expected}`
    : info.safe === true ? "promises not to oversell"
    : info.safe === false ? "makes no promise: may oversell" : "";
  return [promise, stock].filter(Boolean).join(" · ");
}

// Figures of a sample: [field, label, unit]; the label says what it counts (a lab cell's
// orders and stock are read from PostgreSQL, a strategy's are the load tester's 201 answers
// and the API's stock field). Lock figures: [field, label, unit suffix].
const isLab = (info) => has(info.expected);
const sampleFigures = (lab) => [["orders", lab ? "orders (in PostgreSQL)" : "sold (201s received)", "orders"],
  ["stock", lab ? "stock column (PostgreSQL)" : "stock field (API)", "units"],
  ["orders_per_sec", "pace", "orders/s"], ["answers_per_sec", "answers (last 0.25 s)", "answers/s"],
  ["p50_ms", "p50 (last 0.25 s)", "ms"], ["p99_ms", "p99 (last 0.25 s)", "ms"], ["requests", "sent", "requests"]];
const LOCK_FIGURES = [["wait_ms_mean", "lock wait", " ms (mean)"], ["contended", "contended", ""],
  ["renewals", "renewals", ""], ["lost", "lost", ""], ["batch_mean", "batch", " buyers"]];
const secs = (ms) => ms > 0 && ms < 1000 ? `${num(ms)} ms` : `${num(ms / 1000)} s`; // an opening sells out in ms

// updateFigures shows the latest sample's figures, each with its unit, under a heading that
// says they are a live sample, and, once the verdict is in, that the audit supersedes them.
// Fields the sample lacks (lab cells, no lock metrics) are left out.
function updateFigures(it, p) {
  if (!p) return;
  const f = [];
  for (const [key, label, u] of sampleFigures(isLab(it.info))) {
    if (!(key in p)) continue;
    let v = key === "stock" && !has(p.stock) ? "unknown" : unit(p[key], u);
    if (key === "orders_per_sec") v += has(p.pace_window_ms) ? ` over ${secs(p.pace_window_ms)} selling` : " (no order yet)";
    f.push([label, v]);
  }
  if (p.outcomes) {
    const o = Object.entries(p.outcomes).map(([k, v]) => `${num(v)} ${k.replace(/_/g, " ")}`);
    f.push(["outcomes", o.join(", "), "wide"]);
  }
  if (p.reservations) f.push(...reservationFigures(p.reservations));
  for (const [key, label, u] of LOCK_FIGURES) {
    if (p.lock && has(p.lock[key])) f.push([label, `${num(p.lock[key])}${u}`]);
  }
  it.figures.replaceChildren(...f.map(([k, v, cls]) =>
    h("div", { class: cls || false }, h("dt", {}, k), " ", h("dd", {}, v))));
  const final = !!it.verdict;
  it.el.classList.toggle("audited", final);
  it.sampleHead.textContent = `Live sample at ${secs(p.ms)} (polled during the run)` +
    (final ? ": superseded by the final audit below" : "");
}

// reservationFigures are an abandonment sale's figures: what the load tester was answered
// (reserved, resold, cancelled) and what the API's audit said at its last reading (paid,
// expired, pending), cumulative since the sale began.
function reservationFigures(r) {
  return [["reserved (201s received)", unit(r.reserved, "units")], ["resold (reserved beyond the stock)", unit(r.resold, "units")],
    ["paid (API audit)", unit(r.paid, "units")], ["expired (API audit)", unit(r.expired, "units")],
    ["cancelled (200s received)", unit(r.cancelled, "units")], ["pending (API audit)", unit(r.pending, "units")]];
}

// updateOversold marks the card when orders ran past the initial stock; the audit's
// figure wins over the samples' once the verdict is in.
function updateOversold(it, last) {
  const v = it.verdict, init = it.info.initial_stock;
  let over = 0;
  if (v && has(v.oversold)) over = v.oversold;
  // An abandonment sale's 201s count units sold again: its live orders are paid and pending.
  else if (has(init) && last && last.reservations) over = last.reservations.paid + last.reservations.pending - init;
  else if (has(init)) over = ((v && has(v.orders)) ? v.orders : last ? last.orders || 0 : 0) - init;
  it.el.classList.toggle("oversold", over > 0);
  it.note.hidden = !(over > 0);
  it.note.replaceChildren(...(over > 0 ? [h("span", { class: "glyph", "aria-hidden": "true" }, "⚠"),
    ` oversold by ${plural(over, "unit")} (${v ? "final audit" : "live sample"})`] : []));
}

// renderVerdict shows the audit's verdict: PASS/FAIL word and glyph, then details.
function renderVerdict(it) {
  const v = it.verdict, word = v.ok ? "PASS" : "FAIL", label = v.label || word;
  it.verdictEl.dataset.ok = String(!!v.ok);
  it.verdictEl.replaceChildren(h("span", { class: "glyph", "aria-hidden": "true" }, v.ok ? "✔" : "✘"),
    " " + (/^(PASS|FAIL)\b/.test(label) ? label : `${word}: ${label}`));
  const fact = (list) => list.filter(([k]) => has(v[k]) && v[k] >= 0) // a stock of -1 is unknown
    .map(([k, pre, u]) => pre + unit(v[k], u)).join(" · ");
  const audit = fact([["orders", "", "orders"], ["stock", "stock ", "units"], ["oversold", "oversold ", "units"],
    ["duplicates", "", "duplicate orders"]]);
  const run = fact([["orders_per_sec", "pace ", "orders/s"], ["p50_ms", "p50 ", "ms"], ["p99_ms", "p99 ", "ms"]]);
  const kids = [];
  if (audit) kids.push(h("p", { class: "audit" }, "Final audit (PostgreSQL, after the drain): " + audit));
  if (run) kids.push(h("p", {}, "Final figures of the run: " + run + " (pace: from the start of the sale to its last order)"));
  const r = v.reservations;
  if (r) {
    kids.push(h("p", { class: "reservations" }, `Reservations settled (${r.source === "database" ? "PostgreSQL" : "the API's audit"}): ` +
      `stock ${num(r.stock)} + pending ${num(r.pending)} + paid ${num(r.paid)} = ${num(r.stock + r.pending + r.paid)} of ${unit(r.initial_stock, "units")}` +
      ` · ended ${num(r.ended)} · resold ${unit(r.resold, "units")} · stopped: ${(v.stop_reason || "").replace(/_/g, " ")}`));
  }
  kids.push(...openingFacts(v.opening)); // opening.js
  const why = supersededWhy(it);
  if (why) kids.push(h("p", { class: "why" }, "Why the live sample differs: " + why));
  if (v.fault) kids.push(h("p", {}, "Fault: " + v.fault));
  if (v.problems && v.problems.length) kids.push(h("ul", {}, ...v.problems.map((p) => h("li", {}, p))));
  it.details.replaceChildren(...kids);
}

// supersededWhy says in a line why the last live sample and the final audit disagree, or ""
// when they agree: the sample was taken before the last answers or writes were in, and, where
// the sale oversold, the stock column is a lost-update counter (each buyer writes back stock =
// read − 1), so initial − stock understates the orders.
function supersededWhy(it) {
  const v = it.verdict, p = it.points[it.points.length - 1], init = it.info.initial_stock, out = [];
  if (p && p.reservations && has(v.orders) && p.orders !== v.orders) {
    out.push(`it counted every reservation answered 201 (${num(p.orders)}), units sold again after a reservation ended included; the audit counts the live orders, paid or pending (${num(v.orders)}).`);
  } else if (p && has(v.orders) && p.orders !== v.orders) {
    out.push(isLab(it.info)
      ? `it read ${plural(p.orders, "order")} at ${secs(p.ms)}; the audit counts ${num(v.orders)} once the buyers were done.`
      : `it counted the 201 answers received (${num(p.orders)}); the audit counts the orders in PostgreSQL (${num(v.orders)}), purchases whose answer never came back included.`);
  }
  if (has(init) && has(v.stock) && v.stock >= 0 && has(v.orders) && init - v.stock < v.orders) {
    out.push(`the stock is a lost-update counter here (buyers wrote back stock = read − 1), so initial − stock = ${num(init - v.stock)} understates the ${plural(v.orders, "order")}.`);
  }
  return out.join(" And ");
}
