// Hover readout on the timelines; then marks the page as drawn (data-ok = SVGs with a size), so a
// headless browser test can tell that the script ran without error and the charts were laid out.
(function () {
  document.querySelectorAll("svg.timeline").forEach(function (svg) {
    var t0 = +svg.dataset.t0Us, t1 = +svg.dataset.t1Us, x0 = +svg.dataset.x0, pw = +svg.dataset.pw;
    var cursor = svg.querySelector(".cursor"), readout = svg.querySelector(".readout");
    svg.addEventListener("mousemove", function (ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      var p = pt.matrixTransform(svg.getScreenCTM().inverse());
      var inside = p.x >= x0 && p.x <= x0 + pw;
      cursor.setAttribute("visibility", inside ? "visible" : "hidden");
      cursor.setAttribute("x1", p.x);
      cursor.setAttribute("x2", p.x);
      var t = t0 + (p.x - x0) / pw * (t1 - t0);
      readout.textContent = !inside ? "" : Math.abs(t) >= 1000 ? (t / 1000).toFixed(3) + " ms" : t.toFixed(1) + " µs";
    });
    svg.addEventListener("mouseleave", function () {
      cursor.setAttribute("visibility", "hidden"); readout.textContent = "";
    });
  });
  var drawn = 0;
  document.querySelectorAll("svg").forEach(function (s) {
    var b = s.getBBox();
    if (b.width > 0 && b.height > 0) drawn++;
  });
  document.body.setAttribute("data-ok", String(drawn));
})();
