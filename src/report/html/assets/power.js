
  // Power over time: a line per meter domain (each row's mean watts, drawn as steps), the run's phases shaded.
  (function () {
    var PHASES = { idle: 'rgba(107,114,128,0.16)', warmup: 'rgba(217,119,6,0.16)', scored: 'rgba(37,99,235,0.10)', steady: 'rgba(5,150,105,0.16)' };
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart="power"]'), function (el) {
      var view = (M.energy || [])[Number(el.getAttribute('data-view'))];
      var pt = view && view.power_trace;
      if (!pt) return;
      // Rows are back to back: each one's end, in s since the trace began, is the sum of the lengths so far.
      var ends = [];
      var t = 0;
      pt.rows.forEach(function (r) { t += r[2] / 1000; ends.push(t); });
      var spans = [];
      pt.rows.forEach(function (r, i) {
        var last = spans[spans.length - 1];
        if (last && last.phase === r[1]) last.end = ends[i];
        else spans.push({ phase: r[1], start: i === 0 ? 0 : ends[i - 1], end: ends[i] });
      });
      var series = pt.domains.map(function (d, k) {
        var data = pt.rows.map(function (r, i) { return { value: [ends[i], r[3 + k]], row: r }; });
        data.unshift({ value: [0, pt.rows[0][3 + k]], row: pt.rows[0] });
        return { name: d, type: 'line', step: 'start', showSymbol: false, connectNulls: false, data: data };
      });
      // One legend entry per phase present: an empty series carrying that phase's shaded spans.
      Object.keys(PHASES).forEach(function (p) {
        var mine = spans.filter(function (s) { return s.phase === p; });
        if (!mine.length) return;
        series.push({ name: 'phase: ' + p, type: 'line', data: [], itemStyle: { color: PHASES[p].replace(/[\d.]+\)$/, '0.6)') },
          markArea: { silent: true, itemStyle: { color: PHASES[p] }, data: mine.map(function (s) { return [{ xAxis: s.start }, { xAxis: s.end }]; }) } });
      });
      chart(el.id, {
        grid: { left: 64, right: 24, top: 56, bottom: 48 },
        legend: { type: 'scroll', top: 4, data: series.map(function (x) { return x.markArea ? { name: x.name, icon: 'rect' } : { name: x.name }; }) },
        tooltip: { trigger: 'axis', formatter: function (ps) {
          var row = ps[0] && ps[0].data && ps[0].data.row;
          if (!row) return '';
          return row[0] + ' UTC (row end)<br>phase ' + row[1] + ', ' + row[2] + ' ms' + ps.filter(function (p) { return p.data && p.data.row; }).map(function (p) {
            var w = p.data.value[1];
            return '<br>' + p.seriesName + ': ' + (w === null || w === undefined ? 'n/a' : w.toFixed(2) + ' W');
          }).join('');
        } },
        xAxis: { type: 'value', min: 0, max: t, name: 's since the trace began', nameLocation: 'middle', nameGap: 28,
          axisLabel: { hideOverlap: true, formatter: function (v) { return String(Number(v.toPrecision(3))); } } },
        yAxis: { type: 'value', min: 0, name: 'watts', nameLocation: 'middle', nameGap: 44 },
        series: series,
      });
    });
  })();
