// The lock timeline (internal/timeline): one lane per API process, time across; the lock
// held from grant to release or loss, labelled with its fence (counted from the run's first,
// F₀, when fences are long); the faults; each read and write of the stock as a mark. Red where
// two processes held the lock at once; a write PostgreSQL refused for a stale fence is crossed
// out (✕), one its holder cancelled, told its lock was lost, is struck through (⊘); a write
// that lost decrements is labelled with the units it oversold. Drag across the lanes to zoom;
// "first overlap" zooms on the first thing that went wrong. Shared by the lab's report and
// the live page, defined once here, with its style in timeline.css. No network.
"use strict";
window.SeckillTimeline = (() => {
  const NS = "http://www.w3.org/2000/svg", LEFT = 78, RIGHT = 12, TOP = 22, LANE = 66;
  function el(name, attrs, parent, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(name, attrs, text) {
    const e = document.createElement(name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const FAULTS = { pause: "SIGSTOP … SIGCONT", kill: "SIGSTOP, kill -9", failover: "Redis master killed … replica promoted",
    partition: "cut off from the lock's server … healed" };
  // fenceLabel returns how fences are labelled, given the run's first fence, base. Short
  // fences (etcd's revisions) as they are; long ones (dlock's are microseconds of Redis's
  // clock, 16 digits) as F₀ plus or minus their distance from base, in full, so that a larger
  // fence always reads larger. Fences are below 2^53: exact in a JS number.
  function fenceLabel(base) {
    if (!base || String(base).length <= 6) return (f) => String(f);
    return (f) => (f === base ? "F₀" : "F₀" + (f > base ? "+" : "−") + Math.abs(f - base).toLocaleString("en-US"));
  }
  const secs = (ms) => (ms >= 1000 ? (ms / 1000).toFixed(ms >= 10000 ? 1 : 2) + " s" : ms.toFixed(ms >= 10 ? 0 : 1) + " ms");

  // markText is what a mark says: what it read or wrote, under which fence, and what came of it.
  function markText(m, fence) {
    const f = m.fence ? ` (fence ${fence(m.fence)})` : " (no fence)";
    if (m.kind === "read") {
      if (m.refused) return `read REFUSED by PostgreSQL: ${m.reason}${f}`;
      if (m.cancelled) return `read CANCELLED by its holder: ${m.reason}${f}`;
      if (m.outcome !== "ok") return `read failed: ${m.reason || m.outcome}${f}`;
      return `read ${m.value}${f}`;
    }
    const v = m.value !== undefined ? `wrote ${m.value}` : "write";
    if (m.refused) return `write of ${m.value} REFUSED by PostgreSQL: ${m.reason}${f}`;
    if (m.cancelled) return `write of ${m.value} CANCELLED by its holder, never committed: ${m.reason}${f}`;
    if (m.outcome !== "ok") return `${v} failed: ${m.reason || m.outcome}${f}`;
    const over = m.before !== undefined ? ` over ${m.before}` : "";
    if (m.oversold > 0) return `${v}${over}${f}: OVERSOLD ${m.oversold}`;
    if (m.oversold < 0) return `${v}${over}${f}: took back ${-m.oversold}`;
    return `${v}${over}${f}`;
  }

  // draw fills container with the timeline tl; title names it (a lab cell).
  function draw(container, tl, title) {
    container.classList.add("tl");
    container.replaceChildren();
    // Drawn at the container's width, one unit a pixel, so that text keeps its size.
    const W = Math.max(container.clientWidth || 960, 480);
    const lanes = tl.lanes || [], overlaps = tl.overlaps || [], total = Math.max(tl.ms || 0, 1);
    const fence = fenceLabel(tl.fence_base);
    const H = TOP + lanes.length * LANE + 8;
    const head = html("div", { class: "tl-head" });
    head.appendChild(html("strong", {}, (title ? title + ": " : "") + "who held the lock"));
    const facts = [`${lanes.length} processes`, `${overlaps.length} overlaps`,
      `oversold by the writes drawn: ${tl.oversold || 0}`, `refused by the fence: ${tl.refused || 0}`,
      `cancelled (lock lost): ${tl.cancelled || 0}`];
    if (fence(tl.fence_base || 0) === "F₀") facts.push(`fences from F₀ = ${tl.fence_base}, the first`);
    head.appendChild(html("span", { class: "tl-facts" }, facts.join(" · ")));
    const all = html("button", { type: "button", "data-zoom": "all" }, "whole run");
    head.appendChild(all);
    let first = null;
    if (tl.focus) {
      first = html("button", { type: "button", "data-zoom": "focus" }, overlaps.length ? "zoom on the first overlap" : "zoom on the first refused, cancelled or oversold write");
      head.appendChild(first);
    }
    head.appendChild(html("span", { class: "tl-hint" }, "drag across the lanes to zoom"));
    container.appendChild(head);
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "tl-svg", role: "img",
      "aria-label": `Lock timeline of ${tl.key}` }, container);
    const legend = html("p", { class: "tl-legend" });
    for (const [c, t] of [["held", "lock held (fence)"], ["overlap", "two holders at once"], ["fault", "fault"]]) {
      const s = html("span", {}); const i = html("i", { class: c }); s.append(i, t); legend.appendChild(s);
    }
    legend.appendChild(html("span", {}, "○ read (r: value) · ◆ write (w: value) · ✕ refused by PostgreSQL (stale fence) · ⊘ cancelled by its holder (lock lost) · red ◆ oversold · orange ◆ took back · - - - in flight"));
    container.appendChild(legend);
    const defs = el("defs", {}, svg);
    const pat = el("pattern", { id: "tl-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
    el("rect", { width: 6, height: 6, fill: "#f4ecf7" }, pat);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#c39bd3", "stroke-width": 2 }, pat);
    const plot = el("g", {}, svg);
    let view = [0, total];

    function render() {
      plot.replaceChildren();
      const [a, b] = view, span = Math.max(b - a, 0.001), pxPerMs = (W - LEFT - RIGHT) / span;
      const x = (ms) => LEFT + (Math.min(Math.max(ms, a), b) - a) * pxPerMs;
      const visible = (from, to) => to >= a && from <= b;
      svg.dataset.from = a.toFixed(1); svg.dataset.to = b.toFixed(1);
      // Time axis.
      el("line", { class: "axis", x1: LEFT, x2: W - RIGHT, y1: TOP - 4, y2: TOP - 4 }, plot);
      const step = niceStep(span / 8);
      for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
        el("line", { class: "axis", x1: x(t), x2: x(t), y1: TOP - 7, y2: H - 6, "stroke-dasharray": "1 4" }, plot);
        el("text", { class: "tick", x: x(t), y: TOP - 9, "text-anchor": "middle" }, plot, secs(t));
      }
      lanes.forEach((l, i) => {
        const y0 = TOP + i * LANE, g = el("g", { class: "lane", "data-process": l.process }, plot);
        el("text", { class: "lane-label", x: 4, y: y0 + 20 }, g, "pid " + l.process);
        for (const f of l.faults || []) {
          if (!visible(f.from, f.to)) continue;
          const w = Math.max(x(f.to) - x(f.from), 3);
          const r = el("rect", { class: "fault fault-" + f.kind, x: x(f.from), y: y0 + 2, width: w, height: LANE - 2 }, g);
          el("title", {}, r, `${FAULTS[f.kind] || f.kind}: ${secs(f.from)} to ${secs(f.to)}`);
          el("text", { class: "fault-label", x: x(f.from) + 2, y: y0 + LANE - 3 }, g, FAULTS[f.kind] || f.kind);
        }
        const labels = []; // the holds' labels, drawn over the overlaps
        for (const h of l.holds || []) {
          if (!visible(h.from, h.to)) continue;
          const w = Math.max(x(h.to) - x(h.from), 1);
          const r = el("rect", { class: "hold end-" + h.end.replace(" ", "-"), x: x(h.from), y: y0 + 8, width: w, height: 16,
            "data-fence": h.fence || 0 }, g);
          el("title", {}, r, `pid ${l.process} held ${secs(h.from)} to ${secs(h.to)}${h.fence ? ", fence " + h.fence + (fence(h.fence) !== String(h.fence) ? " (" + fence(h.fence) + ")" : "") : ""}; ended: ${h.end}${h.reason ? " (" + h.reason + ")" : ""}`);
          const label = h.fence ? "fence " + fence(h.fence) : "held";
          if (w > label.length * 6 + 6) labels.push([r, x(h.from) + 3, label]);
        }
        for (const o of overlaps) {
          if (!o.processes.includes(l.process) || !visible(o.from, o.to)) continue;
          const r = el("rect", { class: "overlap", x: x(o.from), y: y0 + 8, width: Math.max(x(o.to) - x(o.from), 2), height: 16 }, g);
          el("title", {}, r, `processes ${o.processes.join(" and ")} both held the lock, ${secs(o.from)} to ${secs(o.to)}`);
        }
        for (const [r, lx, label] of labels) {
          const t = el("text", { class: "fence", x: lx, y: y0 + 20 }, g, label);
          t.dataset.fence = r.dataset.fence;
        }
        const lastLabel = { read: -Infinity, write: -Infinity };
        let lastBad = -Infinity;
        // Where the labels that are always drawn go: other labels keep clear of them.
        const forced = (l.marks || []).filter((m) => visible(m.at, m.at) && (m.refused || m.cancelled || (m.oversold || 0) !== 0)).map((m) => x(m.at));
        const clear = (cx) => forced.every((fx) => fx === cx || Math.abs(fx - cx) > 90);
        for (const m of l.marks || []) {
          if (!visible(m.at, m.at)) continue;
          const bad = m.refused || m.oversold > 0, cx = x(m.at), cy = y0 + 42;
          let cls = "mark " + m.kind;
          if (m.refused) cls += " refused";
          else if (m.cancelled) cls += " cancelled";
          else if (m.oversold > 0) cls += " oversold";
          else if (m.oversold < 0) cls += " erased";
          else if (m.outcome !== "ok") cls += " failed";
          if (cx - x(m.from) > 24) { // in flight for a while (sent before a pause, say): from sent to answered
            el("line", { class: "in-flight", x1: x(m.from), x2: cx, y1: cy, y2: cy, stroke: "#2e7d32", "stroke-width": 1, "stroke-dasharray": "2 2" }, g);
          }
          let shape;
          if (m.refused) { // PostgreSQL said no: a cross
            shape = el("path", { class: cls, d: `M${cx - 5} ${cy - 5}L${cx + 5} ${cy + 5}M${cx - 5} ${cy + 5}L${cx + 5} ${cy - 5}` }, g);
          } else if (m.cancelled) { // never sent, or stopped by its holder: a struck-through circle
            shape = el("path", { class: cls, d: `M${cx - 5} ${cy}a5 5 0 1 0 10 0a5 5 0 1 0 -10 0M${cx - 3.5} ${cy + 3.5}L${cx + 3.5} ${cy - 3.5}` }, g);
          } else if (m.kind === "read") shape = el("circle", { class: cls, cx, cy, r: 3.5 }, g);
          else shape = el("path", { class: cls, d: `M${cx} ${cy - 5}L${cx + 5} ${cy}L${cx} ${cy + 5}L${cx - 5} ${cy}Z` }, g);
          const text = markText(m, fence);
          shape.dataset.text = text;
          el("title", {}, shape, `${text} at ${secs(m.at)}`);
          // Labels where there is room; a refused or overselling mark is labelled first. (Every mark
          // says what it is in its tooltip and its data-text.)
          const always = bad || m.cancelled || m.oversold < 0; // labelled unless on top of the last such label
          if (always ? cx - lastBad > 130 : cx - lastLabel[m.kind] > 36 && clear(cx)) {
            const short = m.refused ? `${m.kind} refused by PostgreSQL: stale fence` :
              m.cancelled ? `${m.kind} cancelled: lock lost` : m.oversold > 0 ? `wrote ${m.value}: oversold ${m.oversold}` :
              m.oversold < 0 ? `w ${m.value}: took back ${-m.oversold}` :
              m.kind === "read" ? (m.outcome === "ok" ? `r ${m.value}` : "r ✕") : (m.value !== undefined ? `w ${m.value}` : "w");
            const right = cx > W - RIGHT - short.length * 6 - 8; // no room on the right: on the left
            el("text", { class: "mark-label" + (bad ? " bad" : m.cancelled ? " cancelled" : ""), x: right ? cx - 6 : cx + 6, y: cy + (m.kind === "read" ? -7 : 15),
              "text-anchor": right ? "end" : "start" }, g, short);
            lastLabel[m.kind] = cx;
            if (always) lastBad = cx;
          }
        }
      });
    }
    function niceStep(raw) {
      const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 0.01))));
      for (const k of [1, 2, 5, 10]) if (raw <= k * p) return k * p;
      return 10 * p;
    }
    function zoom(from, to) {
      view = [Math.max(0, from), Math.min(total, Math.max(to, from + 0.5))];
      render();
    }
    all.addEventListener("click", () => zoom(0, total));
    if (first) {
      first.addEventListener("click", () => {
        const f = tl.focus, pad = Math.max((f.to - f.from) * 0.08, 5);
        zoom(f.from - pad, f.to + pad);
      });
    }
    // Drag to zoom: the time under the pointer, from the SVG's own coordinates.
    const toMs = (ev) => {
      const r = svg.getBoundingClientRect(), px = (ev.clientX - r.left) * W / r.width;
      return view[0] + (Math.min(Math.max(px, LEFT), W - RIGHT) - LEFT) * (view[1] - view[0]) / (W - LEFT - RIGHT);
    };
    let start = null, brush = null;
    svg.addEventListener("mousedown", (ev) => { start = toMs(ev); });
    svg.addEventListener("mousemove", (ev) => {
      if (start === null) return;
      const now = toMs(ev), [a, b] = view, k = (W - LEFT - RIGHT) / (b - a);
      if (!brush) brush = el("rect", { class: "brush", y: TOP - 4, height: H - TOP }, svg);
      brush.setAttribute("x", LEFT + (Math.min(start, now) - a) * k);
      brush.setAttribute("width", Math.abs(now - start) * k);
    });
    window.addEventListener("mouseup", (ev) => {
      if (start === null) return;
      const end = toMs(ev), from = Math.min(start, end), to = Math.max(start, end);
      start = null;
      if (brush) { brush.remove(); brush = null; }
      if ((to - from) * (W - LEFT - RIGHT) / (view[1] - view[0]) > 4) zoom(from, to);
    });
    svg.addEventListener("dblclick", () => zoom(0, total));
    render();
    container.dataset.drawn = "true";
    return container;
  }
  // append draws tl in a new element at the end of parent, and widens card (a live page's
  // card, if given) to the whole row of its grid first, so that the lanes have room.
  function append(parent, tl, title, card) {
    if (card) card.classList.add("tl-wide");
    const d = document.createElement("div");
    parent.appendChild(d);
    return draw(d, tl, title);
  }
  return { draw, append };
})();
