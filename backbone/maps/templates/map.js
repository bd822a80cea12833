(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("map-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var svg = document.getElementById("map");
  var tip = document.getElementById("tip");
  var P = D.palette;
  var cur = 0, vb = null, home = null, groups = {}, siteEls = [], labelEls = [];
  var LAYERS = [["terrestrial", "Terrestrial fibre", true], ["submarine", "Submarine cables", true],
                ["sites", "Sites", true], ["labels", "Labels", true],
                ["assignments", "Metro \u2192 site assignments", true], ["demands", "Largest demands", false],
                ["candidates", "Candidate routes (not built)", true], ["flows", "Workload flows (by class)", true]];
  var on = {};
  LAYERS.forEach(function (l) { on[l[0]] = l[2]; });

  function el(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function h(tag, text, parent, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function num(v, d) { return Number(v).toLocaleString("en-US", {maximumFractionDigits: d === undefined ? 1 : d}); }
  function gbps(g) {
    if (g === null || g === undefined) return "\u2013";
    if (Math.abs(g) >= 1e6) return num(g / 1e6, 2) + " Pbps";
    if (Math.abs(g) >= 1e3) return num(g / 1e3, 2) + " Tbps";
    return num(g, 1) + " Gbps";
  }
  function pct(v) { return (v * 100).toFixed(v !== 0 && Math.abs(v) < 0.1 ? 1 : 0) + "%"; }
  function pretty(k) { var s = k.replace(/_/g, " "); return s.charAt(0).toUpperCase() + s.slice(1); }
  function fmtValue(k, v) {
    if (/utili[sz]ation/.test(k)) return pct(v);
    if (/gbps$/.test(k)) return gbps(v);
    if (/usd$/.test(k)) return "$" + num(v, 0);
    return num(v, 3);
  }

  // ------------------------------------------------------------------ drawing
  function draw() {
    var V = D.views[cur];
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.style.background = V.world ? "#ffffff" : P.ocean;
    groups = {};
    var root = el("g", {}, svg);
    if (V.world) el("path", {d: V.outline, "class": "ocean"}, root);
    el("path", {d: V.graticule, "class": "graticule"}, root);
    el("path", {d: V.land, "class": "land", "fill-rule": "nonzero"}, root);
    el("path", {d: V.coast, "class": "coast"}, root);
    if (V.world) el("path", {d: V.outline, "class": "outline"}, root);
    groups.demands = el("g", {}, root);
    V.demands.forEach(function (d, i) {
      if (!d) return;
      el("path", {d: d, "class": "arc", stroke: P.demand, "stroke-width": 1.2, opacity: 0.55, "data-t": "demand",
                  "data-i": i}, groups.demands);
    });
    groups.assignments = el("g", {}, root);
    var amax = Math.max.apply(null, D.assignments.map(function (a) { return a.gpus; }).concat([1]));
    V.assignments.forEach(function (d, i) {
      if (!d) return;
      el("path", {d: d, "class": "arc", stroke: P.assignment, opacity: 0.5, "data-t": "assignment", "data-i": i,
                  "stroke-width": (0.8 + 2.5 * Math.sqrt(Math.max(D.assignments[i].gpus, 0) / amax)).toFixed(2)},
         groups.assignments);
    });
    groups.candidates = el("g", {}, root);
    (V.candidates || []).forEach(function (d, i) {
      if (!d) return;
      el("path", {d: d, "class": "hit", "stroke-width": 8, "data-t": "candidate", "data-i": i}, groups.candidates);
      el("path", {d: d, "class": "candidate", stroke: P.candidate, "stroke-width": 1.4, fill: "none",
                  "stroke-dasharray": "1.5 2.5", "stroke-linecap": "round"}, groups.candidates);
    });
    groups.terrestrial = el("g", {}, root);
    groups.submarine = el("g", {}, root);
    var order = D.links.map(function (l, i) { return i; });
    order.sort(function (a, b) { return D.links[a].z - D.links[b].z; });
    order.forEach(function (i) {
      var L = D.links[i], d = V.links[i];
      if (!d) return;
      var g = groups[L.kind === "submarine" ? "submarine" : "terrestrial"];
      el("path", {d: d, "class": "casing", "stroke-width": (L.w + 1.6).toFixed(2)}, g);
      if (L.values && L.values.delta_utilisation > 0.02 && D.legend.value !== "delta_utilisation") {
        el("path", {d: d, "class": "casing", stroke: P.rerouted, opacity: 0.5, "stroke-width": (L.w + 6).toFixed(2),
                    style: "stroke:" + P.rerouted}, g);
      }
      if (L.upgraded) {
        el("path", {d: d, "class": "casing", opacity: 0.7, "stroke-width": (L.w + 6).toFixed(2),
                    "stroke-dasharray": "4 2", style: "stroke:" + P.upgraded}, g);
      }
      if (L.built) {
        el("path", {d: d, "class": "casing", opacity: 0.55, "stroke-width": (L.w + 6).toFixed(2),
                    style: "stroke:" + P.built}, g);
      }
      el("path", {d: d, "class": "hit", "stroke-width": Math.max(L.w + 6, 9).toFixed(1), "data-t": "link",
                  "data-i": i}, g);
      el("path", {d: d, "class": "link", stroke: L.failed ? P.failed : L.color,
                  "stroke-width": (L.failed ? Math.max(L.w, 1.5) : L.w).toFixed(2),
                  "stroke-dasharray": L.failed ? "5 3" : null}, g);
    });
    groups.flows = el("g", {}, root);
    var fmax = Math.max.apply(null, (D.flows || []).map(function (f) { return f.gbps; }).concat([1e-9]));
    (V.flows || []).forEach(function (d, i) {
      if (!d) return;
      var F = D.flows[i];
      el("path", {d: d, "class": "arc flow", stroke: (P.flows || {})[F.cls] || P.novalue, opacity: 0.85,
                  "data-t": "flow", "data-i": i,
                  "stroke-width": (1.0 + 4.0 * Math.sqrt(Math.max(F.gbps, 0) / fmax)).toFixed(2)}, groups.flows);
    });
    groups.sites = el("g", {}, root);
    siteEls = [];
    var sorder = D.sites.map(function (s, i) { return i; });
    sorder.sort(function (a, b) { return D.sites[b].r - D.sites[a].r; });
    sorder.forEach(function (i) {
      var S = D.sites[i], p = V.sites[i];
      if (!p) return;
      var added = S.values && S.values.gpus_added > 0 ? S.values.gpus_added : 0;
      if (added) siteEls.push([el("circle", {cx: p[0], cy: p[1], "class": "added", stroke: P.added}, groups.sites),
                               S.r + 4 + 10 * Math.sqrt(added / maxAdded())]);
      var removed = S.values && S.values.gpus_removed > 0 ? S.values.gpus_removed : 0;
      if (removed) siteEls.push([el("circle", {cx: p[0], cy: p[1], "class": "removed", stroke: P.removed,
                                               "stroke-dasharray": "4 3"}, groups.sites),
                                 S.r + 4 + 10 * Math.sqrt(removed / maxAdded())]);
      siteEls.push([el("circle", {cx: p[0], cy: p[1], "class": "site", fill: S.color, "data-t": "site", "data-i": i},
                       groups.sites), S.r]);
    });
    groups.labels = el("g", {}, root);
    labelEls = [];
    D.labels.forEach(function (lab) {
      var p = lab.kind === "site" ? V.sites[lab.pos] : V.metros[lab.pos];
      if (!p) return;
      var t = el("text", {x: p[0], y: p[1], "class": "label"}, groups.labels);
      t.textContent = lab.name;
      labelEls.push({el: t, p: p, n: lab.name.length, site: lab.kind === "site"});
    });
    LAYERS.forEach(function (l) { if (groups[l[0]]) groups[l[0]].style.display = on[l[0]] ? "" : "none"; });
    fit();
  }
  var _maxAdded = null;
  function maxAdded() {
    if (_maxAdded === null) {
      _maxAdded = 1;
      D.sites.forEach(function (s) {
        if (!s.values) return;
        _maxAdded = Math.max(_maxAdded, s.values.gpus_added || 0, s.values.gpus_removed || 0);
      });
    }
    return _maxAdded;
  }

  // ------------------------------------------------------------------ pan and zoom
  function size() { var r = svg.getBoundingClientRect(); return [Math.max(r.width, 1), Math.max(r.height, 1)]; }
  function fit() {
    var V = D.views[cur], s = size(), a = s[0] / s[1], w, hh;
    if (a > V.width / V.height) { hh = V.height * 1.04; w = hh * a; } else { w = V.width * 1.04; hh = w / a; }
    vb = {x: (V.width - w) / 2, y: (V.height - hh) / 2, w: w, h: hh};
    home = {x: vb.x, y: vb.y, w: vb.w, h: vb.h};
    apply();
  }
  function apply() {
    svg.setAttribute("viewBox", [vb.x, vb.y, vb.w, vb.h].map(function (v) { return v.toFixed(3); }).join(" "));
    var k = vb.w / size()[0];  // user units per screen pixel
    siteEls.forEach(function (e) { e[0].setAttribute("r", (e[1] * k).toFixed(3)); });
    placeLabels(k);
  }
  function placeLabels(k) {
    var taken = [], s = size(), fs = 12;
    labelEls.forEach(function (L) {
      var sx = (L.p[0] - vb.x) / k, sy = (L.p[1] - vb.y) / k;
      var w = L.n * fs * 0.6 + 4, hh = fs + 2, x0 = sx + 6, y0 = sy - hh - 1;
      var ok = on.labels && sx > 0 && sy > 0 && x0 + w < s[0] && sy < s[1] && y0 > 0;
      for (var j = 0; ok && j < taken.length; j++) {
        var t = taken[j];
        if (x0 < t[2] && t[0] < x0 + w && y0 < t[3] && t[1] < y0 + hh) ok = false;
      }
      if (ok && taken.length >= 30) ok = false;
      L.el.style.display = ok ? "" : "none";
      if (ok) {
        taken.push([x0, y0, x0 + w, y0 + hh]);
        L.el.setAttribute("x", (L.p[0] + 6 * k).toFixed(3));
        L.el.setAttribute("y", (L.p[1] - 4 * k).toFixed(3));
        L.el.setAttribute("font-size", (fs * k).toFixed(3));
        L.el.setAttribute("stroke-width", (3 * k).toFixed(3));
        L.el.setAttribute("font-weight", L.site ? "600" : "400");
      }
    });
  }
  function zoom(factor, sx, sy) {
    var k = vb.w / size()[0];
    var ux = vb.x + sx * k, uy = vb.y + sy * k;
    var nw = Math.min(Math.max(vb.w * factor, home.w / 60), home.w * 1.5);
    var f = nw / vb.w;
    vb = {x: ux - (ux - vb.x) * f, y: uy - (uy - vb.y) * f, w: nw, h: vb.h * f};
    apply();
  }
  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = svg.getBoundingClientRect();
    zoom(Math.exp(e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)), e.clientX - r.left, e.clientY - r.top);
  }, {passive: false});
  var drag = null;
  svg.addEventListener("pointerdown", function (e) {
    drag = {x: e.clientX, y: e.clientY, vx: vb.x, vy: vb.y};
    svg.setPointerCapture(e.pointerId);
    svg.classList.add("dragging");
  });
  svg.addEventListener("pointermove", function (e) {
    if (drag) {
      var k = vb.w / size()[0];
      vb.x = drag.vx - (e.clientX - drag.x) * k;
      vb.y = drag.vy - (e.clientY - drag.y) * k;
      apply();
      tip.style.display = "none";
      return;
    }
    showTip(e);
  });
  function endDrag(e) {
    if (!drag) return;
    drag = null;
    svg.classList.remove("dragging");
    if (svg.hasPointerCapture(e.pointerId)) svg.releasePointerCapture(e.pointerId);
  }
  svg.addEventListener("pointerup", endDrag);
  svg.addEventListener("pointercancel", endDrag);
  svg.addEventListener("pointerleave", function () { tip.style.display = "none"; });
  svg.addEventListener("dblclick", function (e) {
    var r = svg.getBoundingClientRect();
    zoom(e.shiftKey ? 2 : 0.5, e.clientX - r.left, e.clientY - r.top);
  });
  document.getElementById("zin").onclick = function () { var s = size(); zoom(0.67, s[0] / 2, s[1] / 2); };
  document.getElementById("zout").onclick = function () { var s = size(); zoom(1.5, s[0] / 2, s[1] / 2); };
  document.getElementById("zreset").onclick = function () { fit(); };
  window.addEventListener("keydown", function (e) {
    var s = size();
    if (e.key === "+" || e.key === "=") zoom(0.67, s[0] / 2, s[1] / 2);
    else if (e.key === "-") zoom(1.5, s[0] / 2, s[1] / 2);
    else if (e.key === "0") fit();
  });
  window.addEventListener("resize", function () { fit(); });

  // ------------------------------------------------------------------ tooltips
  function rows(title, pairs) {
    tip.textContent = "";
    h("b", title, tip);
    var t = h("table", null, tip);
    pairs.forEach(function (p) {
      if (p[1] === null || p[1] === undefined || p[1] === "") return;
      var tr = h("tr", null, t);
      h("td", p[0], tr);
      h("td", String(p[1]), tr);
    });
  }
  function siteName(id) {
    for (var i = 0; i < D.sites.length; i++) if (D.sites[i].id === id) return D.sites[i].name;
    return id;
  }
  function showTip(e) {
    var t = e.target, kind = t.getAttribute && t.getAttribute("data-t");
    if (!kind) { tip.style.display = "none"; return; }
    var i = +t.getAttribute("data-i");
    if (kind === "link") {
      var L = D.links[i];
      var pairs = [["Kind", L.kind], ["Cable system", L.cable], ["Between", siteName(L.a) + " \u2013 " + siteName(L.b)],
                   ["Capacity", gbps(L.cap)], ["Length", L.km === null ? null : num(L.km, 0) + " km"],
                   ["Latency", L.ms === null ? null : num(L.ms, 2) + " ms one-way"]];
      for (var k in L.values) pairs.push([pretty(k), fmtValue(k, L.values[k])]);
      if (L.failed) pairs.push(["State", "FAILED"]);
      if (L.built) pairs.push(["State", "New route (built candidate)"]);
      if (L.upgraded) pairs.push(["State", "Upgraded (modules added)"]);
      rows(L.name, pairs);
    } else if (kind === "candidate") {
      var C = D.candidates[i];
      rows(C.name, [["Candidate", C.kind + " (not built)"], ["Cable system", C.cable],
                    ["Between", siteName(C.a) + " \u2013 " + siteName(C.b)],
                    ["Module", gbps(C.module)], ["Up to", C.max + " modules (" + gbps(C.module * C.max) + ")"],
                    ["Cost", "$" + num(C.fixed, 0) + " + $" + num(C.cost, 0) + " per module"],
                    ["Lead time", C.lead + " quarters"], ["Available from", C.from || "now"],
                    ["Latency", C.ms === null ? null : num(C.ms, 2) + " ms one-way"]]);
    } else if (kind === "site") {
      var S = D.sites[i];
      var sp = [["Role", (D.legend.sites[S.kind] || {label: S.kind}).label], ["Region", S.region],
                ["GPUs", num(S.gpus, 0)], ["Power", S.mw === null ? null : num(S.mw, 1) + " MW"]];
      for (var k2 in S.values) sp.push([pretty(k2), fmtValue(k2, S.values[k2])]);
      rows(S.name, sp);
    } else if (kind === "demand") {
      var Dm = D.demands[i];
      rows("Demand " + Dm.id, [["From", siteName(Dm.src)], ["To", siteName(Dm.dst)], ["Rate", gbps(Dm.gbps)],
                                ["Class", Dm.cls]]);
    } else if (kind === "flow") {
      var Fl = D.flows[i];
      rows("Workload flow (" + Fl.cls + ")", [["From", siteName(Fl.src)], ["To", siteName(Fl.dst)],
                                              ["Rate", gbps(Fl.gbps)]]);
    } else if (kind === "assignment") {
      var A = D.assignments[i];
      rows("Assignment", [["Metro", A.metro], ["Site", siteName(A.site)], ["GPUs", num(A.gpus, 0)]]);
    }
    tip.style.display = "block";
    var x = e.clientX + 14, y = e.clientY + 14, w = tip.offsetWidth, hh = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = e.clientX - w - 14;
    if (y + hh > window.innerHeight - 4) y = e.clientY - hh - 14;
    tip.style.left = Math.max(4, x) + "px";
    tip.style.top = Math.max(4, y) + "px";
  }

  // ------------------------------------------------------------------ panels
  function controls() {
    document.getElementById("title").textContent = D.title;
    document.getElementById("subtitle").textContent = D.subtitle;
    var vbox = document.getElementById("views");
    if (D.views.length < 2) document.getElementById("views-box").style.display = "none";
    D.views.forEach(function (V, i) {
      var b = h("button", V.name, vbox, i === cur ? "on" : "");
      b.onclick = function () {
        cur = i;
        Array.prototype.forEach.call(vbox.children, function (c, j) { c.className = j === cur ? "on" : ""; });
        draw();
      };
    });
    var box = document.getElementById("layers");
    LAYERS.forEach(function (l) {
      var present = l[0] === "assignments" ? D.assignments.length > 0 : l[0] === "demands" ? D.demands.length > 0 :
        l[0] === "flows" ? (D.flows || []).length > 0 :
        l[0] === "candidates" ? D.candidates.length > 0 :
        l[0] === "terrestrial" || l[0] === "submarine" ? D.links.some(function (L) { return L.kind === l[0]; }) : true;
      if (!present) return;
      var lab = h("label", null, box), cb = h("input", null, lab);
      cb.type = "checkbox"; cb.checked = on[l[0]]; cb.setAttribute("data-layer", l[0]);
      lab.appendChild(document.createTextNode(" " + l[1]));
      cb.onchange = function () {
        on[l[0]] = cb.checked;
        if (groups[l[0]]) groups[l[0]].style.display = cb.checked ? "" : "none";
        if (l[0] === "labels") apply();
      };
    });
  }
  function legend() {
    var G = D.legend, box = document.getElementById("legend");
    h("h3", G.label || "Links", box);
    if (G.ramp) {
      var ramp = h("div", null, box, "ramp");
      ramp.style.background = "linear-gradient(to right," + G.ramp.join(",") + ")";
      var ticks = h("div", null, box, "ticks");
      var util = G.mode === "utilisation";
      h("span", util ? pct(G.min) : num(G.min, 3), ticks);
      h("span", util ? pct((G.min + G.max) / 2) : num((G.min + G.max) / 2, 3), ticks);
      h("span", util ? pct(G.max) : num(G.max, 3), ticks);
      if (G.over) item("sw", G.over, "over 100%");
      if (D.links.some(function (L) { return !L.failed && !(G.value in L.values); })) item("sw", P.novalue, "No value");
    }
    for (var c in G.categories) item("sw", G.categories[c], c);
    if (D.links.some(function (L) { return L.failed; })) item("sw", P.failed, "Failed link", true);
    if (D.links.some(function (L) { return L.built; })) item("sw", P.built, "New route (built candidate)");
    if (D.links.some(function (L) { return L.upgraded; })) item("sw", P.upgraded, "Upgraded link (modules added)", true);
    if (D.candidates.length) item("sw", P.candidate, "Candidate route (not built)", "dotted");
    if (D.assignments.length) item("sw", P.assignment, "Metro \u2192 site");
    var byClass = {};
    (D.flows || []).forEach(function (f) { byClass[f.cls] = (byClass[f.cls] || 0) + f.gbps; });
    for (var fc in byClass) item("sw", (P.flows || {})[fc] || P.novalue, fc + ": " + gbps(byClass[fc]));
    for (var s in G.sites) item("dot", G.sites[s].color, G.sites[s].label);
    var ringMax = function (key) {
      return Math.max.apply(null, D.sites.map(function (S) { return S.values && S.values[key] > 0 ? S.values[key] : 0; }));
    };
    if (ringMax("gpus_added") > 0)
      item("dot", P.added, "GPUs added (ring; largest +" + num(ringMax("gpus_added"), 0) + " GPUs)", false, true);
    if (ringMax("gpus_removed") > 0)
      item("dot", P.removed, "GPUs removed (dashed ring; largest \u2212" + num(ringMax("gpus_removed"), 0) + " GPUs)",
           "dashed", true);
  }
  function item(kind, color, label, dashed, ring) {
    var row = h("div", null, document.getElementById("legend"), "item");
    var sw = h("span", null, row, kind);
    if (kind === "sw") sw.style.borderTop = "3px " + (dashed === "dotted" ? "dotted " : dashed ? "dashed " : "solid ")
      + color;
    else if (ring) { sw.style.background = "transparent"; sw.style.border = "2px " + (dashed ? "dashed " : "solid ") + color; }
    else sw.style.background = color;
    h("span", label, row);
  }

  controls();
  legend();
  draw();
  document.documentElement.setAttribute("data-ready", "1");
})();
