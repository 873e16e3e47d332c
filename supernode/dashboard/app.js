// The dashboard's page: polls the supernode's JSON API (the same one
// scripts use, docs/dashboard.md) every POLL_MS and redraws peers, jobs,
// the charts and the other supernodes.  Everything is built with DOM
// calls and textContent: nothing from the network is ever parsed as HTML.
// The access token, when one is needed, travels in an HttpOnly cookie the
// page cannot read.
"use strict";

const POLL_MS = 1500;
const HISTORY_EVERY = 4; // polls between history fetches
const STATES = ["available", "busy", "full", "owner-busy", "not-sharing",
                "silent", "gone"];

let selected = null;  // id of the peer whose details are shown
let lastPeers = [];
let polls = 0;
let lastOk = 0;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "title") e.title = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function bytes(n) {
  if (n === null || n === undefined) return "?";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}

function duration(s) {
  if (s === null || s === undefined) return "?";
  s = Math.floor(s);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  if (s < 86400) return Math.floor(s / 3600) + " h " + Math.floor(s % 3600 / 60) + " min";
  return Math.floor(s / 86400) + " d " + Math.floor(s % 86400 / 3600) + " h";
}

function clock(unix) {
  return unix ? new Date(unix * 1000).toLocaleTimeString() : "?";
}

async function getJSON(path) {
  const r = await fetch(path, { credentials: "same-origin", cache: "no-store" });
  if (!r.ok) throw new Error(path + ": " + r.status + " " + r.statusText);
  return r.json();
}

// --- peers -----------------------------------------------------------------

function peerDetails(p) {
  return [
    ["host", p.host], ["address", p.addr], ["state", p.state +
      (p.state !== p.reported_state ? " (last reported " + p.reported_state + ")" : "")],
    ["id", p.id],
    ["CPU", (p.cpu_model || "?") + ", " + p.cores + " cores"],
    ["slots", (p.slots_total - p.slots_free) + " used of " + p.slots_total],
    ["memory", bytes(p.mem_free) + " free of " + bytes(p.mem_total)],
    ["load", p.load.toFixed(2)],
    ["RTT", p.rtt_us === null ? "?" : (p.rtt_us / 1000).toFixed(2) + " ms"],
    ["last heard", (p.age_ms / 1000).toFixed(1) + " s ago" +
      (p.gone_why ? " (" + p.gone_why + ")" : "")],
    ["OS", p.os || "?"], ["kernel", p.kernel || "?"],
    ["peerd", (p.version || "?") + ", up " + duration(p.uptime_s)],
  ].concat(p.remote ? [["registered with", p.supernode +
    " (summarised by the federation)"]] : []);
}

function showDetails() {
  const box = document.getElementById("peer-details");
  const p = lastPeers.find(q => q.id === selected);
  for (const t of document.querySelectorAll(".peer"))
    t.classList.toggle("selected", t.dataset.id === selected);
  if (!p) { box.hidden = true; return; }
  const dl = el("dl");
  for (const [k, v] of peerDetails(p)) dl.append(el("dt", {}, k), el("dd", {}, v));
  box.replaceChildren(el("strong", {}, p.host + " "), el("span", {}, p.addr), dl);
  box.hidden = false;
}

function renderPeers(data) {
  lastPeers = data.peers;
  const tiles = data.peers.map(p => {
    const used = p.slots_total - p.slots_free;
    const t = el("div", {
      class: "peer state-" + (STATES.includes(p.state) ? p.state : "unknown") +
        (p.remote ? " remote" : ""),
      "data-id": p.id, "data-host": p.host, "data-addr": p.addr,
      "data-state": p.state,
      title: peerDetails(p).map(([k, v]) => k + ": " + v).join("\n"),
    },
      el("div", {}, el("span", { class: "host" }, p.host),
         el("span", { class: "state" }, p.state)),
      el("div", { class: "line" }, p.addr),
      el("div", { class: "line" }, "slots " + used + "/" + p.slots_total +
         " · load " + p.load.toFixed(2)),
      el("div", { class: "line" }, "mem " + bytes(p.mem_free) + " free / " +
         bytes(p.mem_total)),
      el("div", { class: "line" }, "rtt " +
         (p.rtt_us === null ? "?" : (p.rtt_us / 1000).toFixed(2) + " ms") +
         " · age " + (p.age_ms / 1000).toFixed(1) + " s"),
      el("div", { class: "line" }, p.remote ? "via " + p.supernode
                                             : p.version || ""));
    t.addEventListener("click", () => {
      selected = selected === p.id ? null : p.id;
      showDetails();
    });
    return t;
  });
  document.getElementById("peers").replaceChildren(...tiles);
  showDetails();
  const live = data.peers.filter(p => p.state !== "gone" && p.state !== "silent");
  const total = live.reduce((a, p) => a + p.slots_total, 0);
  const used = live.reduce((a, p) => a + p.slots_total - p.slots_free, 0);
  const remote = live.filter(p => p.remote).length;
  document.getElementById("summary").textContent =
    live.length + " peers · " + used + "/" + total + " slots in use" +
    (data.remote_total ? " · " + remote + " of them registered elsewhere in the federation" +
      (data.remote_total > remote ? " (the best " + remote + " of " + data.remote_total + ")" : "")
      : "");
}

// --- jobs ------------------------------------------------------------------

function rankMap(j) {
  const t = el("table", { class: "rankmap" });
  const head = el("tr", {}, el("th", {}, "rank"));
  for (let r = 0; r < j.replicas; r++) head.append(el("th", {}, "replica " + r));
  t.append(head);
  for (const rk of j.ranks) {
    const row = el("tr", { "data-rank": rk.rank }, el("th", {}, rk.rank));
    const cells = new Array(j.replicas).fill(null);
    for (const rp of rk.replicas)
      if (rp.replica < j.replicas) cells[rp.replica] = rp;
    cells.forEach((rp, i) => {
      if (!rp) { row.append(el("td", { class: "proc-none" }, "—")); return; }
      const what = rp.state === "unknown" ? "ended" : rp.state;
      const code = rp.code !== undefined ? " " + rp.code : "";
      row.append(el("td", {
        class: "replica proc-" + rp.state, "data-rank": rk.rank,
        "data-replica": i, "data-host": rp.host, "data-state": rp.state,
      }, rp.host + " · " + what + code));
    });
    t.append(row);
  }
  return t;
}

function renderJobs(data) {
  const now = data.now;
  const items = data.jobs.map(j => {
    const box = el("div", {
      class: "job " + j.state, "data-id": j.id, "data-kind": j.kind,
      "data-state": j.state,
    });
    const title = el("div", { class: "title" },
      j.command || "?", " ",
      el("span", { class: "meta" }, j.kind === "farm" ? "farm" :
         j.size + " ranks × " + j.replicas + (j.replicas > 1 ? " replicas" : " replica")));
    box.append(title);
    const meta = el("div", { class: "meta" },
      "user " + j.user + " · job " + j.id.slice(0, 12) + " · started " +
      clock(j.started) + (j.started ? " (" + duration(now - j.started) + " ago)" : "") +
      " · " + j.hosts + (j.hosts === 1 ? " peer" : " peers") + " · ");
    if (j.state === "finished") {
      meta.append(el("span", { class: j.exit ? "exit-bad" : "exit-ok" },
        "finished, exit " + (j.exit === null ? "unknown" : j.exit)));
    } else {
      meta.append("running");
    }
    box.append(meta);
    if (j.kind === "farm") {
      const t = j.tasks;
      const tasks = el("div", { class: "tasks" },
        el("span", {}, "running " + t.running),
        el("span", {}, "queued on peers " + t.queued),
        el("span", {}, "done on peers " + t.done));
      // What the coordinator (p2prun) said, once it did.
      if (t.inputs !== null)
        tasks.append(el("span", { class: "coord" },
          "reported " + t.reported + " of " + t.inputs + " inputs read" +
          (t.failed ? ", " + t.failed + " failed" : "")));
      box.append(tasks);
    } else {
      box.append(rankMap(j));
      if (j.ranks_truncated)
        box.append(el("div", { class: "meta" }, "(more ranks not shown)"));
    }
    return box;
  });
  if (!items.length) items.push(el("p", { class: "meta" }, "no jobs"));
  document.getElementById("jobs").replaceChildren(...items);
}

// --- network ---------------------------------------------------------------

function line(svg, points, cls, max, n) {
  const w = 300, h = 80;
  const pts = points.map((v, i) =>
    (n > 1 ? i * w / (n - 1) : 0).toFixed(1) + "," +
    (h - 2 - (max ? v / max : 0) * (h - 6)).toFixed(1));
  svg.append(svgEl("polyline", { class: cls, points: pts.join(" ") }));
}

function renderHistory(data) {
  const s = data.samples;
  const peers = s.map(x => x[1]), total = s.map(x => x[2]), used = s.map(x => x[3]);
  const cp = document.getElementById("chart-peers");
  const cs = document.getElementById("chart-slots");
  cp.replaceChildren();
  cs.replaceChildren();
  line(cp, peers, "line-peers", Math.max(1, ...peers), s.length);
  const m = Math.max(1, ...total);
  line(cs, total, "line-total", m, s.length);
  line(cs, used, "line-used", m, s.length);
  const last = s[s.length - 1];
  document.getElementById("now-peers").textContent = last ? last[1] : "";
  document.getElementById("now-slots").textContent = last ? last[3] + "/" + last[2] : "";
}

function renderSupernodes(data) {
  const box = document.getElementById("supernodes");
  const self = data.self;
  const list = el("ul", {},
    el("li", { "data-addr": self.addr, class: "supernode self" },
       "this supernode " + self.addr + " (" + self.version + "): " +
       self.peers + " peers, " + self.jobs + " jobs"));
  for (const k of data.known)
    list.append(el("li", { "data-addr": k.addr, class: "supernode" },
      k.addr + " (" + k.source + ")"));
  box.replaceChildren(el("strong", {}, "Supernodes"), list);
}

// --- loop ------------------------------------------------------------------

async function poll() {
  const status = document.getElementById("status");
  try {
    const wantHistory = polls % HISTORY_EVERY === 0;
    const [peers, jobs, sns, hist] = await Promise.all([
      getJSON("/api/peers"), getJSON("/api/jobs"),
      wantHistory ? getJSON("/api/supernodes") : null,
      wantHistory ? getJSON("/api/history") : null]);
    renderPeers(peers);
    renderJobs(jobs);
    if (sns) renderSupernodes(sns);
    if (hist) renderHistory(hist);
    polls++;
    lastOk = Date.now();
    status.textContent = "updated " + new Date().toLocaleTimeString();
    status.classList.remove("stale");
    document.body.dataset.updated = String(polls);
  } catch (e) {
    status.textContent = "not updating: " + e.message +
      (lastOk ? " (last " + new Date(lastOk).toLocaleTimeString() + ")" : "");
    status.classList.add("stale");
  }
  setTimeout(poll, POLL_MS);
}

function legend() {
  const l = document.getElementById("legend");
  for (const s of STATES) l.append(el("span", { class: "state-" + s }, s));
}

legend();
poll();
