
(function () {
  'use strict';
  var M = JSON.parse(document.getElementById('jb-data').textContent);
  var echarts = window.echarts;
  var PALETTE = ['#2563eb', '#db2777', '#059669', '#d97706', '#7c3aed', '#0891b2', '#dc2626', '#4b5563'];
  var STAGE_COLOURS = { cache: '#10b981', kv: '#3b82f6', graph: '#f59e0b', neural: '#ef4444', none: '#9ca3af' };

  function fmtJ(j) {
    if (j === null || j === undefined) return 'n/a';
    var a = Math.abs(j);
    if (a === 0) return '0 J';
    if (a >= 1000) return (j / 1000).toFixed(2) + ' kJ';
    if (a >= 1) return j.toFixed(2) + ' J';
    if (a >= 1e-3) return (j * 1e3).toFixed(2) + ' mJ';
    return (j * 1e6).toFixed(1) + ' \u00b5J';
  }
  function fmtPct(p) { return p === null || p === undefined ? 'n/a' : p.toFixed(1) + ' %'; }
  function fmtMs(v) { return v === null || v === undefined ? 'n/a' : (Math.round(v * 1000) / 1000) + ' ms'; }
  function fmtUsd(v) { return v === null || v === undefined ? 'n/a' : v >= 0.01 ? '$' + v.toFixed(4) : '$' + v.toPrecision(3); }
  function srcLabel(report) {
    return '[' + report.energy_source + ']' + (report.below_floor_count > 0 ? ' \u26a0 ' + report.below_floor_count + ' below floor' : '');
  }

  var charts = [];
  function chart(id, option) {
    var el = document.getElementById(id);
    if (!el) return;
    var c = echarts.init(el, null, { renderer: 'svg' });
    c.setOption(Object.assign({ animation: false, color: PALETTE, textStyle: { fontFamily: 'system-ui, sans-serif' }, legend: { top: 4 } }, option));
    el.setAttribute('data-rendered', '1');
    charts.push(c);
  }
  window.addEventListener('resize', function () { charts.forEach(function (c) { c.resize(); }); });

  var runs = M.runs;
  var labels = runs.map(function (r) { return r.label; });

  // 1. Accuracy against J/correct, with the Pareto frontier across arms: one chart per kind of energy
  // (measured; modelled or estimated), never both on one axis. The page decides which charts exist.
  var MODELLED = { model: 1, 'model:api': 1, estimate: 1 };
  function energyKind(a) { return MODELLED[String(a.energy_source).replace(/ net$/, '')] ? 'modelled' : 'measured'; }
  Array.prototype.forEach.call(document.querySelectorAll('[data-chart="frontier"]'), function (el) { drawFrontier(el.id, el.getAttribute('data-energy')); });
  function drawFrontier(chartId, kind) {
    var fr = M.frontier.frontiers.energy;
    var byId = {};
    M.frontier.arms.forEach(function (a) { byId[a.id] = a; });
    var optimal = {};
    var withheld = {};
    fr.verdicts.forEach(function (v) { optimal[v.id] = v.optimal; if (v.excluded) withheld[v.id] = 1; });
    var placed = M.frontier.arms.filter(function (a) { return a.joules_per_correct !== null && a.accuracy_pct !== null && energyKind(a) === kind && !withheld[a.id]; });
    var xs = placed.map(function (a) { return a.joules_per_correct; });
    var useLog = xs.length > 1 && Math.min.apply(null, xs) > 0 && Math.max.apply(null, xs) / Math.min.apply(null, xs) > 20;
    var point = function (a) {
      return {
        name: a.id,
        value: [a.joules_per_correct, a.accuracy_pct],
        itemStyle: { color: optimal[a.id] ? '#2563eb' : nd[a.id] ? '#f59e0b' : '#9ca3af' },
        symbolSize: optimal[a.id] ? 16 : 11,
        arm: a,
      };
    };
    var line = fr.frontier.filter(function (id) { return energyKind(byId[id]) === kind; }).map(function (id) { var a = byId[id]; return [a.joules_per_correct, a.accuracy_pct]; })
      .sort(function (p, q) { return p[0] - q[0]; });
    var sources = Object.keys(placed.reduce(function (m, a) { m[a.energy_source] = 1; return m; }, {})).join(', ') || 'none';
    // Error bars: each arm's 95 % intervals (accuracy vertical, J/correct horizontal), when its report has them.
    var ciOf = {};
    runs.forEach(function (r) { if (r.report && r.report.ci) ciOf[r.label] = r.report.ci; });
    var bars = [];
    placed.forEach(function (a) {
      var ci = ciOf[a.id];
      if (!ci) return;
      if (ci.joules_per_correct) bars.push([ci.joules_per_correct.low, a.accuracy_pct], [ci.joules_per_correct.high, a.accuracy_pct], '-');
      if (ci.accuracy_pct) bars.push([a.joules_per_correct, ci.accuracy_pct.low], [a.joules_per_correct, ci.accuracy_pct.high], '-');
    });
    var nd = {};
    (M.sweeps || []).forEach(function (sw) { sw.suites.forEach(function (s) { s.frontiers.energy.not_distinguishable.forEach(function (id) { nd[id] = 1; }); }); });
    chart(chartId, {
      grid: { left: 64, right: 32, top: 36, bottom: 56 },
      tooltip: {
        trigger: 'item',
        formatter: function (p) {
          var a = p.data && p.data.arm;
          if (!a) return '';
          return a.id + '<br>accuracy ' + fmtPct(a.accuracy_pct) + '<br>J/correct ' + fmtJ(a.joules_per_correct) + ' [' + a.energy_source + ']' +
            (a.below_floor_count > 0 ? '<br>\u26a0 ' + a.below_floor_count + ' readings below meter floor' : '') +
            '<br>' + (optimal[a.id] ? 'on the frontier' : nd[a.id] ? 'dominated, but not distinguishable from the frontier (intervals overlap)' : 'dominated');
        },
      },
      legend: { data: ['arms', 'Pareto frontier'].concat(bars.length ? ['95 % intervals'] : []), top: 4 },
      xAxis: { type: useLog ? 'log' : 'value', name: (kind === 'modelled' ? 'modelled ' : 'measured ') + 'J / correct [' + sources + ']' + (useLog ? ' (log)' : '') + ' \u2190 better', nameLocation: 'middle', nameGap: 32, scale: true },
      yAxis: { type: 'value', name: 'accuracy % \u2191', nameLocation: 'middle', nameGap: 44, scale: true, max: function (v) { return Math.min(100, Math.ceil(v.max + 2)); } },
      series: [
        { name: 'arms', type: 'scatter', itemStyle: { color: '#2563eb' }, data: placed.map(point), label: { show: true, position: 'right', formatter: function (p) { return p.name; }, fontSize: 11 } },
        { name: 'Pareto frontier', type: 'line', data: line, symbol: 'none', itemStyle: { color: '#2563eb' }, lineStyle: { type: 'dashed', width: 2, color: '#2563eb' }, silent: true },
      ].concat(bars.length ? [{ name: '95 % intervals', type: 'line', data: bars, symbol: 'none', connectNulls: false, lineStyle: { width: 1, color: '#6b7280' }, silent: true }] : []),
    });
    var unplaced = fr.verdicts.filter(function (v) { return v.excluded; });
    var note = document.getElementById('frontier-note');
    if (note) note.textContent = unplaced.length === 0 ? '' : 'Not placed: ' + unplaced.map(function (v) { return v.id + ' (' + v.excluded + ')'; }).join('; ');
  }

  // 2. Stage distribution (cases) and energy per stage.
  (function () {
    var stages = [];
    runs.forEach(function (r) { Object.keys(r.report.stage_distribution || {}).forEach(function (s) { if (stages.indexOf(s) < 0) stages.push(s); }); });
    chart('chart-stages', {
      grid: { left: 64, right: 24, top: 40, bottom: 40 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      xAxis: { type: 'category', data: labels },
      yAxis: { type: 'value', name: 'cases', nameLocation: 'middle', nameGap: 44 },
      series: stages.map(function (s) {
        return { name: s, type: 'bar', stack: 'cases', itemStyle: { color: STAGE_COLOURS[s] }, data: runs.map(function (r) { return (r.report.stage_distribution || {})[s] || 0; }) };
      }),
    });
    var ej = [];
    runs.forEach(function (r) { stages.forEach(function (s) { var v = (r.report.stage_joules || {})[s]; if (typeof v === 'number') ej.push(v); }); });
    var ejPos = ej.filter(function (v) { return v > 0; });
    var logE = ejPos.length === ej.length && ej.length > 1 && Math.max.apply(null, ej) / Math.min.apply(null, ej) > 100;
    // Stage joules come from the cascade's per-stage cost model (source model) or, without a trace, from the case's own reading.
    var stageSources = Object.keys(runs.reduce(function (m, r) {
      var has = stages.some(function (s) { return typeof (r.report.stage_joules || {})[s] === 'number'; });
      if (has && r.report.energy_source !== 'none') m[r.report.energy_source] = 1;
      return m;
    }, {})).join(', ') || 'none';
    var eMin = logE ? Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, ej)))) : 0;
    chart('chart-stage-energy', {
      grid: { left: 72, right: 24, top: 40, bottom: 40 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: function (v) { return fmtJ(v); } },
      xAxis: { type: 'category', data: stages },
      // Bars on a log axis start at 1 unless told: start them (and the axis) at the decade below the smallest value.
      yAxis: { type: logE ? 'log' : 'value', min: logE ? eMin : undefined, startValue: logE ? eMin : undefined, name: 'J per stage [' + stageSources + ']' + (logE ? ' (log)' : ''), nameLocation: 'middle', nameGap: 56 },
      series: runs.map(function (r) {
        return { name: r.label, type: 'bar', data: stages.map(function (s) { var v = (r.report.stage_joules || {})[s]; return v === undefined ? null : v; }) };
      }),
    });
  })();

  // 3. Latency percentiles and TTFT.
  (function () {
    // Per-case latencies at full precision when the results are known; else the report's whole-ms figures.
    var precise = runs.every(function (r) { return r.case_latency_ms; });
    var keys = [['latency_p50_ms', 'p50', 'p50'], ['latency_p95_ms', 'p95', 'p95'], ['latency_p99_ms', 'p99', 'p99']];
    var hasTtft = runs.some(function (r) { return r.report.ttft_p50_ms !== null && r.report.ttft_p50_ms !== undefined; });
    if (hasTtft) keys.push(['ttft_p50_ms', 'TTFT p50'], ['ttft_p95_ms', 'TTFT p95']);
    chart('chart-latency', {
      grid: { left: 64, right: 24, top: 40, bottom: 40 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: function (v) { return fmtMs(v); } },
      xAxis: { type: 'category', data: keys.map(function (k) { return k[1]; }) },
      yAxis: { type: 'value', name: precise ? 'ms (nearest-rank over cases)' : 'ms (nearest-rank, whole ms)', nameLocation: 'middle', nameGap: 52 },
      series: runs.map(function (r) {
        return { name: r.label, type: 'bar', data: keys.map(function (k) {
          if (precise && k[2] && k[0].indexOf('ttft') < 0) return r.case_latency_ms[k[2]];
          var v = r.report[k[0]]; return v === undefined ? null : v;
        }) };
      }),
    });
  })();

  // 4. Cost, when any run reported it: $/correct and total $ each on their own axis, every bar labelled with its figure.
  (function () {
    var withCost = runs.filter(function (r) { return r.report.total_usd !== null && r.report.total_usd !== undefined; });
    if (withCost.length === 0) return;
    function axis(name, position) { return { type: 'value', position: position, name: name, nameLocation: 'middle', nameGap: 60, axisLabel: { formatter: function (v) { return fmtUsd(v); } } }; }
    var label = { show: true, position: 'top', fontSize: 10, formatter: function (p) { return fmtUsd(p.value); } };
    chart('chart-cost', {
      grid: { left: 80, right: 80, top: 48, bottom: 40 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: function (v) { return fmtUsd(v); } },
      xAxis: { type: 'category', data: withCost.map(function (r) { return r.label; }) },
      yAxis: [axis('$ / correct', 'left'), axis('total $', 'right')],
      series: [
        { name: '$ / correct', type: 'bar', yAxisIndex: 0, barGap: '60%', label: label, data: withCost.map(function (r) { return r.report.usd_per_correct; }) },
        { name: 'total $', type: 'bar', yAxisIndex: 1, label: label, data: withCost.map(function (r) { return r.report.total_usd; }) },
      ],
    });
  })();

  // 4b. Infer arms: decode tok/s median per arm (no accuracy, so not on the frontier). Contaminated arms: no bar.
  (function () {
    var arms = [];
    (M.infer || []).forEach(function (f) { f.arms.forEach(function (a) { arms.push(a); }); });
    if (arms.length === 0) return;
    chart('chart-infer', {
      grid: { left: 72, right: 80, top: 40, bottom: 64 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      xAxis: { type: 'category', data: arms.map(function (a) { return a.id; }), axisLabel: { interval: 0, rotate: arms.length > 4 ? 20 : 0 } },
      // Prefill runs orders of magnitude faster than decode: each gets its own axis.
      yAxis: [
        { type: 'value', name: 'decode tok/s', nameLocation: 'middle', nameGap: 48 },
        { type: 'value', name: 'cold prefill tok/s', nameLocation: 'middle', nameGap: 56, splitLine: { show: false } },
      ],
      series: [
        { name: 'decode tok/s (median of scored runs)', type: 'bar', yAxisIndex: 0, data: arms.map(function (a) { return a.decode_tok_s_median; }) },
        { name: 'cold prefill tok/s (median of cold runs)', type: 'bar', yAxisIndex: 1, data: arms.map(function (a) { return a.prefill_tok_s_cold; }) },
      ],
    });
  })();

  // 5. The case table: search, outcome filter, run filter. At most LIMIT rows drawn at once.
  (function () {
    var LIMIT = 500;
    var body = document.getElementById('case-rows');
    if (!body) return;
    var search = document.getElementById('case-search');
    var filter = document.getElementById('case-filter');
    var runSel = document.getElementById('case-run');
    var count = document.getElementById('case-count');
    labels.forEach(function (l) { var o = document.createElement('option'); o.value = l; o.textContent = l; runSel.appendChild(o); });
    function outcome(c) { return c.error ? 'error' : c.passed === true ? 'correct' : c.passed === false ? 'incorrect' : 'unscored'; }
    var promptsOf = {};
    runs.forEach(function (r) { promptsOf[r.label] = r.prompts; });
    function caseKey(c) { return 'case-' + encodeURIComponent(c.run + '/' + c.id + '/' + c.pass); }
    // What a case's detail lists: each prompt turn (read back from its suite), the expected answer, the
    // answer (each turn's, for a conversation) and the error; or, for the prompt, why it is not shown.
    function detailItems(c) {
      var p = promptsOf[c.run];
      var turns = p && p.turns[c.index];
      var items = [];
      if (turns) {
        turns.forEach(function (t, i) {
          items.push([turns.length > 1 ? 'prompt, turn ' + (i + 1) : 'prompt', t, 'prompt']);
          if (c.turn_answers && turns.length > 1 && i < c.turn_answers.length) items.push(['answer, turn ' + (i + 1), c.turn_answers[i] === null ? '(none)' : c.turn_answers[i], 'answer']);
        });
      } else {
        var why = !p ? 'no per-case results' : p.missing ? p.missing : 'left out to keep this page small (' + p.omitted + ' prompts over its limit); read it in ' + p.source;
        items.push(['prompt', 'not shown: ' + why, 'prompt-missing']);
      }
      items.push(['expected', c.expected === null ? '(unscored: no expected answer)' : c.expected, 'expected']);
      if (c.turn_answers && !(turns && turns.length > 1)) {
        // The prompts are not shown, but the conversation's answers are known: each turn's.
        c.turn_answers.forEach(function (a, i) { items.push(['answer, turn ' + (i + 1), a === null ? '(none)' : a, 'answer']); });
      } else if (!c.turn_answers) items.push(['answer', c.response === null ? '(none)' : c.response, 'answer']);
      items.push(['error', c.error || '\u2014', 'error']);
      return items;
    }
    function openDetail(tr, c, link) {
      var next = tr.nextSibling;
      if (next && next.className === 'case-detail') return next;
      var d = document.createElement('tr');
      d.className = 'case-detail';
      d.id = caseKey(c);
      var cell = document.createElement('td');
      cell.colSpan = tr.children.length;
      var dl = document.createElement('dl');
      detailItems(c).forEach(function (kv) {
        var dt = document.createElement('dt'); dt.textContent = kv[0]; dl.appendChild(dt);
        var dd = document.createElement('dd'); dd.textContent = kv[1]; dd.className = kv[2]; dl.appendChild(dd);
      });
      cell.appendChild(dl);
      d.appendChild(cell);
      tr.parentNode.insertBefore(d, tr.nextSibling);
      link.setAttribute('aria-expanded', 'true');
      return d;
    }
    function td(tr, text, cls) { var el = document.createElement('td'); el.textContent = text; if (cls) el.className = cls; tr.appendChild(el); return el; }
    function draw() {
      var q = search.value.trim().toLowerCase();
      var f = filter.value;
      var rsel = runSel.value;
      var shown = M.cases.filter(function (c) {
        if (rsel !== 'all' && c.run !== rsel) return false;
        if (f === 'below-floor' ? !c.below_floor : f !== 'all' && outcome(c) !== f) return false;
        if (!q) return true;
        var p = promptsOf[c.run];
        var turns = (p && p.turns[c.index]) || [];
        return [c.id, c.dataset, c.stage || '', c.response || '', c.expected || '', c.error || ''].concat(turns).join('\u0001').toLowerCase().indexOf(q) >= 0;
      });
      while (body.firstChild) body.removeChild(body.firstChild);
      shown.slice(0, LIMIT).forEach(function (c) {
        var tr = document.createElement('tr');
        tr.className = 'case ' + outcome(c);
        if (labels.length > 1) td(tr, c.run);
        var idCell = td(tr, '', 'mono');
        // The case id opens its prompt, expected answer, answer and error in a row beneath (text only);
        // its address (#case-…) opens the same row when the page is loaded with it.
        var link = document.createElement('a');
        link.href = '#' + caseKey(c);
        link.textContent = c.id;
        link.className = 'case-link';
        link.setAttribute('aria-expanded', 'false');
        link.addEventListener('click', function (ev) {
          ev.preventDefault();
          var next = tr.nextSibling;
          if (next && next.className === 'case-detail') { next.remove(); link.setAttribute('aria-expanded', 'false'); return; }
          openDetail(tr, c, link);
          try { history.replaceState(null, '', link.getAttribute('href')); } catch (e) { /* a page opened from a sandbox: the row still opens */ }
        });
        tr.setAttribute('data-key', caseKey(c));
        idCell.appendChild(link);
        td(tr, c.dataset);
        td(tr, String(c.pass), 'num');
        td(tr, c.stage || '\u2014');
        td(tr, outcome(c), 'outcome');
        td(tr, fmtJ(c.joules) + ' [' + c.source + ']' + (c.below_floor ? ' \u26a0 below floor' : ''), 'num' + (c.below_floor ? ' warn' : ''));
        td(tr, fmtMs(c.latency_ms), 'num');
        td(tr, c.ttft_ms === null ? '\u2014' : fmtMs(c.ttft_ms), 'num');
        td(tr, c.cost_usd === null ? '\u2014' : fmtUsd(c.cost_usd), 'num');
        td(tr, c.expected === null ? '(unscored)' : c.expected, 'text');
        td(tr, c.error ? c.error : c.response === null ? '' : c.response, 'text');
        body.appendChild(tr);
      });
      count.textContent = shown.length + ' of ' + M.cases.length + ' cases' + (shown.length > LIMIT ? ' (first ' + LIMIT + ' shown)' : '') +
        (M.cases_omitted > 0 ? '; ' + M.cases_omitted + ' more left out of this file' : '');
      count.setAttribute('data-shown', String(shown.length));
    }
    if (labels.length <= 1) { var h = document.getElementById('case-run-head'); if (h) h.remove(); }
    search.addEventListener('input', draw);
    filter.addEventListener('change', draw);
    runSel.addEventListener('change', draw);
    draw();
    // A #case-… address: draw that case's row (narrowing the table to it when it is past the rows drawn) and open it.
    function openFromHash() {
      var key;
      try { key = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
      if (key.indexOf('case-') !== 0) return;
      var c = null;
      for (var i = 0; i < M.cases.length; i++) if (decodeURIComponent(caseKey(M.cases[i])) === key) { c = M.cases[i]; break; }
      if (!c) return;
      var find = function () { var rows = body.querySelectorAll('tr.case'); for (var j = 0; j < rows.length; j++) if (decodeURIComponent(rows[j].getAttribute('data-key')) === key) return rows[j]; return null; };
      var tr = find();
      if (!tr) { search.value = c.id; filter.value = 'all'; runSel.value = labels.length > 1 ? c.run : 'all'; draw(); tr = find(); }
      if (!tr) return;
      var d = openDetail(tr, c, tr.querySelector('a.case-link'));
      d.scrollIntoView({ block: 'center' });
    }
    window.addEventListener('hashchange', openFromHash);
    openFromHash();
  })();

  // A table wider than its box scrolls sideways; a line above it says so while it is cut off.
  (function () {
    var boxes = Array.prototype.slice.call(document.querySelectorAll('div.scroll'));
    var cues = boxes.map(function (box) {
      var cue = document.createElement('p');
      cue.className = 'note scroll-cue';
      cue.textContent = '\u21c6 wider than the window: scroll the table sideways for the other columns';
      box.parentNode.insertBefore(cue, box);
      return cue;
    });
    function update() { boxes.forEach(function (box, i) { cues[i].hidden = box.scrollWidth <= box.clientWidth + 1; }); }
    update();
    window.addEventListener('resize', update);
  })();

  document.body.setAttribute('data-ready', '1');
})();
