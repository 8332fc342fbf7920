
  // MT-Bench per-category scores, one series per judged arm.
  (function () {
    var judged = runs.filter(function (r) { return r.report.mt_bench_by_category; });
    if (judged.length === 0) return;
    var cats = [];
    judged.forEach(function (r) { Object.keys(r.report.mt_bench_by_category).forEach(function (c) { if (cats.indexOf(c) < 0) cats.push(c); }); });
    chart('chart-mt-bench', {
      grid: { left: 56, right: 24, top: 40, bottom: 40 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      xAxis: { type: 'category', data: cats },
      yAxis: { type: 'value', min: 0, max: 10, name: 'MT-Bench score', nameLocation: 'middle', nameGap: 36 },
      series: judged.map(function (r) {
        return { name: r.label, type: 'bar', data: cats.map(function (c) { var s = r.report.mt_bench_by_category[c]; return s && s.mt_bench_score !== null ? s.mt_bench_score : null; }) };
      }),
    });
  })();
