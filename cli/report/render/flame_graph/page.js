"use strict";
const started = performance.now();
const data = JSON.parse(document.getElementById("data").textContent);
const $ = id => document.getElementById(id);
const ROW = 18, MIN_SHARE = 0.001, SVG = "http://www.w3.org/2000/svg";

// ---- numbers as people read them
const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
function bytes(v) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let a = Math.abs(v), i = 0;
  while (a >= 1024 && i < units.length - 1) { a /= 1024; i++; }
  const digits = i === 0 ? 0 : a < 10 ? 2 : a < 100 ? 1 : 0;
  return (v < 0 ? "-" : "") + a.toFixed(digits) + " " + units[i];
}
const signedBytes = v => (v < 0 ? "-" : "+") + bytes(Math.abs(v));
const count = v => grouped.format(Math.round(v));
function percent(f) {
  if (!isFinite(f)) return "-";
  const p = 100 * f, a = Math.abs(p);
  return a > 0 && a < 0.1 ? (p < 0 ? "-" : "") + "<0.1%" : p.toFixed(a < 100 ? 1 : 0) + "%";
}
function duration(ns) {
  const a = Math.abs(ns);
  if (a < 1e3) return Math.round(ns) + " ns";
  if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 1 : 0) + " us";
  if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 1 : 0) + " ms";
  if (a < 60e9) return (ns / 1e9).toFixed(a < 1e10 ? 2 : 1) + " s";
  const m = Math.floor(ns / 60e9);
  return m + "m " + String(Math.round((ns - m * 60e9) / 1e9)).padStart(2, "0") + "s";
}

// ---- the data: frames, the tree of stacks (node 0 the root), rows of values
const frames = data.frames, frameCount = frames.length;
const nodeCount = data.nodes.length / 3 + 1;
const main = { parent: new Int32Array(nodeCount), frame: new Int32Array(nodeCount), loc: new Int32Array(nodeCount) };
main.parent[0] = main.frame[0] = main.loc[0] = -1;
for (let i = 1; i < nodeCount; i++) {
  main.parent[i] = i - data.nodes[3 * i - 3]; main.frame[i] = data.nodes[3 * i - 2]; main.loc[i] = data.nodes[3 * i - 1];
}
const stride = 1 + 3 * data.columns.length, rowCount = data.rows.length / stride;
const rowNode = new Int32Array(rowCount);
for (let r = 0; r < rowCount; r++) rowNode[r] = data.rows[r * stride];
const columnCache = new Map();
function column(name) {  // {bytes, count, spread: the variance of bytes} per row, or undefined
  if (!columnCache.has(name)) {
    const c = data.columns.indexOf(name);
    if (c < 0) return undefined;
    const b = new Float64Array(rowCount), n = new Float64Array(rowCount), v = new Float64Array(rowCount);
    for (let r = 0; r < rowCount; r++) {
      const at = r * stride + 1 + 3 * c;
      b[r] = data.rows[at]; n[r] = data.rows[at + 1]; v[r] = data.rows[at + 2];
    }
    columnCache.set(name, { bytes: b, count: n, spread: v });
  }
  return columnCache.get(name);
}
const sum = a => a.reduce((x, y) => x + y, 0);

// ---- colours: a library's (native frames), or a kind's (Java, PHP; the JDK's own Java
// methods apart from the program's); a legend of them
const KIND_COLOURS = { java: "#6cc28e", jit: "#6cc28e", interpreted: "#9fd6ad", inlined: "#8fd3c4",
                       JDK: "#c2e6cb", "java-native": "#8ecae6", php: "#b39ddb", kernel: "#e07a5f" };
const JAVA_KINDS = new Set(["java", "jit", "interpreted", "inlined"]), JDK = /^(java|javax|jdk|sun|com\.sun)\./;
const PALETTE = ["#f2c14e", "#e8735a", "#f0a3b5", "#d9a15b", "#bfa58a", "#f28f3b", "#e3d26f", "#c97b63",
                 "#f5c6a5", "#a89f91"];
const OTHER = "#d6d0c4";
const categories = [], categoryOf = new Int32Array(frameCount);
{
  const ids = new Map();
  frames.forEach(([name, kind, library], f) => {
    const kindName = data.kinds[kind];
    const key = library >= 0 && !(kindName in KIND_COLOURS) ? "lib:" + data.libraries[library]
              : JAVA_KINDS.has(kindName) && JDK.test(name) ? "kind:JDK" : "kind:" + kindName;
    if (!ids.has(key)) {
      ids.set(key, categories.length);
      categories.push({ name: key.slice(key.indexOf(":") + 1), library: key.startsWith("lib:"), through: 0, self: 0 });
    }
    categoryOf[f] = ids.get(key);
  });
  // The libraries most bytes go through get the palette's colours, in that order.
  const allocated = column("allocated").bytes, seen = new Int32Array(categories.length).fill(-1);
  for (let r = 0; r < rowCount; r++) {
    if (rowNode[r] > 0) categories[categoryOf[main.frame[rowNode[r]]]].self += allocated[r];
    for (let n = rowNode[r]; n > 0; n = main.parent[n]) {
      const c = categoryOf[main.frame[n]];
      if (seen[c] !== r) { seen[c] = r; categories[c].through += allocated[r]; }
    }
  }
  const libraries = categories.filter(c => c.library)
    .sort((a, b) => b.through - a.through || b.self - a.self || (a.name < b.name ? -1 : 1));
  libraries.forEach((c, i) => { c.colour = i < PALETTE.length ? PALETTE[i] : OTHER; });
  categories.forEach(c => { if (!c.library) c.colour = KIND_COLOURS[c.name] || OTHER; });
  categories.forEach((c, i) => { c.rank = c.library ? libraries.indexOf(c) : -1; c.id = i; });
}

// ---- callers (inverted): a tree from each row's innermost frame outwards, built once.
// A node per (parent, frame) at most once per step of a path: arrays that long, and
// an open-addressing table of (parent, frame) twice that.
let invertedTree = null;
function inverted() {
  if (invertedTree) return invertedTree;
  let steps = 0;
  for (let r = 0; r < rowCount; r++) for (let n = rowNode[r]; n > 0; n = main.parent[n]) steps++;
  const parent = new Int32Array(steps + 1), frame = new Int32Array(steps + 1), loc = new Int32Array(steps + 1);
  parent[0] = frame[0] = loc[0] = -1;
  let bits = 1;
  while ((1 << bits) < 2 * (steps + 1)) bits++;
  const mask = (1 << bits) - 1, slots = new Int32Array(mask + 1).fill(-1);
  const paths = new Int32Array(steps), pathStart = new Int32Array(rowCount + 1);
  let size = 1, k = 0;
  for (let r = 0; r < rowCount; r++) {
    pathStart[r] = k;
    let at = 0;
    for (let n = rowNode[r]; n > 0; n = main.parent[n]) {
      const f = main.frame[n];
      let h = (Math.imul(at, 0x9E3779B1) ^ Math.imul(f + 1, 0x85EBCA6B)) & mask, id;
      while ((id = slots[h]) >= 0 && !(parent[id] === at && frame[id] === f)) h = (h + 1) & mask;
      if (id < 0) {
        id = size++;
        slots[h] = id; parent[id] = at; frame[id] = f; loc[id] = main.loc[n];
      } else if (loc[id] !== main.loc[n]) {
        loc[id] = -1;  // frames of several places
      }
      paths[k++] = id;
      at = id;
    }
  }
  pathStart[rowCount] = k;
  invertedTree = { parent: parent.slice(0, size), frame: frame.slice(0, size), loc: loc.slice(0, size), paths, pathStart };
  return invertedTree;
}
// Each node's children, by name: node n's are list[start[n]] to list[start[n + 1] - 1].
// Made once per tree.
const frameRank = new Int32Array(frameCount);
Array.from(frames.keys()).sort((a, b) => (frames[a][0] < frames[b][0] ? -1 : frames[a][0] > frames[b][0] ? 1 : a - b))
  .forEach((f, i) => { frameRank[f] = i; });
function children(tree) {
  if (tree.children) return tree.children;
  const size = tree.parent.length, start = new Int32Array(size + 1), list = new Int32Array(Math.max(size - 1, 0));
  for (let n = 1; n < size; n++) start[tree.parent[n] + 1]++;
  for (let n = 0; n < size; n++) start[n + 1] += start[n];
  const next = start.slice(0, size);
  for (let n = 1; n < size; n++) list[next[tree.parent[n]]++] = n;
  const byName = (a, b) => frameRank[tree.frame[a]] - frameRank[tree.frame[b]] || a - b;
  for (let n = 0; n < size; n++) if (start[n + 1] - start[n] > 1) list.subarray(start[n], start[n + 1]).sort(byName);
  tree.children = { start, list };
  return tree.children;
}
// Per node: total bytes, count and variance of bytes of the rows below it (and the
// base's bytes in a diff); self: of the rows ending at it (callees' tree only). A
// time range's values carry no variance (spread: null).
function accumulate(tree, values) {
  const size = tree.parent.length, total = new Float64Array(size), counts = new Float64Array(size);
  const self = new Float64Array(size), selfCounts = new Float64Array(size), base = values.base ? new Float64Array(size) : null;
  const spread = values.spread ? new Float64Array(size) : null, selfSpread = spread ? new Float64Array(size) : null;
  for (let r = 0; r < rowCount; r++) {
    const b = values.bytes[r], n = values.count[r], old = base ? values.base[r] : 0, v = spread ? values.spread[r] : 0;
    if (b === 0 && n === 0 && old === 0) continue;
    if (tree.paths) {
      total[0] += b; counts[0] += n; if (base) base[0] += old; if (spread) spread[0] += v;
      for (let k = tree.pathStart[r]; k < tree.pathStart[r + 1]; k++) {
        const id = tree.paths[k];
        total[id] += b; counts[id] += n; if (base) base[id] += old; if (spread) spread[id] += v;
      }
    } else {
      const at = rowNode[r];
      total[at] += b; counts[at] += n; self[at] += b; selfCounts[at] += n; if (base) base[at] += old;
      if (spread) { spread[at] += v; selfSpread[at] += v; }
    }
  }
  if (!tree.paths)
    for (let n = size - 1; n > 0; n--) {
      const p = tree.parent[n];
      total[p] += total[n]; counts[p] += counts[n]; if (base) base[p] += base[n]; if (spread) spread[p] += spread[n];
    }
  return { total, counts, self, selfCounts, base, spread, selfSpread };
}

// ---- time: the chart's bins, and per row the cells of when its blocks were allocated
// and freed: row r's are cells start[r] to start[r + 1] - 1, freed -1 when not freed.
const time = data.time || null, hasLive = data.columns.includes("live");
const cell = { start: new Int32Array(rowCount + 1) };
{
  const given = data.cells || [];
  const size = given.reduce((n, c) => n + c.length / 4, 0);
  Object.assign(cell, { allocated: new Int32Array(size), freed: new Int32Array(size), bytes: new Float64Array(size),
                        count: new Float64Array(size) });
  let k = 0;
  for (let r = 0; r < rowCount; r++) {
    cell.start[r] = k;
    const c = given[r] || [];
    for (let i = 0, at = 0; i < c.length; i += 4, k++) {
      at += c[i];
      cell.allocated[k] = at;
      cell.freed[k] = c[i + 1] < 0 ? -1 : at + c[i + 1];
      cell.bytes[k] = c[i + 2];
      cell.count[k] = c[i + 3];
    }
  }
  cell.start[rowCount] = k;
}
const binStart = b => time.start + b * time.bin;  // ns from the start of the recording
const timeX = (ns, width) => ((ns - time.start) / (time.bins * time.bin)) * width;  // on a chart `width` wide
// Allocated in bins [from, to]; with `live`, only what was not freed by the end of `to`.
function selected(from, to, live) {
  const b = new Float64Array(rowCount), n = new Float64Array(rowCount);
  for (let r = 0; r < rowCount; r++)
    for (let k = cell.start[r]; k < cell.start[r + 1]; k++) {
      const at = cell.allocated[k], freed = cell.freed[k];
      if (at < from || at > to || (live && freed >= 0 && freed <= to)) continue;
      b[r] += cell.bytes[k]; n[r] += cell.count[k];
    }
  return { bytes: b, count: n };
}
let perBin = null;  // allocated bytes, and live bytes at the end, of each bin
function binTotals() {
  if (perBin) return perBin;
  const allocated = new Float64Array(time.bins), change = new Float64Array(time.bins + 1), live = new Float64Array(time.bins);
  for (let k = 0; k < cell.allocated.length; k++) {
    allocated[cell.allocated[k]] += cell.bytes[k];
    change[cell.allocated[k]] += cell.bytes[k];
    change[cell.freed[k] >= 0 ? cell.freed[k] : time.bins] -= cell.bytes[k];
  }
  for (let b = 0, now = 0; b < time.bins; b++) { now += change[b]; live[b] = now; }
  perBin = { allocated, live };
  return perBin;
}

// ---- state, kept in the URL fragment
const state = { view: data.view, from: null, to: null, search: "", zoom: "", inverted: false, norm: true };
const viewNames = () => data.diff ? data.columns.filter(c => !c.startsWith("base ")) : data.columns;
const seconds = ns => String(+(ns / 1e9).toFixed(9));
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const view = p.get("view");
  if (view && viewNames().includes(view)) state.view = view;
  state.search = p.get("search") || "";
  state.zoom = p.get("zoom") || "";
  state.inverted = p.get("inverted") === "1";
  state.norm = p.get("norm") !== "0";
  state.from = state.to = null;
  const to = parseFloat(p.get("to")), from = parseFloat(p.get("from"));
  if (time && isFinite(to)) {
    state.to = Math.min(time.bins - 1, Math.max(0, Math.round((to * 1e9 - time.start) / time.bin) - 1));
    state.from = isFinite(from) ? Math.min(state.to, Math.max(0, Math.round((from * 1e9 - time.start) / time.bin))) : 0;
    if (state.view === "peak") state.view = hasLive ? "live" : "allocated";
  }
}
function writeHash() {
  const p = new URLSearchParams();
  p.set("view", state.view);
  if (state.to !== null) {
    if (state.from > 0) p.set("from", seconds(binStart(state.from)));
    p.set("to", seconds(binStart(state.to + 1)));
  }
  if (state.search) p.set("search", state.search);
  if (state.zoom) p.set("zoom", state.zoom);
  if (state.inverted) p.set("inverted", "1");
  if (data.diff && !state.norm) p.set("norm", "0");
  history.replaceState(null, "", "#" + p.toString());
}

// ---- what the view shows: values per row and words for them
function viewLabel(view) {
  if (state.to !== null && view !== "peak") {
    const end = duration(binStart(state.to + 1));
    if (state.from === 0) return view === "live" ? "live at " + end : "allocated up to " + end;
    return view === "live" ? "of it, live at " + end : "allocated " + duration(binStart(state.from)) + " to " + end;
  }
  return { allocated: "allocated", live: "live at the end", peak: "live at the peak" }[view];
}
function current() {
  if (state.to !== null) return selected(state.from, state.to, state.view === "live");
  const now = column(state.view);
  if (!data.diff) return now;
  const old = column("base " + state.view).bytes;
  const normalised = state.norm && sum(old) > 0, factor = normalised ? sum(now.bytes) / sum(old) : 1;
  return { bytes: now.bytes, count: now.count, base: old.map(v => v * factor), factor, normalised, baseTotal: sum(old) };
}

// ---- the flame graph
const graph = $("graph"), tip = $("tip");
let shown = null;  // what the last render drew: {tree, acc, whole, values}
function diffColour(now, before) {
  const change = now - before, rel = change / (Math.max(now, before) || 1), t = Math.pow(Math.min(1, Math.abs(rel)), 0.75);
  const to = change > 0 ? [226, 68, 56] : [58, 118, 214], from = [228, 228, 228];
  return "rgb(" + from.map((v, i) => Math.round(v + (to[i] - v) * t)).join(", ") + ")";
}
function matcher() {
  if (!state.search) return null;
  try { return new RegExp(state.search); } catch (e) { return null; }
}
// A frame's name in a path of names: ";" separates them (as in collapsed stacks).
const pathName = f => frames[f][0].replaceAll(";", ":");
// The zoomed node's chain from the root, by the names of its path.
function chainOf(tree, path) {
  const chain = [0];
  if (!path) return chain;
  const kids = children(tree);
  for (const name of path.split(";")) {
    const at = chain[chain.length - 1];
    const next = kids.list.subarray(kids.start[at], kids.start[at + 1]).find(c => pathName(tree.frame[c]) === name);
    if (next === undefined) return [0];
    chain.push(next);
  }
  return chain;
}

function render() {
  const values = current(), tree = state.inverted ? inverted() : main, kids = children(tree);
  const acc = accumulate(tree, values), whole = acc.total[0];
  const chain = chainOf(tree, state.zoom), top = chain[chain.length - 1], width = acc.total[top];
  const re = matcher(), hits = re ? frames.map(f => re.test(f[0])) : null;
  const pixels = graph.clientWidth || 1000;
  const fragment = document.createDocumentFragment(), drawn = new Set();
  let depth = chain.length - 1, hiddenFrames = 0, hiddenBytes = 0;
  const draw = (n, left, share, d, path, above) => {
    const div = document.createElement("div"), f = tree.frame[n];
    const hit = hits !== null && n !== 0 && hits[f];
    div.className = "f" + (hit ? " hit" : "") + (above ? " above" : "");
    div.style.left = left * 100 + "%";
    div.style.width = share * 100 + "%";
    div.style.top = d * ROW + "px";
    div.style.background = data.diff ? diffColour(acc.total[n], acc.base[n]) : n === 0 ? "#d8dee4" : categories[categoryOf[f]].colour;
    div.dataset.n = n;
    div.dataset.path = path;
    div.dataset.share = (acc.total[n] / (whole || 1)).toFixed(4);
    if (data.diff) div.dataset.change = String(Math.round(acc.total[n] - acc.base[n]));
    if (n !== 0) { div.dataset.category = categoryOf[f]; drawn.add(categoryOf[f]); }
    if (share * pixels > 24) div.textContent = n === 0 ? "all: " + bytes(acc.total[0]) : frames[f][0];
    fragment.appendChild(div);
  };
  let path = "";
  chain.slice(0, -1).forEach((n, i) => {
    draw(n, 0, 1, i, path, true);
    path += (i ? ";" : "") + pathName(tree.frame[chain[i + 1]]);
  });
  const walk = (n, left, d, path) => {
    draw(n, left, acc.total[n] / width, d, path, false);
    depth = Math.max(depth, d);
    let x = left;
    for (let i = kids.start[n]; i < kids.start[n + 1]; i++) {
      const c = kids.list[i], share = acc.total[c] / width;
      if (share <= 0) continue;
      if (share < MIN_SHARE) { hiddenFrames++; hiddenBytes += acc.total[c]; }
      else walk(c, x, d + 1, (path ? path + ";" : "") + pathName(tree.frame[c]));
      x += share;
    }
  };
  if (width > 0) walk(top, 0, chain.length - 1, path);
  graph.textContent = "";
  graph.style.height = (width > 0 ? depth + 1 : 0) * ROW + "px";
  graph.appendChild(fragment);
  $("empty").hidden = width > 0;
  shown = { tree, acc, whole, values };

  // The share the search matches: the outermost matching frames, drawn or not.
  let matched = 0;
  if (hits) {
    const visit = n => {
      if (n !== 0 && hits[tree.frame[n]]) { matched += acc.total[n]; return; }
      for (let i = kids.start[n]; i < kids.start[n + 1]; i++) if (acc.total[kids.list[i]] > 0) visit(kids.list[i]);
    };
    visit(0);
  }
  $("match").textContent = re === null ? (state.search ? "not a regular expression" : "")
                                       : "matched " + bytes(matched) + " (" + percent(matched / (whole || 1)) + ")";
  Object.assign($("hidden").dataset, { frames: hiddenFrames, bytes: Math.round(hiddenBytes) });
  $("hidden").textContent = hiddenFrames === 0 ? "" : "not drawn: " + count(hiddenFrames) + " frame" +
    (hiddenFrames === 1 ? "" : "s") + " narrower than " + percent(MIN_SHARE) + " with what they call, " +
    bytes(hiddenBytes) + " (" + percent(hiddenBytes / (width || 1)) + " of the width)";
  status(values, whole);
  legend(values, drawn);
}

// "~1,234 allocations" ("blocks" when live), or "12 samples" when counts are not estimates.
function counted(n) {
  if (data.counts === "samples") return count(n) + " samples";
  return "~" + count(n) + (state.view === "allocated" ? " allocations" : " blocks");
}

function status(values, whole) {
  let text = viewLabel(state.view);
  if (state.view === "peak" && data.peak) text += ", " + duration(data.peak.at) + " into the run";
  text += ": " + bytes(whole) + " in " + counted(sum(values.count));
  if (!data.diff && state.to === null && state.view !== "live" && hasLive) text += " (live at the end: " + bytes(sum(column("live").bytes)) + ")";
  let note = "";
  if (data.diff) {
    const change = whole - values.baseTotal;
    text += "; the base: " + bytes(values.baseTotal) + " (" + signedBytes(change) +
            (values.baseTotal > 0 ? ", " + (change >= 0 ? "+" : "") + percent(change / values.baseTotal) : "") + ")";
    note = values.normalised ? "normalised: the base scaled \u00d7" + values.factor.toFixed(3) +
                                 " to this total, so colours and changes are of shares"
                               : "base as recorded: colours and changes are of bytes";
    let gone = 0, stacks = 0;  // no width in this recording: not drawn
    for (let r = 0; r < rowCount; r++) if (values.bytes[r] === 0 && values.base[r] > 0) { gone += values.base[r]; stacks++; }
    if (stacks) note += "; gone since the base (not drawn): " + count(stacks) + (stacks === 1 ? " stack, " : " stacks, ") + bytes(gone);
  }
  $("total").textContent = text;
  $("total").dataset.bytes = Math.round(whole);
  $("norm-note").textContent = note;
}

function legend(values, drawn) {
  const box = $("legend");
  box.textContent = "";
  if (data.diff) {  // the colour of each change, from gone (-100%) to new
    const key = document.createElement("span"), scale = document.createElement("span");
    const bar = document.createElement("i"), ticks = document.createElement("span");
    key.className = "key"; scale.className = "scale"; bar.className = "bar"; ticks.className = "ticks";
    const stops = [];
    for (let i = 0; i <= 20; i++) { const rel = i / 10 - 1; stops.push(diffColour(1 + Math.min(rel, 0), 1 - Math.max(rel, 0))); }
    bar.style.background = "linear-gradient(90deg, " + stops.join(", ") + ")";
    for (const label of ["gone", "halved", "same", "doubled", "new"]) {
      const tick = document.createElement("span"); tick.textContent = label; ticks.append(tick);
    }
    scale.append(bar, ticks);
    key.append("shrank", scale, "grew");
    key.title = "red: grew, blue: shrank, by the change against the larger of the two values";
    box.append(key);
    return;
  }
  const self = new Float64Array(categories.length);
  for (let r = 0; r < rowCount; r++) if (rowNode[r] > 0) self[categoryOf[main.frame[rowNode[r]]]] += values.bytes[r];
  const total = sum(values.bytes) || 1;
  const listed = categories.filter(c => drawn.has(c.id))
    .sort((a, b) => self[b.id] - self[a.id] || b.through - a.through || (a.name < b.name ? -1 : 1));
  for (const c of listed) {
    const key = document.createElement("span"), swatch = document.createElement("i"), share = document.createElement("small");
    key.className = "key";
    key.dataset.category = c.id;
    swatch.style.background = c.colour;
    share.textContent = self[c.id] > 0 ? percent(self[c.id] / total) : "callers only";
    key.title = (c.library ? "library " : "frames of kind ") + c.name + ": allocates " + bytes(self[c.id]) + " of the view itself";
    key.append(swatch, c.name, share);
    key.onmouseenter = () => {
      graph.classList.add("lit");
      for (const f of graph.children) f.classList.toggle("on", f.dataset.category === String(c.id));
    };
    key.onmouseleave = () => graph.classList.remove("lit");
    box.append(key);
  }
}

// ---- tooltips
function row(table, label, text) {
  const tr = table.insertRow();
  tr.insertCell().textContent = label;
  const td = tr.insertCell();
  td.className = "num";
  td.textContent = text;
}
function showTip(n, event) {
  const { tree, acc, whole } = shown, f = tree.frame[n];
  tip.textContent = "";
  const title = document.createElement("b");
  title.textContent = n === 0 ? "all" : frames[f][0];
  const table = document.createElement("table");
  tip.append(title, table);
  if (n !== 0) {
    const [, kind, library] = frames[f];
    row(table, library >= 0 ? "library" : "kind", library >= 0 ? data.libraries[library] + " (" + data.kinds[kind] + ")" : data.kinds[kind]);
    const loc = tree.loc[n];
    if (loc >= 0) row(table, "source", data.locations[loc]);
  }
  // " ± 1.2 MiB": the interval of a sampled estimate at the report's confidence.
  const margin = v => v > 0 ? " \u00b1 " + bytes(data.interval_z * Math.sqrt(v)) : "";
  const amount = (b, c, v) => bytes(b) + margin(v) + " \u00b7 " + percent(b / (whole || 1)) + " of the view \u00b7 " + counted(c);
  if (data.diff) {
    const now = acc.total[n], before = acc.base[n];
    const factor = shown.values.factor;
    row(table, "new", amount(now, acc.counts[n]));
    row(table, "base", bytes(before) + (shown.values.normalised ? " (normalised: " + bytes(before / factor) + " \u00d7" + factor.toFixed(3) + ")" : ""));
    row(table, "change", signedBytes(now - before) + (before > 0 ? "  " + (now >= before ? "+" : "") + percent((now - before) / before) : "  new"));
  } else {
    row(table, state.inverted ? "through it" : "total", amount(acc.total[n], acc.counts[n], acc.spread && acc.spread[n]));
    if (!state.inverted && acc.self[n] > 0)
      row(table, "self", amount(acc.self[n], acc.selfCounts[n], acc.selfSpread && acc.selfSpread[n]) + " (in it)");
  }
  tip.style.display = "block";
  const x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
  const y = event.clientY + 16 + tip.offsetHeight > window.innerHeight ? event.clientY - tip.offsetHeight - 10 : event.clientY + 16;
  tip.style.left = Math.max(4, x) + "px";
  tip.style.top = Math.max(4, y) + "px";
}
graph.onmousemove = e => {
  const div = e.target.closest(".f");
  if (div) showTip(+div.dataset.n, e); else tip.style.display = "none";
};
graph.onmouseleave = () => { tip.style.display = "none"; };
graph.onclick = e => {
  const div = e.target.closest(".f");
  if (!div) return;
  state.zoom = div.dataset.path;
  update();
};

// ---- the chart: live memory over the run (the most live in each bin), what was allocated per bin
const chart = $("chart"), read = $("chart-read");
const CHART = { top: 16, liveBottom: 88, barTop: 94, barBottom: 112, height: 132 };
let chartX = null, dragFrom = null;
function svg(parent, name, attributes) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
  parent.appendChild(e);
  return e;
}
function drawChart() {
  if (!time) return;
  const w = chart.clientWidth || 1000, { allocated } = binTotals(), high = time.high || null;
  const x = b => (b / time.bins) * w;
  chartX = x;
  chart.textContent = "";
  chart.setAttribute("viewBox", "0 0 " + w + " " + CHART.height);
  const barTop = high ? CHART.barTop : CHART.top;
  const most = Math.max(...allocated, 1);
  let bars = "";
  allocated.forEach((v, b) => {  // a square-root scale: a burst leaves the steady rate in sight
    if (v <= 0) return;
    const h = Math.max(1, Math.sqrt(v / most) * (CHART.barBottom - barTop));
    bars += "M" + x(b).toFixed(1) + " " + (CHART.barBottom - h).toFixed(1) + "h" + Math.max(0.8, x(1) - 0.4).toFixed(1) + "v" + h.toFixed(1) + "h" + (-Math.max(0.8, x(1) - 0.4)).toFixed(1) + "z";
  });
  svg(chart, "path", { d: bars, fill: "#b8c0c8" });
  svg(chart, "text", { x: 4, y: barTop + 10 }).textContent = "allocated per " + duration(time.bin) + ", up to " + bytes(most) + " (square-root scale)";
  let top = 0;
  if (high) {
    top = Math.max(...high, data.peak ? data.peak.bytes : 0, 1);
    const y = v => CHART.liveBottom - (v / top) * (CHART.liveBottom - CHART.top);
    let d = "M0 " + CHART.liveBottom;
    high.forEach((v, b) => { d += "L" + x(b).toFixed(1) + " " + y(v).toFixed(1) + "L" + x(b + 1).toFixed(1) + " " + y(v).toFixed(1); });
    d += "L" + w + " " + CHART.liveBottom + "Z";
    svg(chart, "line", { x1: 0, x2: w, y1: CHART.liveBottom + 0.5, y2: CHART.liveBottom + 0.5, stroke: "#d1d9e0" });
    svg(chart, "path", { d, fill: "rgba(9,105,218,.16)", stroke: "#0969da", "stroke-width": 1.2, "stroke-linejoin": "round" });
    svg(chart, "text", { x: 4, y: CHART.top - 4 }).textContent = "live, up to " + bytes(top) +
      (data.live_overstated ? " (at most: the tracking table overflowed)" : "");
    if (data.peak) {
      const px = Math.min(w - 1, Math.max(1, timeX(data.peak.at, w))), py = y(data.peak.bytes);
      svg(chart, "line", { x1: px, x2: px, y1: CHART.top, y2: CHART.barBottom, stroke: "#d1242f", "stroke-dasharray": "3 3", id: "peak-line" });
      svg(chart, "circle", { cx: px, cy: py, r: 4.5, fill: "#d1242f", stroke: "#fff", "stroke-width": 1.5, id: "peak-mark" });
      const label = svg(chart, "text", { x: px + (px > w * 0.7 ? -8 : 8), y: Math.max(CHART.top + 10, py + 4), class: "peak-label",
                                         "text-anchor": px > w * 0.7 ? "end" : "start" });
      label.textContent = "peak " + bytes(data.peak.bytes) + (data.live_overstated ? " at most" : "") + " at " + duration(data.peak.at);
    }
  }
  const span = time.bins * time.bin, step = tickStep(span / 5);
  for (let t = Math.max(0, Math.ceil(time.start / step) * step); t <= time.start + span; t += step) {
    const at = timeX(t, w);
    svg(chart, "line", { x1: at, x2: at, y1: CHART.barBottom, y2: CHART.barBottom + 4, stroke: "#8c959f" });
    svg(chart, "text", { x: at, y: CHART.height - 4, "text-anchor": at < 20 ? "start" : at > w - 20 ? "end" : "middle" })
      .textContent = t === 0 ? "0" : duration(t);
  }
  if (state.to !== null) {
    const from = dragFrom !== null ? dragFrom : state.from;
    if (state.from === 0 && dragFrom === null) {
      const at = x(state.to + 1);
      svg(chart, "line", { x1: at, x2: at, y1: CHART.top, y2: CHART.barBottom, stroke: "#1f2328", "stroke-width": 2, id: "moment" });
      svg(chart, "text", { x: at + (at > w * 0.7 ? -6 : 6), y: CHART.liveBottom - 6, "text-anchor": at > w * 0.7 ? "end" : "start" })
        .textContent = "live at " + duration(binStart(state.to + 1));
    } else
      svg(chart, "rect", { x: x(from), y: CHART.top, width: Math.max(2, x(state.to + 1) - x(from)), height: CHART.barBottom - CHART.top,
                           fill: "rgba(130,80,223,.14)", stroke: "#8250df", id: "range" });
  }
}
// 1, 2 or 5 times a power of ten, at least `least`.
function tickStep(least) {
  const power = Math.pow(10, Math.floor(Math.log10(least)));
  return [1, 2, 5, 10].map(m => m * power).find(step => step >= least);
}
function chartBin(e) {
  const box = chart.getBoundingClientRect();
  return Math.min(time.bins - 1, Math.max(0, Math.floor(((e.clientX - box.left) / box.width) * time.bins)));
}
chart.onmousedown = e => {
  const start = chartBin(e), startX = e.clientX;
  const move = m => {
    if (Math.abs(m.clientX - startX) < 4) return;
    const b = chartBin(m);
    dragFrom = Math.min(start, b);
    state.to = Math.max(start, b);
    drawChart();
  };
  const up = m => {
    window.removeEventListener("mousemove", move);
    window.removeEventListener("mouseup", up);
    dragFrom = null;
    if (Math.abs(m.clientX - startX) < 4) {  // a click: what was live at that moment (at the peak's mark, the peak)
      const box = chart.getBoundingClientRect();
      const nearPeak = data.peak && Math.abs(startX - box.left - timeX(data.peak.at, box.width)) <= 4;
      if (nearPeak) { state.view = "peak"; state.from = state.to = null; }
      else { state.from = 0; state.to = start; if (hasLive) state.view = "live"; }
    } else {  // a range: what was allocated in it
      const b = chartBin(m);
      state.from = Math.min(start, b); state.to = Math.max(start, b);
      state.view = "allocated";
    }
    state.zoom = "";
    update();
  };
  window.addEventListener("mousemove", move);
  window.addEventListener("mouseup", up);
};
chart.onmousemove = e => {
  const b = chartBin(e), { allocated, live } = binTotals();
  read.textContent = duration(binStart(b)) + " to " + duration(binStart(b + 1)) + ": " +
    (hasLive ? "live at its end " + bytes(live[b]) + ", " : "") + "allocated " + bytes(allocated[b]);
};
const CHART_HINT = "drag for what was allocated in a time range, click for what was live at a moment";
chart.onmouseleave = () => { read.textContent = CHART_HINT; };
read.textContent = CHART_HINT;

// ---- controls
function update() {
  const select = $("view");
  select.textContent = "";
  for (const v of viewNames()) select.add(new Option(viewLabel(v), v));
  select.value = state.view;
  $("whole").hidden = state.to === null;
  $("search").value = state.search;
  $("inverted").checked = state.inverted;
  $("norm").checked = state.norm;
  writeHash();
  drawChart();
  render();
}
$("title").textContent = data.title;
$("about").textContent = data.about || "";
$("chart-box").hidden = !time;
$("norm-box").hidden = !data.diff;
$("view").onchange = e => {
  state.view = e.target.value;
  if (state.view === "peak") state.from = state.to = null;
  update();
};
$("whole").onclick = () => { state.from = state.to = null; update(); };
$("inverted").onchange = e => { state.inverted = e.target.checked; state.zoom = ""; update(); };
$("norm").onchange = e => { state.norm = e.target.checked; update(); };
$("search").oninput = e => { state.search = e.target.value; update(); };
$("reset").onclick = () => { state.zoom = ""; update(); };
document.addEventListener("keydown", e => {
  const typing = e.target.tagName === "INPUT" && e.target.type !== "checkbox";
  if (e.key === "Escape") {
    if (typing) { e.target.blur(); return; }
    if (state.zoom) state.zoom = ""; else state.from = state.to = null;
    update();
  } else if (!typing && e.key === "/") {
    e.preventDefault();
    $("search").focus();
  } else if (!typing && e.key === "i") {
    state.inverted = !state.inverted; state.zoom = ""; update();
  }
});
let resizing = 0;
window.onresize = () => { clearTimeout(resizing); resizing = setTimeout(update, 100); };
window.onhashchange = () => { readHash(); update(); };
readHash();
const loaded = performance.now();
update();
window.nmprofTimings = { load: loaded - started, render: performance.now() - loaded };
document.body.dataset.ready = "1";
