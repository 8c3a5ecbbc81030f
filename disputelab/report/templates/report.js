/* disputelab report: sortable tables with CSV export, per-topic trajectory plots, the
   episode viewer, and the view server's run filter. Hand-written, no libraries, no
   network.

   Every string from a run (names, utterances, thoughts) reaches the page through
   textContent or setAttribute, never as markup: the data is someone's scenario file or a
   model's output, and either may contain HTML. */
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg"; // a namespace name, never fetched
  var PALETTE = ["#2a5db0", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#e67700",
    "#5c940d", "#364fc7", "#a61e4d"];

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }

  function readJson(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  /* ---- tables: sort by any column, download as CSV ------------------------------- */

  // Any cell's sort key: its number where it starts with one ("65.6 ± 1.9††" sorts as
  // 65.6), else its text. Empty cells and "-" sort last either way.
  function sortKey(v) {
    if (v === null || v === undefined) return { text: "", num: null };
    if (typeof v === "number") return { text: String(v), num: v };
    var text = String(v).trim();
    var num = parseFloat(text.replace(/[^0-9eE+\-.].*$/, ""));
    return { text: text, num: /^[+\-]?[0-9.]/.test(text) && !isNaN(num) ? num : null };
  }

  function compareKeys(x, y, down) {
    var ex = x.text === "" || x.text === "-", ey = y.text === "" || y.text === "-";
    if (ex !== ey) return ex ? 1 : -1;
    var r = x.num !== null && y.num !== null ? x.num - y.num
      : x.text.localeCompare(y.text, undefined, { numeric: true });
    return down ? -r : r;
  }

  function markSorted(th, down) {
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
  }

  function csvField(v) {
    var text = v === null || v === undefined ? "" : String(v);
    // A cell a spreadsheet would run as a formula is written as text.
    if (/^[=@]/.test(text) || /^[+\-][^0-9.]/.test(text)) text = "'" + text;
    return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function toCsv(rows) {
    return rows.map(function (r) { return r.map(csvField).join(","); }).join("\n") + "\n";
  }

  var csvMakers = new WeakMap(); // table -> function giving all its rows as CSV

  function tableCsv(table) {
    var make = csvMakers.get(table);
    if (make) return make();
    return toCsv(Array.prototype.map.call(table.rows, function (row) {
      return Array.prototype.map.call(row.cells, function (c) { return c.textContent.trim(); });
    }));
  }

  function download(name, text) {
    var url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
    var a = el("a");
    a.setAttribute("href", url);
    a.setAttribute("download", name);
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }

  function button(label, onClick) {
    var b = el("button", null, label);
    b.setAttribute("type", "button");
    b.addEventListener("click", onClick);
    return b;
  }

  function csvButton(table) {
    return button("Download CSV", function () {
      download((table.dataset.name || "table") + ".csv", tableCsv(table));
    });
  }

  // A table already in the page: sorting reorders its rows.
  function enhanceTable(table) {
    if (table.dataset.enhanced) return;
    table.dataset.enhanced = "1";
    if (table.tHead && table.tBodies[0]) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
        th.setAttribute("title", "Sort by this column");
        th.addEventListener("click", function () {
          var down = th.getAttribute("aria-sort") === "ascending";
          markSorted(th, down);
          var body = table.tBodies[0];
          Array.prototype.map.call(body.rows, function (row, i) {
            return { row: row, i: i, k: sortKey(row.cells[col] ? row.cells[col].textContent : "") };
          }).sort(function (a, b) {
            return compareKeys(a.k, b.k, down) || a.i - b.i;
          }).forEach(function (r) { body.appendChild(r.row); });
        });
      });
    }
    var tools = el("div", "table-tools");
    tools.appendChild(csvButton(table));
    var holder = table.parentNode.classList.contains("scroll") ? table.parentNode : table;
    holder.parentNode.insertBefore(tools, holder);
  }

  function dataTable(name, head, rows) {
    var table = el("table", "data");
    table.dataset.name = name;
    var thead = table.createTHead().insertRow();
    head.forEach(function (h) { thead.appendChild(el("th", null, h)); });
    var body = table.createTBody();
    rows.forEach(function (r) {
      var tr = body.insertRow();
      r.forEach(function (v) { tr.appendChild(el("td", null, v)); });
    });
    return table;
  }

  // A big table kept as data and shown a page at a time; sorting and CSV cover every row.
  // The first column links each row to the episode viewer.
  function pagedTable(host, data) {
    var PAGE = 100, page = 0, order = data.rows.map(function (_, i) { return i; });
    var table = el("table", "data");
    table.dataset.name = host.dataset.name || "table";
    table.dataset.enhanced = "1";
    var head = table.createTHead().insertRow();
    var body = table.createTBody();
    var info = el("span", "muted");
    var prev = button("\u2039 Previous rows", function () { page--; draw(); });
    var next = button("Next rows \u203a", function () { page++; draw(); });
    data.columns.forEach(function (name, col) {
      var th = el("th", null, name);
      th.setAttribute("title", "Sort by this column");
      th.addEventListener("click", function () {
        var down = th.getAttribute("aria-sort") === "ascending";
        markSorted(th, down);
        var keys = data.rows.map(function (r) { return sortKey(r[col]); });
        order.sort(function (a, b) { return compareKeys(keys[a], keys[b], down) || a - b; });
        page = 0;
        draw();
      });
      head.appendChild(th);
    });
    function draw() {
      var pages = Math.max(1, Math.ceil(order.length / PAGE));
      page = Math.max(0, Math.min(pages - 1, page));
      body.replaceChildren();
      order.slice(page * PAGE, (page + 1) * PAGE).forEach(function (i) {
        var tr = body.insertRow();
        data.rows[i].forEach(function (v, col) {
          var td = el("td", data.columns[col] === "stop_reason" ? "long" : null);
          var text = v === null || v === undefined ? "" : String(v);
          if (col === 0) {
            var a = el("a", null, text);
            a.setAttribute("href", "#episode-" + (i + 1));
            td.appendChild(a);
          } else {
            td.textContent = text;
          }
          tr.appendChild(td);
        });
      });
      info.textContent = order.length ? "rows " + (page * PAGE + 1) + "\u2013" +
        Math.min(order.length, (page + 1) * PAGE) + " of " + order.length : "no rows";
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }
    csvMakers.set(table, function () {
      return toCsv([data.columns].concat(order.map(function (i) { return data.rows[i]; })));
    });
    var tools = el("div", "table-tools");
    [info, prev, next, csvButton(table)].forEach(function (n) { tools.appendChild(n); });
    var scroll = el("div", "scroll tall");
    scroll.appendChild(table);
    host.replaceChildren(tools, scroll);
    draw();
  }

  /* ---- line charts ----------------------------------------------------------------- */

  // spec: {title, xLabel, yLabel, yMin, yMax, series: [{name, pts: [[x, y]], color, dash,
  // width}], marks: [{x, label}], dots: [{x, y, label}]}
  function lineChart(spec) {
    var W = 520, H = 250, L = 46, R = 12, T = 24, B = 36;
    var xs = [], ys = [];
    spec.series.forEach(function (s) { s.pts.forEach(function (p) { xs.push(p[0]); if (p[1] !== null) ys.push(p[1]); }); });
    var xMax = Math.max(1, Math.max.apply(null, xs.concat([0])));
    var yMin = spec.yMin !== undefined ? spec.yMin : Math.min.apply(null, ys.concat([0]));
    var yMax = spec.yMax !== undefined ? spec.yMax : Math.max.apply(null, ys.concat([1]));
    if (yMax === yMin) yMax = yMin + 1;
    function X(x) { return L + (W - L - R) * x / xMax; }
    function Y(y) { return T + (H - T - B) * (1 - (y - yMin) / (yMax - yMin)); }
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    root.appendChild(svg("title")).textContent = spec.title;
    var head = svg("text", { x: L, y: 15, "class": "title" });
    head.textContent = spec.title;
    root.appendChild(head);
    for (var k = 0; k <= 4; k++) {
      var yv = yMin + (yMax - yMin) * k / 4;
      root.appendChild(svg("line", { x1: L, x2: W - R, y1: Y(yv), y2: Y(yv), stroke: "#e3e6ec" }));
      var t = svg("text", { x: L - 6, y: Y(yv) + 4, "text-anchor": "end" });
      t.textContent = +yv.toFixed(2);
      root.appendChild(t);
    }
    var step = Math.max(1, Math.ceil(xMax / 8 / 5) * 5);
    for (var xv = 0; xv <= xMax; xv += step) {
      var tx = svg("text", { x: X(xv), y: H - B + 15, "text-anchor": "middle" });
      tx.textContent = xv;
      root.appendChild(tx);
    }
    var xl = svg("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" });
    xl.textContent = spec.xLabel;
    root.appendChild(xl);
    var yl = svg("text", { x: 12, y: (T + H - B) / 2, transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", "text-anchor": "middle" });
    yl.textContent = spec.yLabel;
    root.appendChild(yl);
    (spec.marks || []).forEach(function (m) {
      var line = svg("line", { x1: X(m.x), x2: X(m.x), y1: T, y2: H - B, stroke: "#e0a800", "stroke-dasharray": "3 3" });
      line.appendChild(svg("title")).textContent = m.label;
      root.appendChild(line);
    });
    spec.series.forEach(function (s) {
      var d = "", pen = "M";
      s.pts.forEach(function (p) {
        if (p[1] === null) { pen = "M"; return; }
        d += pen + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1) + " ";
        pen = "L";
      });
      var path = svg("path", { d: d || "M0 0", fill: "none", stroke: s.color, "stroke-width": s.width || 1.6 });
      if (s.dash) path.setAttribute("stroke-dasharray", s.dash);
      path.appendChild(svg("title")).textContent = s.name;
      root.appendChild(path);
    });
    (spec.dots || []).forEach(function (p) {
      var dot = svg("circle", { cx: X(p.x), cy: Y(p.y), r: 3.2, fill: "#b3261e" });
      dot.appendChild(svg("title")).textContent = p.label;
      root.appendChild(dot);
    });
    var box = el("div", "chart");
    box.appendChild(root);
    box.appendChild(legend(spec.series.map(function (s) { return [s.name, s.color]; })
      .concat((spec.marks || []).length ? [["mediator steps in", "#e0a800"]] : [])
      .concat((spec.dots || []).length ? [["consensus fell", "#b3261e"]] : [])));
    return box;
  }

  function clip(text, n) {
    return text.length > n ? text.slice(0, n - 1) + "\u2026" : text;
  }

  function legend(items) {
    var box = el("div", "legend");
    items.forEach(function (it) {
      var span = el("span");
      var sw = el("span", "swatch");
      sw.style.background = it[1];
      span.appendChild(sw);
      span.appendChild(document.createTextNode(it[0]));
      box.appendChild(span);
    });
    return box;
  }

  /* ---- trajectory plots per topic, mediated vs unmediated -------------------------- */

  function scenarioCharts(select, out, scenarios, charts) {
    scenarios.forEach(function (sc, i) {
      var opt = el("option", null, sc.title + " (" + sc.id + ")");
      opt.value = String(i);
      select.appendChild(opt);
    });
    function draw() {
      out.replaceChildren();
      charts(scenarios[+select.value]).forEach(function (c) { out.appendChild(c); });
    }
    select.addEventListener("change", draw);
    draw();
  }

  function consensusCharts(sc) {
    return sc.topics.map(function (topic, ti) {
      var series = sc.arms.map(function (arm, ai) {
        return {
          name: arm[0] + " (n=" + arm[1] + ")",
          pts: arm[2][ti].map(function (y, x) { return [x, y]; }),
          color: PALETTE[ai % PALETTE.length],
          dash: arm[0] === "unmediated" ? "5 4" : null
        };
      });
      return lineChart({ title: topic[1] + " (" + sc.tracker + ")", xLabel: "party turn", yLabel: "consensus, " + sc.tracker, yMin: 0, yMax: 1, series: series });
    });
  }

  function offerCharts(sc) {
    return sc.terms.map(function (term, ti) {
      var series = sc.series.map(function (s, si) {
        return {
          name: s[0] + " (n=" + s[1] + ")",
          pts: s[2][ti].map(function (y, x) { return [x, y]; }),
          color: PALETTE[si % PALETTE.length],
          dash: s[0].indexOf("unmediated") >= 0 ? "5 4" : null
        };
      });
      return lineChart({ title: term[1] + ": offers (price path)", xLabel: "the party's turn", yLabel: "amount", series: series });
    });
  }

  function topicPlots(meta) {
    var select = document.getElementById("topic-scenario");
    var out = document.getElementById("topic-charts");
    if (!select || !out) return;
    if (meta.topics.length) { scenarioCharts(select, out, meta.topics, consensusCharts); return; }
    if (meta.offers.length) { scenarioCharts(select, out, meta.offers, offerCharts); return; }
    out.appendChild(el("p", "muted", "No finished episode with a consensus trajectory (oracle or tracker) or offers."));
  }

  /* ---- the episode viewer ----------------------------------------------------------- */

  var meta = null, chunks = {}, current = 0;

  function episodeAt(i) {
    var c = Math.floor(i / meta.chunk);
    if (!chunks[c]) chunks[c] = readJson("episodes-" + c); // parsed on first visit only
    return chunks[c][i % meta.chunk];
  }

  function str(i) { return i < 0 ? "" : meta.strings[i]; }

  function namesOf(sc) {
    var names = { mediator: "Mediator" };
    sc.parties.forEach(function (p) { names[p[0]] = p[1]; });
    return names;
  }

  function byTurn(list) {
    var out = {};
    list.forEach(function (e) { (out[e[0]] = out[e[0]] || []).push(e); });
    return out;
  }

  function optionLabel(topic, id) {
    for (var i = 0; i < topic[2].length; i++) if (topic[2][i][0] === id) return topic[2][i][1];
    return id;
  }

  function consensusChart(ep, sc) {
    var series = sc.topics.map(function (t, ti) {
      return { name: t[1], pts: [], color: PALETTE[ti % PALETTE.length] };
    });
    var mean = { name: "mean", pts: [], color: "#1d2330", width: 2.6 };
    var dots = [], marks = [], last = null;
    function add(x, vec) {
      var sum = 0, n = 0;
      vec.forEach(function (v, ti) { series[ti].pts.push([x, v]); if (v !== null) { sum += v; n++; } });
      var m = n ? sum / n : null;
      if (m !== null && last !== null && m < last - 1e-9) dots.push({ x: x, y: m, label: "mean consensus fell to " + m.toFixed(2) + " at party turn " + x });
      mean.pts.push([x, m]);
      if (m !== null) last = m;
    }
    if (ep.init >= 0) add(0, meta.numbers[ep.init]);
    for (var i = 0; i < ep.text.length; i++) {
      if (ep.role[i] === "m") marks.push({ x: ep.pturn[i], label: "mediator after party turn " + ep.pturn[i] });
      if (ep.role[i] === "p" && ep.consensus[i] >= 0) add(ep.pturn[i], meta.numbers[ep.consensus[i]]);
    }
    if (!mean.pts.length) return el("p", "muted", "No oracle consensus recorded for this episode.");
    return lineChart({ title: "Consensus per topic (oracle)", xLabel: "party turn", yLabel: "consensus", yMin: 0, yMax: 1,
      series: series.concat([mean]), marks: marks, dots: dots });
  }

  function stanceTimeline(ep, sc, names) {
    var parties = sc.parties.map(function (p) { return p[0]; });
    var nT = sc.topics.length, last = ep.pturn.length ? ep.pturn[ep.pturn.length - 1] : 0;
    if (!nT || !parties.length || !last) return el("p", "muted", "No stances stated.");
    var rows = [];
    parties.forEach(function (p) { sc.topics.forEach(function (t, ti) { rows.push({ p: p, ti: ti, runs: [], cur: null, from: 0 }); }); });
    function close(r, upto) {
      if (r.cur !== null && upto > r.from) r.runs.push([r.from, upto, r.cur]);
    }
    for (var i = 0; i < ep.text.length; i++) {
      if (ep.role[i] !== "p" || ep.stance[i] < 0) continue;
      var who = str(ep.speaker[i]), vec = meta.stances[ep.stance[i]], x = ep.pturn[i] - 1;
      rows.forEach(function (r) {
        if (r.p !== who || vec[r.ti] === null || vec[r.ti] === r.cur) return;
        close(r, x);
        r.cur = vec[r.ti];
        r.from = x;
      });
    }
    rows.forEach(function (r) { close(r, last); });
    var W = 600, L = 220, R = 10, rowH = 17, T = 22, H = T + rows.length * rowH + 26;
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    root.appendChild(svg("title")).textContent = "Stance per topic over party turns";
    var head = svg("text", { x: 0, y: 14 });
    head.textContent = "Stance per topic (the option each party backs) over party turns";
    root.appendChild(head);
    function X(x) { return L + (W - L - R) * x / last; }
    rows.forEach(function (r, k) {
      var topic = sc.topics[r.ti], y = T + k * rowH;
      var label = svg("text", { x: L - 6, y: y + rowH - 3, "text-anchor": "end" });
      label.textContent = clip(names[r.p] || r.p, 14) + " · " + clip(topic[1], 14);
      label.appendChild(svg("title")).textContent = (names[r.p] || r.p) + " · " + topic[1];
      root.appendChild(label);
      r.runs.forEach(function (run) {
        var idx = topic[2].map(function (o) { return o[0]; }).indexOf(run[2]);
        var rect = svg("rect", { x: X(run[0]), y: y + 1, width: Math.max(0.8, X(run[1]) - X(run[0])), height: rowH - 2,
          fill: PALETTE[(idx < 0 ? 9 : idx) % PALETTE.length] });
        rect.appendChild(svg("title")).textContent = (names[r.p] || r.p) + " · " + topic[1] + ", party turns " +
          (run[0] + 1) + "-" + run[1] + ": " + run[2] + " = " + optionLabel(topic, run[2]);
        root.appendChild(rect);
      });
    });
    var foot = svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" });
    foot.textContent = "party turn (hover a bar for the option's label)";
    root.appendChild(foot);
    var box = el("div", "chart");
    box.appendChild(root);
    var maxOpts = Math.max.apply(null, sc.topics.map(function (t) { return t[2].length; }));
    var items = [];
    for (var o = 0; o < maxOpts; o++) items.push(["option " + (o + 1), PALETTE[o % PALETTE.length]]);
    box.appendChild(legend(items));
    return box;
  }

  function protocolChart(c) {
    var series = c.lines.map(function (line, i) {
      var pts = [];
      for (var k = 0; k + 1 < line[1].length; k += 2) pts.push([line[1][k], line[1][k + 1]]);
      return { name: line[0], pts: pts, color: PALETTE[i % PALETTE.length] };
    });
    return lineChart({ title: c.title, xLabel: "party turn", yLabel: c.y, series: series });
  }

  function facts(pairs) {
    var dl = el("dl", "facts");
    pairs.forEach(function (p) {
      var div = el("div");
      div.appendChild(el("dt", null, p[0]));
      div.appendChild(el("dd", null, p[1]));
      dl.appendChild(div);
    });
    return dl;
  }

  function turnItem(ep, i, names, partyOrder, thoughts, notes) {
    var role = ep.role[i], who = str(ep.speaker[i]);
    var cls = role === "m" ? "mediator" : role === "s" ? "system" : "party party-" + (partyOrder[who] || 0) % 2;
    var li = el("li", "turn " + cls);
    var head = el("div", "who");
    head.appendChild(el("b", null, names[who] || who));
    head.appendChild(document.createTextNode(" · turn " + (i + 1) + " · after party turn " + ep.pturn[i]));
    if (role === "m") head.appendChild(el("span", "badge", "mediator intervention"));
    li.appendChild(head);
    li.appendChild(el("p", "said", str(ep.text[i])));
    if (notes) {
      var ul = el("ul", "notes");
      notes.forEach(function (n) {
        var item = el("li");
        item.appendChild(el("b", null, str(n[1]) + ": "));
        item.appendChild(document.createTextNode(str(n[2])));
        ul.appendChild(item);
      });
      li.appendChild(ul);
    }
    if (thoughts) {
      var box = el("div", "thoughts");
      thoughts.forEach(function (t) {
        var p = el("p", "thought");
        p.appendChild(el("b", null, (names[str(t[1])] || str(t[1])) + " thought: "));
        p.appendChild(document.createTextNode(str(t[2])));
        if (t[3] >= 0 && str(t[3])) p.appendChild(el("span", "muted", " (" + str(t[3]) + ")"));
        box.appendChild(p);
      });
      li.appendChild(box);
    }
    return li;
  }

  function renderEpisode(ep) {
    var sc = meta.scenarios[ep.sc], names = namesOf(sc), partyOrder = {};
    sc.parties.forEach(function (p, k) { partyOrder[p[0]] = k; });
    var out = el("div");
    var head = el("div", "ep-head");
    var h = el("h3", null, ep.id);
    h.id = "ep-id";
    head.appendChild(h);
    head.appendChild(el("p", null, sc.title));
    var agents = Object.keys(ep.agents).map(function (k) { return k + ": " + ep.agents[k]; }).join(", ");
    head.appendChild(facts([["arm", ep.arm || "-"], ["condition", ep.condition], ["protocol", ep.protocol],
      ["agents", agents], ["seed", String(ep.seed)]]));
    var stop = el("p", "stop " + ep.status, ep.status + ": " + (ep.stop || "-"));
    stop.id = "ep-stop";
    head.appendChild(stop);
    var agreed = sc.topics.map(function (t) {
      var o = ep.agreement[t[0]];
      return t[1] + " = " + (o ? optionLabel(t, o) : "-");
    });
    if (Object.keys(ep.agreement).length) head.appendChild(el("p", "muted", "Agreement: " + agreed.join("; ")));
    out.appendChild(head);

    var charts = el("div", "charts");
    charts.appendChild(consensusChart(ep, sc));
    charts.appendChild(stanceTimeline(ep, sc, names));
    ep.charts.forEach(function (c) { charts.appendChild(protocolChart(c)); });
    out.appendChild(charts);

    if (ep.panels.length) {
      out.appendChild(el("h4", null, "Protocol details"));
      out.appendChild(facts(ep.panels.map(function (p) { return [str(p[0]), str(p[1])]; })));
    }
    out.appendChild(el("h4", null, "Model use and cost per role"));
    if (ep.usage.length) {
      var usage = dataTable("usage-" + ep.id, ["role", "model", "calls", "tokens in", "tokens out", "cost (USD)"],
        ep.usage.map(function (u) { return [u[0], u[1], u[2], u[3], u[4], u[5] === null ? "unknown" : u[5].toFixed(4)]; }));
      var scroll = el("div", "scroll");
      scroll.appendChild(usage);
      out.appendChild(scroll);
      enhanceTable(usage);
    } else {
      out.appendChild(el("p", "muted", "No model calls: every seat was played by rules."));
    }
    if (ep.scores.length) {
      out.appendChild(el("h4", null, "Metrics"));
      var scores = dataTable("metrics-" + ep.id, ["metric", "value", "evaluator"],
        ep.scores.map(function (s) { return [str(s[0]), s[1] === null ? "NaN" : String(s[1]), str(s[2])]; }));
      var sc2 = el("div", "scroll");
      sc2.appendChild(scores);
      out.appendChild(sc2);
      enhanceTable(scores);
    }

    var nThoughts = ep.thoughts.length;
    out.appendChild(el("h4", null, "Transcript (" + ep.text.length + " turns" +
      (nThoughts ? ", " + nThoughts + " private thoughts" : "") + ")"));
    var list = el("ol", "transcript");
    var thoughts = byTurn(ep.thoughts), notes = byTurn(ep.notes), groups = {};
    ep.groups.forEach(function (g) { groups[g[0]] = str(g[1]); });
    for (var i = 0; i < ep.text.length; i++) {
      if (groups[i]) { var g = el("li", "group"); g.appendChild(el("h4", null, groups[i])); list.appendChild(g); }
      list.appendChild(turnItem(ep, i, names, partyOrder, thoughts[i], notes[i]));
    }
    out.appendChild(list);
    return out;
  }

  function show(i) {
    if (!meta || !meta.count) return;
    current = Math.max(0, Math.min(meta.count - 1, i));
    var host = document.getElementById("episode");
    host.replaceChildren(renderEpisode(episodeAt(current)));
    document.getElementById("ep-number").value = String(current + 1);
    document.getElementById("prev").disabled = current === 0;
    document.getElementById("next").disabled = current === meta.count - 1;
  }

  function fromHash() {
    var m = /^#episode-(\d+)$/.exec(location.hash);
    return m ? parseInt(m[1], 10) - 1 : null;
  }

  function viewer() {
    var host = document.getElementById("viewer");
    if (!host || !meta.count) return;
    document.getElementById("prev").addEventListener("click", function () { show(current - 1); });
    document.getElementById("next").addEventListener("click", function () { show(current + 1); });
    document.getElementById("ep-number").addEventListener("change", function (e) {
      show(parseInt(e.target.value, 10) - 1);
    });
    var toggle = document.getElementById("show-thoughts");
    toggle.addEventListener("change", function () { host.classList.toggle("show-thoughts", toggle.checked); });
    host.classList.toggle("show-thoughts", toggle.checked);
    window.addEventListener("hashchange", function () {
      var i = fromHash();
      if (i !== null) { show(i); host.scrollIntoView(); }
    });
    var start = fromHash();
    show(start === null ? 0 : start);
  }

  /* ---- the view server's index: filter the runs, compare the ticked ones ------- */

  // Filtering only hides rows; a ticked run that the filter hides is not compared, as
  // the count beside the filter says, so the comparison is always of runs in sight.
  function runIndex() {
    var table = document.getElementById("run-table"), text = document.getElementById("filter-text");
    if (!table || !text) return;
    var kind = document.getElementById("filter-kind"), status = document.getElementById("filter-status");
    var by = document.getElementById("compare-by"), metric = document.getElementById("compare-metric");
    var go = document.getElementById("compare-ticked"), count = document.getElementById("filter-count");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);

    function shown() { return rows.filter(function (r) { return !r.hidden; }); }
    function ticked() {
      return shown().filter(function (r) { return r.querySelector("input.tick").checked; });
    }
    function update() {
      var needle = text.value.trim().toLowerCase();
      rows.forEach(function (r) {
        var d = r.dataset, words = (d.run + " " + d.label).toLowerCase();
        r.hidden = !((!needle || words.indexOf(needle) >= 0) &&
          (!kind.value || d.kind === kind.value) && (!status.value || d.status === status.value));
      });
      var n = ticked().length;
      count.textContent = shown().length + " of " + rows.length + " shown, " + n + " ticked";
      go.disabled = n < (by.value === "run" ? 2 : 1); // by run ranks two runs or more
    }
    [text, kind, status, by].forEach(function (c) {
      c.addEventListener("input", update);
      c.addEventListener("change", update);
    });
    table.addEventListener("change", update);
    window.addEventListener("pageshow", update); // ticks a browser restores on going back
    go.addEventListener("click", function () {
      var query = new URLSearchParams();
      ticked().forEach(function (r) { query.append("run", r.dataset.run); });
      query.append("by", by.value);
      if (metric.value.trim()) query.append("metric", metric.value.trim());
      location.assign("/compare?" + query.toString());
    });
    update();
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("table.data"), enhanceTable);
    var rows = readJson("episode-rows"), host = document.getElementById("episode-table");
    if (rows && host) pagedTable(host, rows);
    runIndex();
    meta = readJson("report-meta");
    if (meta) {
      topicPlots(meta);
      viewer();
    }
    window.disputelab = { tableCsv: tableCsv, show: show, current: function () { return current; } };
    document.documentElement.setAttribute("data-ready", "1");
    window.__reportReady = performance.now(); // read by the load-time benchmark
  }

  init();
})();
