
  // Rate sweeps: p99 TTFT and TPOT, throughput and goodput, and J/output token, each against request rate.
  (function () {
    var curves = M.rate_curves || [];
    function rateText(r) { return r === 'inf' ? 'inf' : r + '/s'; }
    function logWanted(ys) {
      var pos = ys.filter(function (v) { return v > 0; });
      return pos.length === ys.length && pos.length > 1 && Math.max.apply(null, pos) / Math.min.apply(null, pos) > 20;
    }
    function rateAxis(c) { return { type: 'category', data: c.points.map(function (p) { return rateText(p.request_rate); }), name: 'request rate', nameLocation: 'middle', nameGap: 32 }; }
    function perRate(c, key) { return c.points.map(function (p) { return p[key] === null ? null : { value: p[key], point: p }; }); }
    function known(data) { return data.filter(function (d) { return d !== null; }); }
    function tip(p) {
      var q = p.data.point;
      return 'rate ' + rateText(q.request_rate) + '<br>' + q.request_throughput + ' req/s, ' + q.output_throughput + ' output tok/s<br>p99 TTFT ' + fmtMs(q.p99_ttft_ms) + '<br>p99 TPOT ' + fmtMs(q.p99_tpot_ms) +
        '<br>goodput ' + (q.request_goodput === null ? 'n/a' : q.request_goodput + ' req/s') + (q.client_bottleneck ? '<br>client-bound (p99 lag > 10 ms)' : '');
    }
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart="rate-latency"]'), function (el) {
      var c = curves[Number(el.getAttribute('data-curve'))];
      if (!c) return;
      var ttft = perRate(c, 'p99_ttft_ms');
      var tpot = perRate(c, 'p99_tpot_ms');
      var useLog = logWanted(known(ttft).concat(known(tpot)).map(function (d) { return d.value; }));
      var series = [];
      if (known(ttft).length) series.push({ name: 'p99 TTFT', type: 'line', symbolSize: 9, connectNulls: true, data: ttft });
      if (known(tpot).length) series.push({ name: 'p99 TPOT', type: 'line', symbolSize: 9, connectNulls: true, data: tpot, lineStyle: { type: 'dashed' } });
      chart(el.id, {
        grid: { left: 64, right: 32, top: 40, bottom: 56 },
        tooltip: { trigger: 'item', formatter: tip },
        xAxis: rateAxis(c),
        yAxis: { type: useLog ? 'log' : 'value', scale: true, name: 'p99 latency, ms' + (useLog ? ' (log)' : ''), nameLocation: 'middle', nameGap: 48 },
        series: series,
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart="rate-goodput"]'), function (el) {
      var c = curves[Number(el.getAttribute('data-curve'))];
      if (!c) return;
      var series = [{ name: 'throughput', type: 'line', symbolSize: 9, connectNulls: true, data: perRate(c, 'request_throughput') }];
      if (c.goodput.slo) {
        series.push({ name: 'goodput', type: 'line', symbolSize: 9, connectNulls: true, data: perRate(c, 'request_goodput'), lineStyle: { type: 'dashed' } });
        series.push({ name: 'correct goodput', type: 'line', symbolSize: 9, connectNulls: true, data: perRate(c, 'correct_goodput'), lineStyle: { type: 'dotted' } });
      }
      chart(el.id, {
        grid: { left: 64, right: 32, top: 40, bottom: 56 },
        tooltip: { trigger: 'item', formatter: tip },
        xAxis: rateAxis(c),
        yAxis: { type: 'value', min: 0, name: 'requests / s', nameLocation: 'middle', nameGap: 48 },
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
        xAxis: rateAxis(c),
        yAxis: { type: useLog ? 'log' : 'value', scale: true, name: kind + ' J / output token [' + e.sources.join(', ') + ']' + (useLog ? ' (log)' : ''), nameLocation: 'middle', nameGap: 64,
          axisLabel: { formatter: function (v) { return fmtJ(v); } } },
        series: [{ name: kind + ' J / output token', type: 'line', symbolSize: 9, connectNulls: true, data: data }],
      });
    });
  })();
