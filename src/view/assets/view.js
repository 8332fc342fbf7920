// The trends page: one ECharts line chart per figure, one series per suite · target (time axis).
(function () {
  var el = document.getElementById('trend-data');
  if (!el || typeof echarts === 'undefined') return;
  var series = JSON.parse(el.textContent);
  var esc = function (t) { return String(t).replace(/[&<>"']/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); };
  document.querySelectorAll('[data-trend]').forEach(function (box) {
    var key = box.getAttribute('data-trend');
    var chart = echarts.init(box, null, { renderer: 'svg' });
    chart.setOption({
      animation: false,
      tooltip: { trigger: 'item', formatter: function (p) { return esc(p.seriesName) + '<br>' + esc(p.data.date) + '<br>' + esc(box.getAttribute('data-title')) + ': ' + esc(p.data.value[1]) + (key === 'joules_per_correct' ? ' [' + esc(p.data.source) + ']' : ''); } },
      legend: { type: 'scroll', bottom: 0 },
      grid: { left: 60, right: 20, top: 20, bottom: 60 },
      xAxis: { type: 'time' },
      yAxis: { type: 'value', scale: true, name: box.getAttribute('data-title') },
      series: series.map(function (s) {
        return {
          name: s.name, type: 'line', showSymbol: true, connectNulls: false,
          data: s.points.filter(function (p) { return p[key] !== null; }).map(function (p) { return { value: [p.date, p[key]], date: p.date, source: p.energy_source }; }),
        };
      }),
    });
    window.addEventListener('resize', function () { chart.resize(); });
  });
  document.body.setAttribute('data-ready', '1');
})();
