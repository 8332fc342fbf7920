
  // Rate sweeps: throughput against p99 TTFT/TPOT (one point per rate, labelled), and J/output token per rate.
  (function () {
    var curves = M.rate_curves || [];
    function rateText(r) { return r === 'inf' ? 'inf' : r + '/s'; }
    function logWanted(ys) {
      var pos = ys.filter(function (v) { return v > 0; });
      return pos.length === ys.length && pos.length > 1 && Math.max.apply(null, pos) / Math.min.apply(null, pos) > 20;
    }
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart="rate-latency"]'), function (el) {
      var c = curves[Number(el.getAttribute('data-curve'))];
      if (!c) return;
      var pick = function (key) {
        return c.points.filter(function (p) { return p.output_throughput !== null && p[key] !== null; }).map(function (p) {
          return { value: [p.output_throughput, p[key]], name: rateText(p.request_rate), point: p };
        });
      };
      var ttft = pick('p99_ttft_ms');
      var tpot = pick('p99_tpot_ms');
      var ys = ttft.concat(tpot).map(function (d) { return d.value[1]; });
      var useLog = logWanted(ys);
      var series = [];
      var label = { show: true, position: 'top', fontSize: 11, formatter: function (p) { return p.name; } };
      if (ttft.length) series.push({ name: 'p99 TTFT', type: 'line', symbolSize: 9, data: ttft, label: label });
      if (tpot.length) series.push({ name: 'p99 TPOT', type: 'line', symbolSize: 9, data: tpot, label: label, lineStyle: { type: 'dashed' } });
      chart(el.id, {
        grid: { left: 64, right: 32, top: 40, bottom: 56 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var q = p.data.point;
          return 'rate ' + rateText(q.request_rate) + '<br>' + q.request_throughput + ' req/s, ' + q.output_throughput + ' output tok/s<br>p99 TTFT ' + fmtMs(q.p99_ttft_ms) + '<br>p99 TPOT ' + fmtMs(q.p99_tpot_ms) + (q.client_bottleneck ? '<br>client-bound (p99 lag > 10 ms)' : '');
        } },
        xAxis: { type: 'value', scale: true, name: 'output throughput, tok/s \u2192', nameLocation: 'middle', nameGap: 32 },
        yAxis: { type: useLog ? 'log' : 'value', scale: true, name: 'p99 latency, ms' + (useLog ? ' (log)' : ''), nameLocation: 'middle', nameGap: 48 },
        series: series,
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart="rate-energy"]'), function (el) {
      var c = curves[Number(el.getAttribute('data-curve'))];
      var kind = el.getAttribute('data-energy');
      if (!c) return;
      var e = c.energy.filter(function (x) { return x.kind === kind && x.drawn; })[0];
      if (!e) return;
      var data = c.points.map(function (p) {
        var mine = p.joules_per_output_token !== null && e.sources.indexOf(p.energy_source) >= 0;
        return mine ? { value: p.joules_per_output_token, point: p, symbol: p.steady_state ? 'circle' : 'emptyCircle' } : null;
      });
      var ys = data.filter(function (d) { return d !== null; }).map(function (d) { return d.value; });
      var useLog = logWanted(ys);
      chart(el.id, {
        grid: { left: 80, right: 32, top: 40, bottom: 56 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var q = p.data.point;
          return 'rate ' + rateText(q.request_rate) + '<br>' + fmtJ(q.joules_per_output_token) + ' per output token [' + q.energy_source + ']<br>' + (q.steady_state ? 'steady-state window' : 'whole run (no usable steady-state window)');
        } },
        xAxis: { type: 'category', data: c.points.map(function (p) { return rateText(p.request_rate); }), name: 'request rate', nameLocation: 'middle', nameGap: 32 },
        yAxis: { type: useLog ? 'log' : 'value', scale: true, name: kind + ' J / output token [' + e.sources.join(', ') + ']' + (useLog ? ' (log)' : ''), nameLocation: 'middle', nameGap: 64,
          axisLabel: { formatter: function (v) { return fmtJ(v); } } },
        series: [{ name: kind + ' J / output token', type: 'line', symbolSize: 9, connectNulls: true, data: data }],
      });
    });
  })();
