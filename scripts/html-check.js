// Checks a launchguard HTML report from inside the page, in headless Chromium (scripts/check-html.sh
// and tests/cli/html.rs append it to a copy of the report). Writes its findings as JSON into
// <body data-check="...">, which `chromium --dump-dom` prints:
//   overflow: elements wider than the page (outside a scrolling box), and the page's own overflow
//   clipped: SVG texts that stick out of their SVG
//   overlaps: pairs of SVG texts of one SVG that overlap
//   small: SVG texts drawn smaller than 9 px
//   zoom: the first timeline's range before and after a wheel step, a key press and a reset
//   hover: per timeline with kernel names, what the readout says with the cursor on a kernel
(function () {
  "use strict";
  var out = { width: document.documentElement.clientWidth, overflow: [], clipped: [], overlaps: [], small: [], zoom: null };
  var W = document.documentElement.clientWidth;
  function name(e) {
    return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.getAttribute("class") ? "." + e.getAttribute("class").split(" ").join(".") : "") + " «" + (e.textContent || "").trim().slice(0, 40) + "»";
  }
  if (document.documentElement.scrollWidth > W + 1) out.overflow.push("the page is " + document.documentElement.scrollWidth + " px wide in " + W);
  document.querySelectorAll("body *").forEach(function (e) {
    if (e.closest(".scroll") || e.closest("svg") && e.tagName.toLowerCase() !== "svg") return;
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 1) out.overflow.push(name(e) + " ends at " + Math.round(r.right));
  });
  document.querySelectorAll("svg").forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    if (!box.width) return;
    var texts = Array.prototype.filter.call(svg.querySelectorAll("text"), function (t) { return t.textContent.trim() !== ""; });
    var rects = texts.map(function (t) { return t.getBoundingClientRect(); });
    texts.forEach(function (t, i) {
      var r = rects[i];
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) out.clipped.push(name(t));
      // Text height in CSS px (the box of a text line is about 1.2 × the font size).
      if (r.height > 0 && r.height < 9 * 1.1) out.small.push(name(t) + " " + r.height.toFixed(1) + " px");
      for (var j = i + 1; j < texts.length; j++) {
        var q = rects[j];
        var ox = Math.min(r.right, q.right) - Math.max(r.left, q.left), oy = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
        if (ox > 1 && oy > 1) out.overlaps.push(name(t) + " × " + name(texts[j]));
      }
    });
  });
  var svg = document.querySelector("svg.timeline");
  if (svg) {
    var range = function () { return svg.getAttribute("data-view").split(",").map(Number); };
    var z = { before: range() };
    var r = svg.getBoundingClientRect();
    svg.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, clientX: r.left + r.width * 0.6, clientY: r.top + r.height / 2, bubbles: true, cancelable: true }));
    z.wheel = range();
    svg.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true, cancelable: true }));
    z.pan = range();
    svg.dispatchEvent(new KeyboardEvent("keydown", { key: "0", bubbles: true, cancelable: true }));
    z.reset = range();
    out.zoom = z;
  }
  // Hovering: on every timeline with kernel names, the cursor over a row's first named kernel
  // (in the range shown); the readout it gives.
  out.hover = [];
  (window.launchguardTimelines || []).forEach(function (t, ti) {
    var hit = null;
    (t.rowY || []).forEach(function (ry) {
      var row = t.data.rows[ry[2]];
      if (hit || !row.names) return;
      var it = row.names[0];
      for (var i = 0; i < it.length; i += 3) {
        var mid = (it[i] + it[i + 1]) / 2;
        if (mid > t.view[0] && mid < t.view[1]) { hit = { t: mid, y: (ry[0] + ry[1]) / 2 }; break; }
      }
    });
    if (!hit) return;
    var box = t.svg.getBoundingClientRect(), scale = box.width / t.width;
    var x = 150 + (hit.t - t.view[0]) / (t.view[1] - t.view[0]) * t.pw;
    t.svg.dispatchEvent(new MouseEvent("mousemove", { clientX: box.left + x * scale, clientY: box.top + hit.y * scale, bubbles: true }));
    out.hover.push({ timeline: ti, label: t.svg.getAttribute("aria-label"), readout: t.readout.textContent });
  });
  document.body.setAttribute("data-check", JSON.stringify(out));
})();
