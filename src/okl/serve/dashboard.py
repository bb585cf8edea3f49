"""The dashboard page served at ``/``: events/s, the running prequential metric over time, keys in
memory and resident memory, redrawn every second from ``/v1/stats`` (a token is read from the
page's ``#token=...`` fragment, never sent in a URL to the server). Plain HTML + canvas, no
external assets."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>okl serve</title>
<style>
body{font:14px system-ui,sans-serif;margin:20px;color:#222}
.figs{display:flex;gap:28px;margin:10px 0 16px}.fig b{display:block;font-size:22px}
canvas{border:1px solid #ccc;margin:6px 12px 6px 0}
#status{color:#888}
</style></head><body>
<h1>okl serve <small id="learner"></small></h1>
<div class="figs">
 <div class="fig">events/s<b id="rate">-</b></div>
 <div class="fig"><span id="metricname">metric</span><b id="metric">-</b></div>
 <div class="fig">keys in memory<b id="keys">-</b></div>
 <div class="fig">memory<b id="memory">-</b></div>
 <div class="fig">events<b id="events">-</b></div>
</div>
<canvas id="chart-metric" width="560" height="220" data-points="0"></canvas>
<canvas id="chart-rate" width="560" height="220" data-points="0"></canvas>
<p id="status">connecting</p>
<script>
"use strict";
const token = (location.hash.match(/token=([^&]+)/) || [])[1];
const headers = token ? {"Authorization": "Bearer " + decodeURIComponent(token)} : {};
function draw(id, title, pts) {
  const c = document.getElementById(id), g = c.getContext("2d"), W = c.width, H = c.height;
  g.clearRect(0, 0, W, H); g.fillStyle = "#222"; g.fillText(title, 8, 14);
  const ys = pts.map(p => p[1]).filter(v => v !== null && isFinite(v));
  c.dataset.points = String(ys.length);
  if (!ys.length) return;
  let lo = Math.min(...ys), hi = Math.max(...ys); if (hi === lo) { hi += 1; lo -= lo > 0 ? 0 : 1; }
  const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
  g.fillText(hi.toPrecision(3), W - 60, 14); g.fillText(lo.toPrecision(3), W - 60, H - 4);
  g.strokeStyle = "#1565c0"; g.lineWidth = 2; g.beginPath(); let first = true;
  for (const [t, v] of pts) {
    if (v === null || !isFinite(v)) continue;
    const x = 8 + (W - 76) * (t - t0) / (t1 - t0), y = H - 10 - (H - 30) * (v - lo) / (hi - lo);
    if (first) { g.moveTo(x, y); first = false; } else g.lineTo(x, y);
  }
  g.stroke();
  const [tl, vl] = pts.filter(p => p[1] !== null && isFinite(p[1])).pop();  // the latest point, marked
  g.fillStyle = "#1565c0"; g.beginPath();
  g.arc(8 + (W - 76) * (tl - t0) / (t1 - t0), H - 10 - (H - 30) * (vl - lo) / (hi - lo), 3, 0, 2 * Math.PI); g.fill();
}
async function tick() {
  try {
    const r = await fetch("/v1/stats", {headers});
    if (!r.ok) throw new Error("HTTP " + r.status);
    const s = await r.json(), last = s.series[s.series.length - 1] || {};
    document.getElementById("learner").textContent = s.learner + " (" + s.task + ")";
    document.getElementById("metricname").textContent = s.metric.replace(/_/g, " ");
    document.getElementById("rate").textContent = last.events_per_s ?? "-";
    document.getElementById("metric").textContent = s.metric_since_start === null ? "-" : s.metric_since_start.toFixed(4);
    document.getElementById("keys").textContent = s.keys_in_memory;
    document.getElementById("memory").textContent = (s.memory_bytes / 1048576).toFixed(0) + " MiB";
    document.getElementById("events").textContent = s.events;
    const b = document.body;  // (what a test reads: the page updates itself while events arrive)
    if (!b.dataset.firstEvents) b.dataset.firstEvents = String(s.events);
    b.dataset.lastEvents = String(s.events); b.dataset.ticks = String((+b.dataset.ticks || 0) + 1);
    draw("chart-metric", "running " + s.metric.replace(/_/g, " "), s.series.map(p => [p.t, p.metric]));
    draw("chart-rate", "events/s", s.series.map(p => [p.t, p.events_per_s]));
    document.getElementById("status").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) { document.getElementById("status").textContent = "no answer: " + e.message; }
}
tick(); setInterval(tick, 1000);
</script></body></html>
"""
