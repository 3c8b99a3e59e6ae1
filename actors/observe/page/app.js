// The status page of a Prism cluster: reads the head's JSON routes and
// draws them. No library, no network beyond the head: every value from the
// cluster is put in the page as text, never as markup.
"use strict";

const view = document.getElementById("view");
let timer = null;
let generation = 0;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    // Through the CSSOM: the page's policy forbids inline style markup.
    else if (k === "style") el.style.cssText = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const c of children.flat()) if (c) el.append(c);
  return el;
}

async function get(path) {
  const r = await fetch(path, { credentials: "same-origin", cache: "no-store" });
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (!r.ok) throw new Error((body && body.error) || r.status + " " + r.statusText);
  return body;
}

function problem(text) {
  const p = document.getElementById("problem");
  p.hidden = !text;
  p.textContent = text || "";
}

function refreshed() {
  document.getElementById("refreshed").textContent =
    "updated " + new Date().toLocaleTimeString();
}

// Runs `draw` now and every `ms` while this view is shown.
function every(ms, draw) {
  const mine = generation;
  const tick = async () => {
    if (mine !== generation) return;
    try {
      await draw();
      problem("");
      refreshed();
    } catch (e) {
      problem("The head did not answer: " + e.message);
    }
    if (mine === generation) timer = setTimeout(tick, ms);
  };
  tick();
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}

function short(id) { return id ? String(id).slice(0, 8) : ""; }

function stateCell(s) { return h("td", { class: "state-" + s }, s); }

function card(id, n, what) {
  return h("div", { class: "card" }, h("div", { class: "n", id }, n),
           h("div", { class: "what" }, what));
}

function table(headers, rows, attrs) {
  return h("table", attrs || {},
           h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
           h("tbody", {}, rows));
}

// -- overview ----------------------------------------------------------------

function resourceBars(resources) {
  return resources.map((r) => {
    const share = r.total > 0 ? Math.min(1, r.used / r.total) : 0;
    return h("span", { class: "res" }, r.name + " ",
             h("span", { class: "bar", title: r.used + " of " + r.total + " used" },
               h("span", { style: "width:" + (share * 100).toFixed(1) + "%" })),
             " " + +r.used.toFixed(2) + "/" + +r.total.toFixed(2));
  });
}

function demandRows(d) {
  const rows = [];
  const add = (list, what) => list.forEach((x) =>
    rows.push(h("tr", {}, h("td", {}, "{" + x.shape + "}"),
                h("td", { class: "num" }, x.count), h("td", {}, what))));
  add(d.waiting, "tasks waiting for busy resources");
  add(d.infeasible, "task shapes no node can ever fit");
  add(d.unplaced_actors, "actors waiting for a node");
  return rows;
}

async function drawOverview() {
  const [o, hist] = await Promise.all([get("/api/overview"), get("/api/history")]);
  const alive = o.nodes.filter((n) => n.alive).length;
  const running = o.jobs.filter((j) => j.running).length;
  const t = o.tasks || {};
  const content = [
    h("div", { class: "cards" },
      card("nodes-alive", alive, "nodes alive (" + (o.nodes.length - alive) + " dead)"),
      card("actors-alive", o.actors.alive, "actors alive"),
      card("actors-other", o.actors.pending + o.actors.restarting,
           "actors pending or restarting"),
      card("actors-dead", o.actors.dead, "actors dead"),
      card("jobs-total", o.jobs.length, "jobs (" + running + " running)"),
      card("tasks-finished", t.FINISHED || 0, "tasks finished"),
      card("tasks-failed", t.FAILED || 0, "tasks failed"),
      card("tasks-running", (t.RUNNING || 0), "tasks running")),
    h("h2", {}, "Nodes"),
    table(["node", "state", "address", "resources (used/total)", "objects",
           "heartbeat"],
          o.nodes.map((n) => h("tr", {},
            h("td", { class: "id", title: n.node_id }, short(n.node_id)),
            stateCell(n.alive ? "ALIVE" : "DEAD"),
            h("td", {}, n.address),
            h("td", {}, n.alive && !n.answered
              ? h("span", { class: "muted" }, "no answer in time") : resourceBars(n.resources)),
            h("td", { class: "num" }, n.objects === undefined ? "" :
              n.objects + " (" + bytes(n.object_bytes) + ")"),
            h("td", { class: "num" }, n.alive && n.heartbeat_age_ms >= 0
              ? (n.heartbeat_age_ms / 1000).toFixed(1) + " s ago" : ""))),
          { id: "nodes-table" }),
    h("h2", {}, "Tasks per second, last hour"),
    h("div", { class: "charts" }, chart("Tasks finished per second",
      hist, [["tasks_per_s", "tasks/s"]], (v) => v.toFixed(1))),
    h("h2", {}, "Jobs"),
    table(["job", "state", "namespace", "started"],
          o.jobs.map((j) => h("tr", {},
            h("td", {}, h("a", { href: "#/jobs/" + j.job_id }, j.job_id)),
            stateCell(j.running ? "RUNNING" : "FINISHED"),
            h("td", {}, j.namespace),
            h("td", {}, new Date(j.start_ms).toLocaleString())))),
    h("h2", {}, "Pending and infeasible demands"),
    demandRows(o.demands).length
      ? table(["shape", "count", "what"], demandRows(o.demands))
      : h("p", { class: "muted" }, "None: every demand is placed."),
    h("h2", {}, "Recent failures (" + o.failures_total + " in all)"),
    o.failures.length
      ? table(["what", "id", "name", "node", "when", "cause"],
              o.failures.map((f) => h("tr", {},
                h("td", {}, f.kind), h("td", { class: "id", title: f.id }, short(f.id)),
                h("td", {}, f.name), h("td", { class: "id" }, short(f.node_id)),
                h("td", {}, f.time), h("td", {}, f.cause))),
              { id: "failures-table" })
      : h("p", { class: "muted" }, "No task failed and no actor died unasked."),
    h("h2", {}, "Autoscaler"),
    o.autoscaler ? h("pre", { class: "logs" }, o.autoscaler)
                 : h("p", { class: "muted" }, "This cluster runs no autoscaler."),
  ];
  if (o.events_dropped || o.tasks_forgotten)
    content.splice(1, 0, h("p", { class: "problem" },
      "Task counts are not exact: " + o.events_dropped + " events dropped, " +
      o.tasks_forgotten + " tasks forgotten."));
  view.replaceChildren(...content);
}

// -- actors ------------------------------------------------------------------

const actorQuery = { key: "class_name", q: "", state: "", cursors: [""], limit: 100 };

function actorsToolbar() {
  const key = h("select", { id: "actor-key" },
    ["class_name", "name", "actor_id", "node_id", "namespace", "job_id",
     "death_cause"].map((k) => h("option", { value: k, selected: k === actorQuery.key }, k)));
  const q = h("input", { id: "actor-search", type: "search", placeholder: "search",
                         value: actorQuery.q, autocomplete: "off" });
  const state = h("select", { id: "actor-state" },
    ["", "ALIVE", "PENDING_CREATION", "RESTARTING", "DEAD"].map((s) =>
      h("option", { value: s, selected: s === actorQuery.state }, s || "any state")));
  let typing = null;
  const again = () => {
    actorQuery.key = key.value;
    actorQuery.q = q.value;
    actorQuery.state = state.value;
    actorQuery.cursors = [""];
    drawActorsPage();
  };
  q.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(again, 250); });
  key.addEventListener("change", again);
  state.addEventListener("change", again);
  return h("div", { class: "toolbar" }, key, q, state);
}

async function drawActorsPage() {
  const cursor = actorQuery.cursors[actorQuery.cursors.length - 1];
  const params = new URLSearchParams({ key: actorQuery.key, q: actorQuery.q,
    state: actorQuery.state, cursor, limit: actorQuery.limit });
  const p = await get("/api/actors?" + params);
  const first = (actorQuery.cursors.length - 1) * actorQuery.limit;
  const prev = h("button", { id: "actors-prev", disabled: actorQuery.cursors.length === 1,
    onclick: () => { actorQuery.cursors.pop(); drawActorsPage(); } }, "‹ Previous");
  const next = h("button", { id: "actors-next", disabled: !p.next_cursor,
    onclick: () => { actorQuery.cursors.push(p.next_cursor); drawActorsPage(); } }, "Next ›");
  const shown = p.entries.length ? (first + 1) + "–" + (first + p.entries.length) : "0";
  const body = document.getElementById("actors-body");
  body.replaceChildren(
    h("div", { class: "toolbar" }, prev, next,
      h("span", {}, "Showing " + shown + " of ",
        h("b", { id: "actors-matched" }, p.matched), " matching (" + p.total + " actors)")),
    table(["actor", "class", "name", "state", "node", "pid", "restarts", "death cause"],
          p.entries.map((a) => h("tr", {},
            h("td", { class: "id", title: a.actor_id }, short(a.actor_id)),
            h("td", {}, a.class_name), h("td", {}, a.name), stateCell(a.state),
            h("td", { class: "id", title: a.node_id }, short(a.node_id)),
            h("td", { class: "num" }, a.pid),
            h("td", { class: "num" }, a.restarts + "/" + a.max_restarts),
            h("td", {}, a.death_kind ? a.death_kind + ": " + a.death_cause : ""))),
          { id: "actors-table" }));
}

function showActors() {
  view.replaceChildren(h("h2", {}, "Actors"), actorsToolbar(), h("div", { id: "actors-body" }));
  every(5000, drawActorsPage);
}

// -- jobs ------------------------------------------------------------------------

function taskSummary(tasks) {
  const parts = Object.entries(tasks || {}).map(([s, n]) =>
    h("span", { class: "state-" + s, style: "margin-right:10px" }, s + " " + n));
  return parts.length ? parts : h("span", { class: "muted" }, "no tasks");
}

async function drawJobs() {
  const j = await get("/api/jobs");
  view.replaceChildren(
    h("h2", {}, "Jobs"),
    table(["job", "state", "namespace", "started", "program", "tasks"],
          j.jobs.map((x) => h("tr", {},
            h("td", {}, h("a", { href: "#/jobs/" + x.job_id }, x.job_id)),
            stateCell(x.state), h("td", {}, x.namespace), h("td", {}, x.start_time),
            h("td", {}, x.program), h("td", {}, taskSummary(x.tasks)))),
          { id: "jobs-table" }),
    h("h2", {}, "Submitted jobs (prism job submit)"),
    j.submitted.length
      ? table(["id", "name", "state", "command", "exit code", "message"],
              j.submitted.map((x) => h("tr", {},
                h("td", {}, h("a", { href: "#/submitted/" + x.id }, x.id)),
                h("td", {}, x.name), stateCell(x.state), h("td", {}, x.argv.join(" ")),
                h("td", { class: "num" }, x.exit_code >= 0 ? x.exit_code : ""),
                h("td", {}, x.message))))
      : h("p", { class: "muted" }, "None."));
}

function showJob(id) {
  const logs = h("pre", { class: "logs", id: "job-logs" }, "");
  const summary = h("p", { id: "job-tasks" });
  const errToggle = h("input", { type: "checkbox", id: "job-logs-err" });
  view.replaceChildren(
    h("h2", {}, "Job " + id), h("p", {}, h("a", { href: "#/jobs" }, "‹ all jobs")),
    h("h2", {}, "Tasks"), summary,
    h("h2", {}, "Output of its worker processes (last lines of each, followed)"),
    h("label", {}, errToggle, " stderr"), logs);
  errToggle.addEventListener("change", () => logs.replaceChildren());
  every(2000, async () => {
    const [jobs, l] = await Promise.all([get("/api/jobs"),
      get("/api/worker_logs?job=" + encodeURIComponent(id) + "&err=" + (errToggle.checked ? 1 : 0))]);
    const job = jobs.jobs.find((x) => String(x.job_id) === String(id));
    summary.replaceChildren(...[].concat(job ? taskSummary(job.tasks) : "No such job."));
    const atEnd = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
    logs.replaceChildren(...l.files.map((f) => [
      h("span", { class: "logfile" }, "==> node " + short(f.node_id) + " " + f.file + " <==\n"),
      f.bytes + (f.bytes.endsWith("\n") ? "" : "\n")]).flat());
    if (!l.files.length) logs.textContent = "(no output yet)";
    if (atEnd) logs.scrollTop = logs.scrollHeight;
  });
}

function showSubmitted(id) {
  const logs = h("pre", { class: "logs", id: "job-logs" }, "");
  const state = h("p", { id: "submitted-state" });
  view.replaceChildren(h("h2", {}, "Submitted job " + id),
    h("p", {}, h("a", { href: "#/jobs" }, "‹ all jobs")), state,
    h("h2", {}, "Its driver's output (followed)"), logs);
  let offset = 0;
  every(1000, async () => {
    for (let i = 0; i < 16; i++) {
      const part = await get("/api/job_output?id=" + encodeURIComponent(id) + "&offset=" + offset);
      if (part.bytes) logs.append(part.bytes);
      offset = part.offset + part.bytes.length;
      state.textContent = part.ended ? "Ended." : "Running: new output appears as it comes.";
      if (!part.bytes || offset >= part.size) break;
    }
  });
}

// -- supervision trees ---------------------------------------------------------

// The rows of a supervisor and, under it, its children, as Erlang's
// observer shows them: each with its state, restart type and restarts; a
// supervisor with its strategy and the messages waiting for it.
function treeRows(tree, name, depth, restart, restarts, running) {
  const out = [h("tr", { class: "supervisor" },
    h("td", { style: "padding-left:" + (8 + depth * 20) + "px" }, "▾ " + name),
    h("td", {}, "supervisor: " + tree.strategy + ", at most " + tree.intensity +
      " restarts in " + tree.period_ms / 1000 + " s"),
    stateCell(running ? "RUNNING" : "STOPPED"), h("td", {}, restart),
    h("td", { class: "num" }, restarts), h("td", { class: "num" }, tree.mailbox))];
  for (const c of tree.children) {
    if (c.supervisor && c.tree) {
      out.push(...treeRows(c.tree, c.id, depth + 1, c.restart, c.restarts, c.running));
      continue;
    }
    out.push(h("tr", {},
      h("td", { style: "padding-left:" + (8 + (depth + 1) * 20) + "px" },
        c.supervisor ? c.id : h("a", { href: "#/actors", title: "an actor named " + c.id,
          onclick: () => { actorQuery.key = "name"; actorQuery.q = c.id;
                           actorQuery.state = ""; actorQuery.cursors = [""]; } }, c.id)),
      h("td", {}, c.supervisor ? "supervisor" : "actor"),
      stateCell(c.running ? "RUNNING" : "STOPPED"), h("td", {}, c.restart),
      h("td", { class: "num" }, c.restarts),
      h("td", { class: "num" }, c.mailbox === undefined ? "" : c.mailbox)));
  }
  return out;
}

async function drawTrees() {
  const t = await get("/api/trees");
  const cards = t.trees.map((x) => h("div", { class: "tree" },
    h("h2", {}, "Tree " + short(x.key) + " ",
      h("span", { class: "muted" }, "job " + x.job + " (",
        h("span", { class: "state-" + x.job_state }, x.job_state),
        "), pid " + x.pid + ", namespace " + x.namespace + ", updated " +
        new Date(x.updated_ms).toLocaleTimeString())),
    x.tree && x.tree.children
      ? table(["child", "kind", "state", "restart", "restarts", "mailbox"],
              treeRows(x.tree, "(root)", 0, "", "", true), { class: "tree-table" })
      : h("p", { class: "muted" }, "Its process sent no description.")));
  view.replaceChildren(h("h2", {}, "Supervision trees (" + t.total + ")"),
    cards.length ? h("div", { id: "trees" }, cards)
                 : h("p", { class: "muted", id: "trees" },
                     "No supervision tree runs (prism::supervisor::start)."));
}

// -- charts ------------------------------------------------------------------------

const colours = ["#3b5bdb", "#2b8a3e", "#e67700", "#c92a2a", "#862e9c"];

// A line chart of columns `series` ([[column, label], ...]) of the history.
function chart(title, hist, series, format) {
  const W = 560, H = 180, L = 56, B = 22, T = 8, R = 8;
  const cols = hist.columns;
  const at = (c) => cols.indexOf(c);
  const rows = hist.samples;
  const el = h("div", { class: "chart" }, h("h3", {}, title));
  if (rows.length < 2) {
    el.append(h("p", { class: "muted" }, "Collecting: a sample every " +
      (hist.interval_ms / 1000) + " s."));
    return el;
  }
  const t0 = rows[0][0], t1 = rows[rows.length - 1][0];
  let max = 0;
  for (const [c] of series) for (const r of rows) max = Math.max(max, r[at(c)]);
  // Four steps of 1, 2 or 5 times a power of ten (at least 1 each).
  const rough = Math.max(max * 1.05 / 4, 1);
  const power = Math.pow(10, Math.floor(Math.log10(rough)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((x) => x >= rough);
  max = step * 4;
  const x = (t) => L + (W - L - R) * (t1 > t0 ? (t - t0) / (t1 - t0) : 0);
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const g = svg("svg", { viewBox: "0 0 " + W + " " + H });
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    g.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#e3e6ec" }));
    const label = svg("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end",
                                "font-size": 10, fill: "#6b7385" });
    label.textContent = format(v);
    g.append(label);
  }
  for (const [t, anchor] of [[t0, "start"], [t1, "end"]]) {
    const label = svg("text", { x: x(t), y: H - 6, "text-anchor": anchor,
                                "font-size": 10, fill: "#6b7385" });
    label.textContent = new Date(t).toLocaleTimeString();
    g.append(label);
  }
  series.forEach(([c], i) => {
    const points = rows.map((r) => x(r[0]).toFixed(1) + "," + y(r[at(c)]).toFixed(1));
    g.append(svg("polyline", { points: points.join(" "), fill: "none",
                               stroke: colours[i % colours.length], "stroke-width": 1.5 }));
  });
  el.append(g, h("div", { class: "legend" }, series.map(([c, name], i) =>
    h("span", {}, h("i", { style: "background:" + colours[i % colours.length] }),
      name + " " + format(rows[rows.length - 1][at(c)])))));
  return el;
}

async function drawCharts() {
  const hist = await get("/api/history");
  view.replaceChildren(h("h2", {}, "The last hour"), h("div", { class: "charts", id: "charts" },
    chart("Tasks finished per second", hist, [["tasks_per_s", "tasks/s"]], (v) => v.toFixed(1)),
    chart("Actors by state", hist, [["actors_alive", "alive"], ["actors_pending", "pending"],
      ["actors_restarting", "restarting"], ["actors_dead", "dead"]], (v) => Math.round(v)),
    chart("Object store bytes", hist, [["store_bytes", "bytes"]], bytes),
    chart("Nodes alive", hist, [["nodes_alive", "nodes"]], (v) => Math.round(v))));
}

// -- timeline ----------------------------------------------------------------------

const timelineQuery = { window: 60 };
const palette = ["#3b5bdb", "#2b8a3e", "#e67700", "#862e9c", "#0b7285", "#5c940d",
                 "#d6336c", "#5f3dc4", "#a61e4d", "#1864ab", "#087f5b", "#e8590c"];

function colourOf(name, names) {
  if (!names.has(name)) names.set(name, palette[names.size % palette.length]);
  return names.get(name);
}

function duration(us) {
  return us >= 1e6 ? (us / 1e6).toFixed(2) + " s" : (us / 1e3).toFixed(1) + " ms";
}

// Greedy lanes for slices that may overlap: each goes in the first lane free
// at its start. Returns the lane of each, in the order given.
function lanes(slices) {
  const ends = [];
  return slices.map((s) => {
    let i = ends.findIndex((e) => e <= s.start_us);
    if (i < 0) { i = ends.length; ends.push(0); }
    ends[i] = Math.max(s.end_us, s.start_us + 1);
    return i;
  });
}

// A row per worker, under its node, with a slice per attempt that ran in
// the window; under each node, its object transfers, in lanes.
function timelineChart(t) {
  const W = 1200, L = 190, R = 10, ROW = 18, HEAD = 20, AXIS = 22;
  const t0 = t.since_us, t1 = t.now_us;
  const x = (us) => L + (W - L - R) * Math.min(Math.max((us - t0) / (t1 - t0), 0), 1);
  const nodes = new Map();
  const node = (id) => {
    if (!nodes.has(id)) nodes.set(id, { workers: new Map(), transfers: [] });
    return nodes.get(id);
  };
  // A task's row is its worker's; an actor call's, its actor's instance's.
  const nil = "00000000000000000000000000000000";
  for (const a of t.tasks) {
    const n = node(a.node);
    const actor = a.worker === nil && a.actor;
    const key = actor ? "actor " + a.actor + " " + a.pid : "worker " + a.worker;
    if (!n.workers.has(key))
      n.workers.set(key, { actor: !!actor, slices: [],
                           label: (actor ? "actor " + short(a.actor) : "worker " + short(a.worker)) +
                           (a.pid ? " (pid " + a.pid + ")" : "") });
    n.workers.get(key).slices.push(a);
  }
  for (const tr of t.transfers) node(tr.to).transfers.push(tr);
  // Under each node: its workers, its object transfers, then its actors
  // (there may be many).
  const rows = [];
  for (const id of [...nodes.keys()].sort()) {
    const n = nodes.get(id);
    rows.push({ kind: "node", label: "node " + short(id) });
    const of = (actors) => [...n.workers.values()].filter((w) => w.actor === actors)
      .map((w) => ({ kind: "worker", label: w.label, slices: w.slices }));
    rows.push(...of(false));
    if (n.transfers.length) {
      n.transfers.sort((p, q) => p.start_us - q.start_us);
      const lane = lanes(n.transfers);
      const count = Math.max(...lane) + 1;
      for (let i = 0; i < count; i++)
        rows.push({ kind: "transfers", label: i ? "" : "object transfers",
                    transfers: n.transfers.filter((_, k) => lane[k] === i) });
    }
    rows.push(...of(true));
  }
  let height = AXIS;
  for (const r of rows) height += r.kind === "node" ? HEAD : ROW;
  const g = svg("svg", { viewBox: "0 0 " + W + " " + height, id: "timeline-chart" });
  const text = (x0, y0, s, attrs) => {
    const el = svg("text", Object.assign({ x: x0, y: y0, "font-size": 11, fill: "#1d2330" },
                                         attrs || {}));
    el.textContent = s;
    return el;
  };
  for (let i = 0; i <= 6; i++) {
    const us = t0 + ((t1 - t0) * i) / 6;
    g.append(svg("line", { x1: x(us), x2: x(us), y1: 0, y2: height - AXIS,
                           stroke: "#e3e6ec" }),
             text(x(us), height - 6, i === 6 ? "now" :
                  "−" + Math.round((t1 - us) / 1e6) + " s",
                  { "text-anchor": i === 0 ? "start" : i === 6 ? "end" : "middle",
                    fill: "#6b7385", "font-size": 10 }));
  }
  const names = new Map();
  let y = 0;
  for (const r of rows) {
    if (r.kind === "node") {
      g.append(svg("rect", { x: 0, y: y, width: W, height: HEAD, fill: "#eef0f4" }),
               text(6, y + 14, r.label, { "font-weight": 600 }));
      y += HEAD;
      continue;
    }
    g.append(text(16, y + 13, r.label, { fill: "#6b7385" }));
    for (const a of r.slices || []) {
      const end = a.end_us || t1;
      const rect = svg("rect", { x: x(a.start_us), y: y + 2, height: ROW - 4, rx: 2,
        width: Math.max(x(end) - x(a.start_us), 1.5), fill: colourOf(a.name, names),
        class: "slice" + (a.error ? " failed" : "") });
      const tip = svg("title");
      tip.textContent = a.name + " (attempt " + a.attempt + ") " +
        (a.end_us ? duration(a.end_us - a.start_us) : "running") +
        (a.error ? " · " + a.error : "");
      rect.append(tip);
      g.append(rect);
    }
    for (const tr of r.transfers || []) {
      const rect = svg("rect", { x: x(tr.start_us), y: y + 3, height: ROW - 6, rx: 2,
        width: Math.max(x(tr.end_us) - x(tr.start_us), 1.5),
        fill: tr.error ? "#c92a2a" : "#868e96", class: "transfer" });
      const tip = svg("title");
      tip.textContent = bytes(tr.bytes) + " of object " + short(tr.object) + " from node " +
        short(tr.from) + " in " + duration(tr.end_us - tr.start_us) +
        (tr.error ? " · " + tr.error : "");
      rect.append(tip);
      g.append(rect);
    }
    y += ROW;
  }
  const legend = h("div", { class: "legend" }, [...names].map(([name, c]) =>
    h("span", {}, h("i", { style: "background:" + c }), name)));
  return h("div", { class: "chart timeline" }, g, legend);
}

async function drawTimeline() {
  const t = await get("/api/timeline?window=" + timelineQuery.window);
  const tasks = new Set(t.tasks.map((a) => a.task)).size;
  const choose = h("select", { id: "timeline-window", onchange: (e) => {
    timelineQuery.window = Number(e.target.value); route(); } },
    [[10, "10 s"], [60, "1 min"], [300, "5 min"], [900, "15 min"], [3600, "1 h"]].map(
      ([v, label]) => h("option", { value: v, selected: v === timelineQuery.window }, label)));
  const notes = [];
  if (t.truncated)
    notes.push("Only the first " + t.tasks.length + " attempts of the window are drawn; " +
               "pick a shorter one, or write the whole trace with prism timeline.");
  if (t.dropped_events || t.forgotten_tasks)
    notes.push("Not every task is here: " + t.dropped_events + " events were dropped, and " +
               t.forgotten_tasks + " tasks forgotten to stay within the head's bound.");
  view.replaceChildren(
    h("h2", {}, "Timeline"),
    h("div", { class: "toolbar" }, "The last ", choose,
      h("span", { class: "muted", id: "timeline-summary" }, t.tasks.length + " attempts of " +
        tasks + " tasks, " + t.transfers.length + " object transfers")),
    notes.map((n) => h("p", { class: "muted" }, n)),
    t.tasks.length || t.transfers.length ? timelineChart(t)
      : h("p", { class: "muted" }, "No tasks in this window. Drivers record task events " +
          "with config::task_events (or PRISM_TASK_EVENTS=1)."),
    h("p", { class: "muted" }, "The whole trace, with arrows from each submission to its " +
      "start, opens in Perfetto: prism timeline -o trace.json."));
}

// -- routing -----------------------------------------------------------------------

function route() {
  generation++;
  clearTimeout(timer);
  problem("");
  const parts = (location.hash || "#/overview").slice(2).split("/");
  for (const a of document.querySelectorAll("header nav a"))
    a.classList.toggle("here", a.id === "nav-" + (parts[0] === "submitted" ? "jobs" : parts[0]));
  if (parts[0] === "actors") return showActors();
  if (parts[0] === "jobs" && parts[1]) return showJob(decodeURIComponent(parts[1]));
  if (parts[0] === "jobs") return every(3000, drawJobs);
  if (parts[0] === "submitted" && parts[1]) return showSubmitted(decodeURIComponent(parts[1]));
  if (parts[0] === "charts") return every(5000, drawCharts);
  if (parts[0] === "trees") return every(2000, drawTrees);
  if (parts[0] === "timeline") return every(5000, drawTimeline);
  return every(2000, drawOverview);
}

window.addEventListener("hashchange", route);
route();
