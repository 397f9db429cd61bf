// Draws each metric's series from the data embedded in the page: the runs as dots (hollow when
// inconclusive), each level's median as a segment, change points as dashed lines (red: worse),
// reset markers as green lines; a run's details on hover.
(function () {
  const data = JSON.parse(document.getElementById('lg-data').textContent);
  const tip = document.getElementById('lg-tip');
  const NS = 'http://www.w3.org/2000/svg';
  const el = (name, attrs) => {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  };
  const fmt = (v, unit) => unit === '' ? (100 * v).toFixed(1) + '%' : (Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(2)) + ' ' + unit;
  data.series.forEach((s, si) => {
    const runs = new Map(s.runs.map((r, i) => [r.id, Object.assign({ index: i }, r)]));
    s.metrics.forEach((m, mi) => {
      const svg = document.getElementById('lg-chart-' + si + '-' + mi);
      if (!svg) return;
      const W = 900, H = 200, L = 64, R = 12, T = 10, B = 24;
      svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
      const n = Math.max(s.runs.length - 1, 1);
      const vals = m.points.map(p => p[1]);
      let lo = Math.min(...vals), hi = Math.max(...vals);
      if (hi === lo) { hi += Math.abs(hi) * 0.05 || 1; lo -= Math.abs(lo) * 0.05 || 1; }
      const x = id => L + (W - L - R) * runs.get(id).index / n;
      const y = v => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
      for (const v of [lo, (lo + hi) / 2, hi]) {
        svg.appendChild(el('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
        const t = el('text', { x: L - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' });
        t.textContent = fmt(v, m.metric.unit);
        svg.appendChild(t);
      }
      for (const r of s.resets) {
        if (!runs.has(r.run_id) || (r.metric && r.metric !== m.metric.name)) continue;
        svg.appendChild(el('line', { x1: x(r.run_id), x2: x(r.run_id), y1: T, y2: H - B, class: 'reset' }));
      }
      // Level medians between change points.
      const ids = m.points.map(p => p[0]);
      const bounds = [ids[0]].concat(m.changes.map(c => c.run_id));
      m.changes.forEach((c, ci) => {
        svg.appendChild(el('line', { x1: x(c.run_id), x2: x(c.run_id), y1: T, y2: H - B, class: c.worse ? 'cp worse' : 'cp better' }));
        const from = bounds[ci], to = c.previous_run_id;
        svg.appendChild(el('line', { x1: x(from), x2: x(to), y1: y(c.before), y2: y(c.before), class: 'level' }));
        if (ci === m.changes.length - 1) {
          svg.appendChild(el('line', { x1: x(c.run_id), x2: x(ids[ids.length - 1]), y1: y(c.after), y2: y(c.after), class: 'level' }));
        }
      });
      let ok = '', bad = '';
      for (const [id, v] of m.points) {
        const d = 'M' + x(id).toFixed(1) + ' ' + y(v).toFixed(1) + 'h0';
        if (runs.get(id).status === 'ok') ok += d; else bad += d;
      }
      svg.appendChild(el('path', { d: ok, class: 'dots' }));
      svg.appendChild(el('path', { d: bad, class: 'dots out' }));
      const cursor = el('line', { y1: T, y2: H - B, class: 'cursor', visibility: 'hidden' });
      svg.appendChild(cursor);
      svg.addEventListener('mousemove', ev => {
        const box = svg.getBoundingClientRect();
        const px = (ev.clientX - box.left) * W / box.width;
        let best = null;
        for (const [id, v] of m.points) {
          const dx = Math.abs(x(id) - px);
          if (best === null || dx < best.dx) best = { id, v, dx };
        }
        if (!best) return;
        const r = runs.get(best.id);
        cursor.setAttribute('x1', x(best.id));
        cursor.setAttribute('x2', x(best.id));
        cursor.setAttribute('visibility', 'visible');
        const cp = m.changes.find(c => c.run_id === best.id);
        tip.textContent = '';
        const lines = [
          'run #' + r.id + (r.build ? '  build ' + r.build : ''),
          m.metric.name + ' = ' + fmt(best.v, m.metric.unit),
          'recorded ' + r.recorded_at + ', verdict ' + r.verdict + ', ' + r.kind + (r.source ? ' of ' + r.source : ''),
          r.status === 'ok' ? 'counted' : 'left out: ' + r.reason,
        ];
        if (cp) lines.push('change point: ' + fmt(cp.before, m.metric.unit) + ' → ' + fmt(cp.after, m.metric.unit) + (cp.worse ? ' (worse)' : ' (better)') + ', p=' + cp.p_value.toFixed(3));
        for (const line of lines) { const d = document.createElement('div'); d.textContent = line; tip.appendChild(d); }
        tip.style.left = Math.min(ev.pageX + 12, window.scrollX + window.innerWidth - 380) + 'px';
        tip.style.top = (ev.pageY + 12) + 'px';
        tip.style.display = 'block';
      });
      svg.addEventListener('mouseleave', () => { tip.style.display = 'none'; cursor.setAttribute('visibility', 'hidden'); });
    });
  });
})();
