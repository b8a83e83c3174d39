// seckill live: the helpers every script of the page shares (loaded first): building
// elements, formatting numbers, and calling the page's own server.
"use strict";

const $ = (id) => document.getElementById(id);
const NS = "http://www.w3.org/2000/svg";

// ---------- small helpers ----------

// h builds an HTML element: attributes (true = present, false/null = absent) and children.
function h(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== false && has(v)) e.setAttribute(k, v === true ? "" : v);
  e.append(...kids);
  return e;
}
// set sets an element's attributes; s builds an SVG element and appends it to parent.
const set = (e, attrs) => { for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); return e; };
const s = (tag, attrs, parent) => parent.appendChild(set(document.createElementNS(NS, tag), attrs));
const has = (v) => v !== null && v !== undefined;
const nf = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });
const cf = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
const num = (v) => nf.format(v);
const unit = (v, u) => `${has(v) ? num(v) : "–"} ${u}`; // "–" when the server does not know
const rank = (list, v) => (list || []).includes(v) ? list.indexOf(v) : 1e9;
const plural = (n, word) => `${num(n)} ${word}${n === 1 ? "" : "s"}`;

// pageToken is the server's per-start token, in the page it served: every request that
// changes something carries it (a page of another site cannot read it).
const pageToken = document.querySelector('meta[name="seckill-page-token"]').content;

// api calls the server; a non-2xx answer throws an Error carrying the server's detail.
async function api(method, path, body) {
  const headers = method === "GET" ? {} : { "Content-Type": "application/json", "X-Seckill-Page-Token": pageToken };
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch { /* no JSON body (e.g. 202 of stop) */ }
  if (!res.ok) throw Object.assign(new Error((data && data.detail) || `${res.status} ${res.statusText}`),
    { status: res.status, code: data && data.code });
  return data;
}
