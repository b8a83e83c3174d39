// seckill live: an opening's drawing (loaded after cards.js, whose chart constants and
// helpers it uses): the T0 marker on a card's chart, a second chart of the answers by outcome
// over time, and the opening's figures under the verdict (loadtest -model opening).
"use strict";

// The answers the opening chart draws: [class, label, the sample's outcomes it sums].
const OPENING_SERIES = [["a-bought", "bought", ["bought", "accepted"]], ["a-sold-out", "sold out", ["sold_out"]],
  ["a-not-started", "not started", ["sale_not_started"]], ["a-not-turn", "not your turn", ["not_your_turn", "place_expired"]],
  ["a-busy", "busy", ["busy", "rate_limited"]], ["a-errors", "errors", ["errors"]]];
const AH = 220; // the answers chart's height; its width and margins are the card chart's

// openingT0 is the opening's T0 on the samples' clock, or null for a sale without a start.
const openingT0 = (it) => { const p = it.points.find((q) => has(q.t0_ms)); return p ? p.t0_ms : null; };

// drawOpening draws an opening card's T0 marker on the main chart (axes group g, x scale)
// and its answers chart on the same time axis; nothing for another sale.
function drawOpening(it, g, x, tmax) {
  const t0 = openingT0(it);
  if (t0 === null) return;
  s("line", { class: "t0", x1: x(t0), x2: x(t0), y1: PT - 6, y2: H - PB }, g);
  s("text", { class: "t0-label", x: x(t0) + 4, y: PT + 6 }, g).textContent = "T0";
  if (!it.answers) {
    it.answers = set(document.createElementNS(NS, "svg"), { class: "answers", viewBox: `0 0 ${W} ${AH}`, role: "img",
      "aria-label": `Answers by outcome of ${it.info.name} over time, T0 marked` });
    it.svg.after(it.answers);
  }
  const a = it.answers;
  a.replaceChildren();
  // Answers per second between consecutive samples, per series: each a level over its
  // interval (a point at either end), so that no answer is drawn before it came.
  const rows = [];
  let prev = { ms: 0, outcomes: {} };
  for (const p of it.points) {
    const dt = (p.ms - prev.ms) / 1000;
    if (p.outcomes && dt > 0) {
      const row = {};
      for (const [cls, , keys] of OPENING_SERIES) {
        row[cls] = keys.reduce((n, k) => n + (p.outcomes[k] || 0) - ((prev.outcomes || {})[k] || 0), 0) / dt;
      }
      rows.push({ ...row, ms: prev.ms }, { ...row, ms: p.ms });
      prev = p;
    }
  }
  let top = 1;
  for (const r of rows) for (const [cls] of OPENING_SERIES) top = Math.max(top, r[cls]);
  const ystep = niceStep(top), ymax = Math.ceil(top / ystep - 1e-9) * ystep;
  const y = (v) => AH - PB - ((AH - PT - PB) * v) / ymax;
  for (let i = 0; i * ystep <= ymax + 1e-9; i++) {
    const v = i * ystep;
    s("line", { class: "grid", x1: PL, x2: W - PR, y1: y(v), y2: y(v) }, a);
    s("text", { x: PL - 6, y: y(v) + 4, "text-anchor": "end" }, a).textContent = cf.format(v);
  }
  s("text", { x: PL - 6, y: PT - 12, "text-anchor": "end" }, a).textContent = "/s";
  s("line", { class: "axis", x1: PL, x2: W - PR, y1: AH - PB, y2: AH - PB }, a);
  const xstep = niceStep(tmax / 1000);
  for (let i = 0; i * xstep <= tmax / 1000 + 1e-9; i++) {
    s("text", { x: x(i * xstep * 1000), y: AH - PB + 19, "text-anchor": "middle" }, a).textContent = `${num(i * xstep)} s`;
  }
  s("line", { class: "t0", x1: x(t0), x2: x(t0), y1: PT - 6, y2: AH - PB }, a);
  s("text", { class: "t0-label", x: x(t0) + 4, y: PT + 6 }, a).textContent = "T0";
  let lx = PL;
  for (const [cls, label] of OPENING_SERIES) {
    s("path", { class: `answers-line ${cls}`, d: linePath(rows, cls, x, y) }, a);
    s("line", { class: `answers-line ${cls}`, x1: lx, x2: lx + 20, y1: 14, y2: 14 }, a);
    s("text", { x: lx + 24, y: 18 }, a).textContent = label;
    lx += 24 + 7 * label.length + 16; // the label's width at 13 px, and a gap
  }
  a.setAttribute("data-rows", String(rows.length / 2));
}

// openingFacts are the lines an opening's verdict adds under its card; none for another sale.
function openingFacts(o) {
  if (!o) return [];
  const b = o.burst, f = o.first_second, fair = o.fairness;
  const outs = (c) => Object.entries(c || {}).filter(([, n]) => n > 0).map(([k, n]) => `${num(n)} ${k.replace(/_/g, " ")}`).join(", ") || "none";
  const share = (g) => `${num(g.won)} of ${num(g.buyers)} won (${num(100 * g.share)}%)`;
  return [
    h("p", { class: "opening" }, `Opening: ${num(o.buyers)} buyers targeted within ${num(o.window_ms)} ms from T0; ` +
      `sent ${num(b.sent)} over ${num(b.spread_ms)} ms (${cf.format(b.rate_per_sec)}/s achieved of ${cf.format(b.target_rate_per_sec)}/s). ` +
      `Before T0: ${outs(o.early)}.`),
    h("p", { class: "opening" }, `Sold out ${has(o.sell_out_ms) ? `at T0 + ${num(o.sell_out_ms)} ms` : ": no"}` +
      `${o.orders ? ` (last order at starts_at + ${num(o.orders.last_ms)} ms in PostgreSQL, ${num(o.orders.before_start)} before it)` : ""}. ` +
      `First second: ${outs(f.outcomes)}; p50 ${num(f.latency_ms.p50)} ms, p99 ${num(f.latency_ms.p99)} ms.`),
    h("p", { class: "opening" }, `Early hammerers: ${share(fair.early)}; at T0 only: ${share(fair.on_time)}.`),
    ...lineFacts(fair.line),
  ];
}

// lineFacts is the line an opening through a line adds: its turns and the hammerers' ranks.
function lineFacts(l) {
  if (!l) return [];
  const hm = l.hammer;
  return [h("p", { class: "opening" }, `Line of ${num(l.rate)}/s: ${num(l.admitted)} admitted, ${num(l.out_of_turn)} out of turn ` +
    `(Spearman ${cf.format(l.spearman)} with the draw); hammerers' mean rank ${cf.format(hm.mean_rank)} against 0.5, ` +
    `${cf.format(hm.z)} standard errors better (bound ${num(hm.bound)}).`)];
}
