// The page's one script, no library: timelines a reader can explore (redrawn from the data beside
// each SVG at the page's real width, so text keeps its size; wheel or +/- zooms, drag or the arrow
// keys pan, double-click or 0 resets, buttons jump to presets; hovering names the time and the
// kernel), sortable tables, and at the end a mark that the page was drawn (data-ok = SVGs with a
// size), so that a headless browser test can tell that the script ran without error.
(function () {
  "use strict";
  // The SVG namespace, taken from an SVG of the page (the page names no address).
  var first = document.querySelector("svg"), NS = first ? first.namespaceURI : null;
  var LABEL_W = 150, AXIS_H = 22;

  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function r1(x) { return Math.round(x * 10) / 10; }
  function human(us) {
    var a = Math.abs(us);
    if (a >= 1e6) return (us / 1e6).toFixed(3) + " s";
    if (a >= 1e3) return (us / 1e3).toFixed(2) + " ms";
    return us.toFixed(1) + " µs";
  }
  function axisLabel(us) {
    var a = Math.abs(us);
    if (a >= 1e6) return +(us / 1e6).toPrecision(6) + " s";
    if (a >= 1e3) return +(us / 1e3).toPrecision(6) + " ms";
    return +us.toPrecision(6) + " µs";
  }
  // Labels of evenly spaced ticks (µs): one unit for the axis, the largest tick's (ns under 1 µs,
  // ms from 1,000 µs, s from 1e6), and the decimals the step needs, so that deep in a zoom no two
  // read alike (not "408.529 ms" three times). As charts.rs's axis_labels.
  function unitOf(top) {
    return top >= 1e6 ? [1e-6, " s"] : top >= 1e3 ? [1e-3, " ms"] : top > 0 && top < 1 ? [1e3, " ns"] : [1, " µs"];
  }
  function decimalsFor(step) {
    for (var d = 0; d <= 9; d++) { var p = Math.pow(10, d) * step; if (Math.round(p) >= 1 && Math.abs(p - Math.round(p)) < 1e-6 * p) return d; }
    return 9;
  }
  function tickLabels(list) {
    var top = list.reduce(function (m, t) { return Math.max(m, Math.abs(t)); }, 0), u = unitOf(top), step = Infinity;
    for (var i = 1; i < list.length; i++) step = Math.min(step, (list[i] - list[i - 1]) * u[0]);
    var d = isFinite(step) && step > 0 ? decimalsFor(step) : 0;
    return list.map(function (t) { return (t * u[0]).toFixed(d) + u[1]; });
  }
  // A time under the cursor, to the decimals one pixel (res µs) can tell apart.
  function atLabel(us, res) {
    var u = unitOf(Math.abs(us)), d = Math.max(0, Math.min(9, Math.ceil(-Math.log10(res * u[0]))));
    return (us * u[0]).toFixed(d) + u[1];
  }
  // Round ticks over [lo, hi] (µs), about n of them.
  function ticks(lo, hi, n) {
    if (!(hi > lo)) return [lo];
    var raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
    var out = [];
    for (var k = Math.ceil(lo / step - 1e-9); k <= Math.floor(hi / step + 1e-9); k++) out.push(+(k * step).toPrecision(12));
    return out;
  }
  // Busy fraction per column of [t0, t1) from flattened sorted spans, or from fine columns over
  // the domain.
  function coverage(row, dom, t0, t1, cols) {
    var frac = new Float64Array(cols), dt = (t1 - t0) / cols, i, a, b, k;
    if (row.spans) {
      var s = row.spans, lo = 0, hi = s.length / 2;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (s[2 * mid + 1] <= t0) lo = mid + 1; else hi = mid; }
      for (i = lo; i < s.length / 2 && s[2 * i] < t1; i++) {
        a = (Math.max(s[2 * i], t0) - t0) / dt; b = (Math.min(s[2 * i + 1], t1) - t0) / dt;
        for (k = Math.floor(a); k < b && k < cols; k++) frac[k] += Math.min(b, k + 1) - Math.max(a, k);
      }
    } else if (row.fine) {
      var f = row.fine, n = f.length, fw = (dom[1] - dom[0]) / n;
      for (k = 0; k < cols; k++) {
        var c0 = t0 + k * dt, c1 = c0 + dt, j0 = Math.max(0, Math.floor((c0 - dom[0]) / fw)), j1 = Math.min(n - 1, Math.floor((c1 - dom[0]) / fw));
        var sum = 0;
        for (var j = j0; j <= j1; j++) {
          var f0 = dom[0] + j * fw, ov = Math.min(f0 + fw, c1) - Math.max(f0, c0);
          if (ov > 0) sum += f[j] / 1000 * ov;
        }
        frac[k] = sum / dt;
      }
    }
    return frac;
  }

  function Timeline(box) {
    var self = this;
    this.svg = box.querySelector("svg.timeline");
    this.data = JSON.parse(box.querySelector("script.tldata").textContent);
    this.view = this.data.view.slice();
    // Many rows (many ranks): one set of them at a time, picked in the bar; only it is drawn.
    this.page = 0;
    var pick = box.querySelector("select.tlpage");
    if (pick) pick.addEventListener("change", function () { self.page = +pick.value; self.draw(); });
    this.svg.addEventListener("wheel", function (ev) {
      var p = self.point(ev);
      if (!p.inside) return;
      ev.preventDefault();
      self.zoom(ev.deltaY < 0 ? 0.8 : 1.25, p.t);
    }, { passive: false });
    var drag = null;
    this.svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, view: self.view.slice() }; ev.preventDefault(); });
    window.addEventListener("mouseup", function () { drag = null; });
    this.svg.addEventListener("mousemove", function (ev) {
      if (drag) {
        var px = self.svg.getBoundingClientRect().width / self.width;
        var dt = (drag.x - ev.clientX) / px / self.pw * (drag.view[1] - drag.view[0]);
        self.set(drag.view[0] + dt, drag.view[1] + dt);
      }
      self.hover(ev);
    });
    this.svg.addEventListener("mouseleave", function () { self.cursor.setAttribute("visibility", "hidden"); self.readout.textContent = ""; });
    this.svg.addEventListener("dblclick", function () { self.set(self.data.view[0], self.data.view[1]); });
    this.svg.addEventListener("keydown", function (ev) {
      var w = self.view[1] - self.view[0], mid = (self.view[0] + self.view[1]) / 2;
      if (ev.key === "+" || ev.key === "=") self.zoom(0.5, mid);
      else if (ev.key === "-" || ev.key === "_") self.zoom(2, mid);
      else if (ev.key === "ArrowLeft") self.set(self.view[0] - w / 4, self.view[1] - w / 4);
      else if (ev.key === "ArrowRight") self.set(self.view[0] + w / 4, self.view[1] + w / 4);
      else if (ev.key === "0" || ev.key === "Home") self.set(self.data.view[0], self.data.view[1]);
      else return;
      ev.preventDefault();
    });
    box.querySelectorAll(".tlbar button").forEach(function (b) {
      b.addEventListener("click", function () { self.set(+b.dataset.lo, +b.dataset.hi); });
    });
    this.draw();
  }
  Timeline.prototype.point = function (ev) {
    var r = this.svg.getBoundingClientRect(), x = (ev.clientX - r.left) / r.width * this.width;
    return { x: x, inside: x >= LABEL_W && x <= LABEL_W + this.pw, t: this.view[0] + (x - LABEL_W) / this.pw * (this.view[1] - this.view[0]) };
  };
  Timeline.prototype.zoom = function (factor, at) {
    var lo = at - (at - this.view[0]) * factor, hi = at + (this.view[1] - at) * factor;
    this.set(lo, hi);
  };
  // The range is kept inside the domain and at least 1 µs wide.
  Timeline.prototype.set = function (lo, hi) {
    var d = this.data.domain, w = Math.min(Math.max(hi - lo, 1000), d[1] - d[0]);
    lo = Math.min(Math.max(lo, d[0]), d[1] - w);
    this.view = [lo, lo + w];
    this.draw();
  };
  Timeline.prototype.draw = function () {
    var svg = this.svg, d = this.data, t0 = this.view[0], t1 = this.view[1], dt = t1 - t0;
    // The SVG's own width in CSS pixels: one unit per pixel, text at its size at every width.
    this.width = Math.max(480, Math.round(svg.getBoundingClientRect().width) || 1200);
    var pw = this.pw = this.width - LABEL_W - 10, cols = Math.max(1, Math.floor(pw));
    var x = function (t) { return LABEL_W + Math.min(Math.max((t - t0) / dt * pw, 0), pw); };
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var y = AXIS_H, rows = el("g", { "class": "rows" }), self = this;
    this.rowY = [];
    var shown = d.pages ? d.pages[this.page][1] : d.rows.map(function (_, i) { return i; });
    shown.forEach(function (ri) {
      var r = d.rows[ri];
      self.rowY.push([y, y + r.h, ri]);
      rows.appendChild(el("text", { "class": "rowlabel" + (r.small ? " small" : ""), x: LABEL_W - 6, y: r1(y + r.h / 2 + 4), "text-anchor": "end" }, r.label));
      rows.appendChild(el("rect", { "class": "lane", x: LABEL_W, y: r1(y), width: r1(pw), height: r.h }));
      (r.shade || []).forEach(function (sh) {
        for (var i = 0; i < sh[1].length; i += 2) {
          if (sh[1][i + 1] <= t0 || sh[1][i] >= t1) continue;
          rows.appendChild(el("rect", { "class": sh[0], x: r1(x(sh[1][i])), y: r1(y), width: r1(Math.max(x(sh[1][i + 1]) - x(sh[1][i]), 1.5)), height: r.h }));
        }
      });
      if (r.kind === "cov") {
        var frac = coverage(r, d.domain, t0, t1, cols), path = "";
        for (var k = 0; k < cols; k++) if (frac[k] > 0) path += "M" + (LABEL_W + k + 0.5) + " " + r1(y + r.h) + "v-" + r1(Math.max(Math.min(frac[k], 1) * r.h, 1));
        rows.appendChild(el("path", { "class": r.class, d: path }));
      } else {
        var s = r.spans;
        for (var i = 0; i < s.length; i += 2) {
          if (s[i + 1] <= t0 || s[i] >= t1) continue;
          var m = el("rect", { "class": r.class, x: r1(x(s[i])), y: r1(y), width: r1(Math.max(x(s[i + 1]) - x(s[i]), 1.5)), height: r.h });
          var id = r.ids ? r.ids[i / 2] : i / 2, len = human((s[i + 1] - s[i]) / 1000);
          m.appendChild(el("title", {}, r.tip === "gap" ? "gap " + len + " at " + axisLabel(s[i] / 1000) : r.tip === "launch" ? "launch " + id + ": " + len : "replay " + id + ": GPU span " + len));
          rows.appendChild(m);
        }
      }
      (r.overlay || []).forEach(function (ov) {
        for (var i = 0; i < ov[1].length; i += 2) {
          if (ov[1][i + 1] <= t0 || ov[1][i] >= t1) continue;
          rows.appendChild(el("rect", { "class": ov[0], x: r1(x(ov[1][i])), y: r1(y), width: r1(Math.max(x(ov[1][i + 1]) - x(ov[1][i]), 1)), height: r.h }));
        }
      });
      y += r.h + r.gap;
    });
    var height = y + 4, axis = el("g", { "class": "axis" });
    // Tick labels at least 80 px apart, whatever the width.
    var tks = ticks(t0 / 1000, t1 / 1000, Math.max(2, Math.floor(pw / 80))), labels = tickLabels(tks);
    tks.forEach(function (tk, i) {
      var tx = r1(LABEL_W + (tk * 1000 - t0) / dt * pw);
      axis.appendChild(el("line", { "class": "tick", x1: tx, y1: AXIS_H - 4, x2: tx, y2: r1(height - 4) }));
      axis.appendChild(el("text", { "class": "axis", x: tx, y: AXIS_H - 8, "text-anchor": "middle" }, labels[i]));
    });
    var lines = el("g", { "class": "lines" });
    (d.lines || []).forEach(function (l) {
      if (l[0] < t0 || l[0] > t1) return;
      var ln = el("line", { "class": "vline", x1: r1(x(l[0])), y1: AXIS_H - 4, x2: r1(x(l[0])), y2: r1(height - 4) });
      ln.appendChild(el("title", {}, l[1]));
      lines.appendChild(ln);
    });
    svg.appendChild(axis); svg.appendChild(rows); svg.appendChild(lines);
    this.cursor = el("line", { "class": "cursor", visibility: "hidden", x1: 0, y1: AXIS_H - 4, x2: 0, y2: r1(height - 4) });
    this.readout = el("text", { "class": "readout", x: LABEL_W, y: 10 });
    svg.appendChild(this.cursor); svg.appendChild(this.readout);
    svg.setAttribute("viewBox", "0 0 " + this.width + " " + r1(height));
    svg.setAttribute("data-view", Math.round(t0) + "," + Math.round(t1));
  };
  // The time under the cursor and, on a row with kernel names, the kernel running there.
  Timeline.prototype.hover = function (ev) {
    var p = this.point(ev), r = this.svg.getBoundingClientRect(), y = (ev.clientY - r.top) / r.width * this.width;
    this.cursor.setAttribute("visibility", p.inside ? "visible" : "hidden");
    this.cursor.setAttribute("x1", p.x); this.cursor.setAttribute("x2", p.x);
    if (!p.inside) { this.readout.textContent = ""; return; }
    var text = atLabel(p.t / 1000, (this.view[1] - this.view[0]) / this.pw / 1000), self = this;
    this.rowY.forEach(function (ry) {
      var row = self.data.rows[ry[2]];
      if (!row.names || y < ry[0] || y > ry[1]) return;
      var it = row.names[0], names = row.names[1], slop = (self.view[1] - self.view[0]) / self.pw * 2, best = -1, lo = 0, hi = it.length / 3;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (it[3 * mid] <= p.t + slop) lo = mid + 1; else hi = mid; }
      for (var i = lo - 1; i >= 0 && i >= lo - 64; i--) {
        if (it[3 * i + 1] >= p.t - slop) { best = i; break; }
      }
      if (best >= 0) text += " · " + names[it[3 * best + 2]] + " (" + human((it[3 * best + 1] - it[3 * best]) / 1000) + ")";
    });
    this.readout.textContent = text;
  };

  var timelines = [];
  document.querySelectorAll("div.tl").forEach(function (box) { timelines.push(new Timeline(box)); });
  var redraw = null;
  window.addEventListener("resize", function () {
    clearTimeout(redraw);
    redraw = setTimeout(function () { timelines.forEach(function (t) { t.draw(); }); }, 100);
  });

  // Sortable tables: click a header; numbers by their data-v, text by itself.
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows), num = th.dataset.sort === "num";
        var dir = th.dataset.dir === "desc" ? 1 : -1;
        table.querySelectorAll("th").forEach(function (h) { delete h.dataset.dir; });
        th.dataset.dir = dir === -1 ? "desc" : "asc";
        rows.sort(function (a, b) {
          var x = a.cells[col], z = b.cells[col];
          return num ? dir * (+x.dataset.v - +z.dataset.v) : dir * x.textContent.localeCompare(z.textContent);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  window.launchguardTimelines = timelines;
  var drawn = 0;
  document.querySelectorAll("svg").forEach(function (s) {
    var b = s.getBBox();
    if (b.width > 0 && b.height > 0) drawn++;
  });
  document.body.setAttribute("data-ok", String(drawn));
})();
