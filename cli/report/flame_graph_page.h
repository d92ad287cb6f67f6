// The HTML, CSS and script of the flame graph page; the profile's JSON goes between
// the two halves.
#pragma once

namespace nmprof::report {

inline constexpr const char* kFlameGraphPageStart = R"html(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>nmprof flame graph</title>
<style>
body { font: 12px sans-serif; margin: 8px; }
#bar { display: flex; gap: 12px; align-items: center; margin-bottom: 6px; flex-wrap: wrap; }
#graph { position: relative; width: 100%; }
.f { position: absolute; height: 17px; box-sizing: border-box; border: 1px solid #fff; overflow: hidden;
     white-space: nowrap; font: 11px monospace; line-height: 15px; padding-left: 2px; cursor: pointer; }
.f.hit { background: #e040fb !important; }
.native { background: #f4a261; } .c\+\+ { background: #e9c46a; } .kernel { background: #e76f51; }
.interpreted { background: #2a9d8f; } .jit { background: #52b788; } .inlined { background: #95d5b2; } .java { background: #52b788; }
.java-native { background: #8ecae6; } .php { background: #9d8ec7; }
#tip { position: fixed; display: none; background: #fffbe6; border: 1px solid #999; padding: 4px;
       pointer-events: none; white-space: pre; font: 11px monospace; }
</style></head><body>
<div id="bar"><b id="title"></b>
<label>view <select id="view"><option value="allocated">allocated</option><option value="live">live at end</option></select></label>
<label>search <input id="search" placeholder="regular expression"></label>
<span id="match"></span><button id="reset">reset zoom</button><span id="total"></span></div>
<div id="graph"></div><div id="tip"></div>
<script id="data" type="application/json">)html";

inline constexpr const char* kFlameGraphPageEnd = R"html(</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const graph = document.getElementById("graph"), tip = document.getElementById("tip");
const state = { view: data.view, search: "", zoom: "" };
const ROW = 18, MIN_SHARE = 0.001;

function bytes(v) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(v < 10 ? 2 : 1) : v.toFixed(0)) + " " + units[i];
}
function value(node) { return node.v[state.view === "live" ? 2 : 0]; }
// A diff's base recording (nodes carry its values after their own).
function baseValue(node) { return node.v[state.view === "live" ? 6 : 4]; }
function signedBytes(v) { return (v < 0 ? "-" : "+") + bytes(Math.abs(v)); }
// Red as the node grew, green as it shrank, by its change against the larger value.
function diffColour(node) {
  const now = value(node), before = baseValue(node), change = now - before;
  const strength = Math.min(1, Math.abs(change) / (Math.max(now, before) || 1));
  const pale = Math.round(235 - 155 * strength);
  return change > 0 ? `rgb(255,${pale},${pale})` : change < 0 ? `rgb(${pale},255,${pale})` : "rgb(235,235,235)";
}
function count(node) { return node.v[state.view === "live" ? 3 : 1]; }
function pathOf(names) { return names.join(";"); }

// The node a ";"-joined path of names leads to, and the nodes above it.
function find(path) {
  let node = data.root, chain = [data.root];
  if (!path) return chain;
  for (const name of path.split(";")) {
    const next = (node.c || []).find(c => c.n === name);
    if (!next) return [data.root];
    node = next;
    chain.push(node);
  }
  return chain;
}

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("view") === "live" && data.hasLive) state.view = "live";
  if (params.get("view") === "allocated") state.view = "allocated";
  state.search = params.get("search") || "";
  state.zoom = params.get("zoom") || "";
}
function writeHash() {
  const params = new URLSearchParams();
  params.set("view", state.view);
  if (state.search) params.set("search", state.search);
  if (state.zoom) params.set("zoom", state.zoom);
  history.replaceState(null, "", "#" + params.toString());
}

function matcher() {
  if (!state.search) return null;
  try { return new RegExp(state.search); } catch (e) { return null; }
}

function render() {
  graph.textContent = "";
  const chain = find(state.zoom), top = chain[chain.length - 1];
  const whole = value(data.root), width = value(top) || 1, re = matcher();
  let depth = 0, matched = 0;
  const frames = [];
  // The zoomed node's ancestors span the whole width above it.
  chain.slice(0, -1).forEach((node, i) => frames.push([node, 0, 1, i, chain.slice(1, i + 1).map(n => n.n)]));
  const walk = (node, left, d, names, inMatch) => {
    const share = value(node) / width;
    if (share < MIN_SHARE) return;
    const hit = re !== null && node !== data.root && re.test(node.n);
    if (hit && !inMatch) matched += value(node);
    frames.push([node, left, share, d, names, hit]);
    depth = Math.max(depth, d);
    let x = left;
    for (const c of node.c || []) {
      walk(c, x, d + 1, names.concat([c.n]), inMatch || hit);
      x += value(c) / width;
    }
  };
  walk(top, 0, chain.length - 1, chain.slice(1).map(n => n.n), false);
  depth = Math.max(depth, chain.length - 1);
  graph.style.height = (depth + 1) * ROW + "px";
  for (const [node, left, share, d, names, hit] of frames) {
    const div = document.createElement("div");
    div.className = "f " + (data.diff ? "diff" : node.k) + (hit ? " hit" : "");
    if (data.diff) div.style.background = diffColour(node);
    div.style.left = (left * 100) + "%";
    div.style.width = (share * 100) + "%";
    div.style.top = (d * ROW) + "px";
    div.textContent = node.n;
    div.dataset.path = pathOf(names);
    div.dataset.share = (value(node) / (whole || 1)).toFixed(4);
    if (data.diff) div.dataset.change = String(value(node) - baseValue(node));
    div.onclick = () => { state.zoom = div.dataset.path; update(); };
    div.onmousemove = e => {
      tip.textContent = node.n + "\n" + node.k + "\n" + bytes(value(node)) + " in ~" + count(node) + " " +
        (state.view === "live" ? "blocks" : "allocations") + "\n" + (100 * value(node) / (whole || 1)).toFixed(2) + "% of all" +
        (data.diff ? "\nchange " + signedBytes(value(node) - baseValue(node)) + " (base " + bytes(baseValue(node)) + ")" : "");
      tip.style.display = "block";
      tip.style.left = (e.clientX + 12) + "px";
      tip.style.top = (e.clientY + 12) + "px";
    };
    div.onmouseleave = () => { tip.style.display = "none"; };
    graph.appendChild(div);
  }
  document.getElementById("match").textContent =
    re === null ? "" : "matched " + bytes(matched) + " (" + (100 * matched / (whole || 1)).toFixed(1) + "%)";
  document.getElementById("total").textContent = state.view + ": " + bytes(whole) +
    (data.diff ? ", change " + signedBytes(whole - baseValue(data.root)) + " against the base" : "");
}

function update() {
  document.getElementById("view").value = state.view;
  document.getElementById("search").value = state.search;
  writeHash();
  render();
}

document.getElementById("title").textContent = data.title;
document.getElementById("view").disabled = !data.hasLive;
document.getElementById("view").onchange = e => { state.view = e.target.value; update(); };
document.getElementById("search").oninput = e => { state.search = e.target.value; update(); };
document.getElementById("reset").onclick = () => { state.zoom = ""; update(); };
window.onhashchange = () => { readHash(); update(); };
readHash();
update();
</script></body></html>
)html";

}  // namespace nmprof::report
