/* svg_script.js: the interaction embedded in taskspy's SVG flame graphs (no network, no libraries).
 * Click a frame to zoom (its ancestors stay visible, dimmed), "Reset Zoom", search by regular expression
 * (button, Ctrl-F or F3; "ic" or Ctrl-I toggles case) with the matched share of samples, a details line
 * on hover. Zoom and search live in the URL hash (#zoom=START:DEPTH&search=RE&ic=1) so a view can be
 * shared. Positions come from each frame's data-s (offset in samples), data-n (samples) and data-d (depth);
 * a zoom reads no layout and writes each frame's attributes once; a frame too narrow for a label has no
 * <text> until a zoom makes room for one. A window narrower than the image shows it scaled to fit.
 * Embedded by svg_writer.c in CDATA. */
(function () {
  "use strict";

  var HIGHLIGHT = "rgb(230,0,230)";
  var svg, framesGroup, details, matchedText, unzoomButton, searchButton, icButton;
  var frames = [];
  var total = 0, countName = "samples", xpad = 10, chartWidth = 1180, charWidth = 7.08, textDy = 4.2;
  var rootIndex = -1, zoomed = -1;
  var searchTerm = "", ignoreCase = false;

  function frameName(f) {
    if (f.name === null) {
      var title = f.title.textContent;
      var at = title.lastIndexOf(" (" + f.nText + " ");
      if (at < 0) at = title.lastIndexOf(" (");   /* counts shown scaled (wait time in ms) */
      f.name = at >= 0 ? title.substring(0, at) : title;
    }
    return f.name;
  }

  /* The label of frame f at width px: its name, or a prefix and "..", or "" (the name is not even read). */
  function fitLabel(f, width) {
    var chars = Math.floor((width - 3) / charWidth);
    if (chars < 3) return "";
    var name = frameName(f);
    if (name.length <= chars) return name;
    var cut = chars - 2;
    var c = name.charCodeAt(cut - 1);
    if (c >= 0xd800 && c <= 0xdbff) cut--;   /* keep surrogate pairs whole */
    return name.substring(0, cut) + "..";
  }

  function setClass(f, hidden, dim) {
    if (f.hidden === hidden && f.dim === dim) return;
    f.hidden = hidden;
    f.dim = dim;
    var cls = hidden ? "hide" : (dim ? "dim" : "");
    if (cls) f.g.setAttribute("class", cls); else f.g.removeAttribute("class");
  }

  /* Labels of narrow frames are left out of the file; their <text> is made when a zoom widens them. */
  function setLabel(f, label) {
    if (label === f.label) return;
    f.label = label;
    if (!f.text) {
      if (!label) return;
      f.text = document.createElementNS("http://www.w3.org/2000/svg", "text");
      f.text.setAttribute("x", (f.x + 3).toFixed(2));
      f.text.setAttribute("y", (Number(f.rect.getAttribute("y")) + Number(f.rect.getAttribute("height")) / 2 +
                                textDy).toFixed(1));
      f.g.appendChild(f.text);
    }
    f.text.textContent = label;
  }

  function place(f, x, width) {
    if (f.x !== x) {
      f.x = x;
      f.rect.setAttribute("x", x.toFixed(2));
      if (f.text) f.text.setAttribute("x", (x + 3).toFixed(2));
    }
    if (f.width !== width) {
      f.width = width;
      f.rect.setAttribute("width", width.toFixed(2));
      setLabel(f, fitLabel(f, width));
    }
  }

  /* Zoom so frame i spans the chart; i === rootIndex is the unzoomed view. One pass over the frames. */
  function zoomTo(i) {
    if (i < 0 || i >= frames.length) i = rootIndex;
    if (i < 0) return;
    var z = frames[i];
    var zs = z.s, ze = z.s + z.n, zd = z.d, scale = chartWidth / z.n;
    for (var k = 0; k < frames.length; k++) {
      var f = frames[k];
      var end = f.s + f.n;
      if (f.d >= zd && f.s >= zs && end <= ze) {
        setClass(f, false, false);
        place(f, xpad + (f.s - zs) * scale, f.n * scale);
      } else if (f.d < zd && f.s <= zs && end >= ze) {
        setClass(f, false, true);
        place(f, xpad, chartWidth);
      } else {
        setClass(f, true, false);
      }
    }
    zoomed = i === rootIndex ? -1 : i;
    unzoomButton.setAttribute("class", zoomed < 0 ? "button hide" : "button");
    if (searchTerm) search(searchTerm);
  }

  function clearSearch() {
    searchTerm = "";
    for (var k = 0; k < frames.length; k++) {
      var f = frames[k];
      if (f.highlighted) {
        f.highlighted = false;
        f.rect.setAttribute("fill", f.fill);
      }
    }
    matchedText.textContent = " ";
    searchButton.textContent = "Search";
    searchButton.setAttribute("class", "button");
  }

  /* Highlight frames whose name matches term; report the share of samples (of the zoomed frame) under at
   * least one match, counting nested matches once. Returns false if term is not a valid expression. */
  function search(term) {
    var re;
    try {
      re = new RegExp(term, ignoreCase ? "i" : "");
    } catch (e) {
      clearSearch();
      matchedText.textContent = "Invalid regular expression";
      return false;
    }
    searchTerm = term;
    var zs = 0, ze = total;
    if (zoomed >= 0) {
      zs = frames[zoomed].s;
      ze = zs + frames[zoomed].n;
    }
    var ranges = [];
    for (var k = 0; k < frames.length; k++) {
      var f = frames[k];
      var hit = f.d > 0 && re.test(frameName(f));
      if (hit !== f.highlighted) {
        f.highlighted = hit;
        f.rect.setAttribute("fill", hit ? HIGHLIGHT : f.fill);
      }
      if (hit) {
        var a = Math.max(f.s, zs), b = Math.min(f.s + f.n, ze);
        if (b > a) ranges.push([a, b]);
      }
    }
    ranges.sort(function (p, q) { return p[0] - q[0] || q[1] - p[1]; });
    var matched = 0, covered = zs;
    for (var r = 0; r < ranges.length; r++) {
      var from = Math.max(ranges[r][0], covered);
      if (ranges[r][1] > from) {
        matched += ranges[r][1] - from;
        covered = ranges[r][1];
      }
    }
    var pct = ze > zs ? 100 * matched / (ze - zs) : 0;
    matchedText.textContent = "Matched: " + pct.toFixed(2) + "%";
    searchButton.textContent = "Reset Search";
    searchButton.setAttribute("class", "button active");
    return true;
  }

  function setIgnoreCase(on) {
    ignoreCase = on;
    icButton.setAttribute("class", on ? "button active" : "button");
  }

  /* ---- URL state ---- */

  function stateHash() {
    var parts = [];
    if (zoomed >= 0) parts.push("zoom=" + frames[zoomed].sText + ":" + frames[zoomed].d);
    if (searchTerm) parts.push("search=" + encodeURIComponent(searchTerm));
    if (ignoreCase) parts.push("ic=1");
    return parts.join("&");
  }

  function updateHash() {
    var hash = stateHash();
    var current = location.hash.replace(/^#/, "");
    if (hash === current) return;
    try {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    } catch (e) {
      location.replace("#" + hash);
    }
  }

  function applyHash() {
    var zoomKey = "", term = "", ic = false;
    var parts = location.hash.replace(/^#/, "").split("&");
    for (var k = 0; k < parts.length; k++) {
      var eq = parts[k].indexOf("=");
      if (eq < 0) continue;
      var key = parts[k].substring(0, eq), value = parts[k].substring(eq + 1);
      try {
        value = decodeURIComponent(value);
      } catch (e) {
        continue;
      }
      if (key === "zoom") zoomKey = value;
      else if (key === "search") term = value;
      else if (key === "ic") ic = value === "1";
    }
    setIgnoreCase(ic);
    searchTerm = "";
    var target = rootIndex;
    for (var i = 0; zoomKey && i < frames.length; i++) {
      if (frames[i].sText + ":" + frames[i].d === zoomKey) {
        target = i;
        break;
      }
    }
    zoomTo(target);
    if (term) search(term); else clearSearch();
  }

  /* ---- events ---- */

  function frameIndexOf(node) {
    while (node && node.parentNode !== framesGroup) node = node.parentNode;
    return node && typeof node.taskspyFrame === "number" ? node.taskspyFrame : -1;
  }

  function promptSearch() {
    var term = window.prompt("Search frames by regular expression (e.g. ^tokio:: or poll)", searchTerm);
    if (term === null) return;
    if (term === "") clearSearch(); else search(term);
    updateHash();
  }

  /* A window narrower than the image (its scrollbar counted) shows the whole image scaled down to fit,
   * the top-right controls included, instead of cutting off its right edge; a wider one shows it at its own
   * size. Coordinates inside stay those of the viewBox, so zoom and labels are unaffected. */
  var naturalWidth = 0, naturalHeight = 0;
  function fitToWindow() {
    if (!naturalWidth || !naturalHeight) return;
    svg.setAttribute("width", String(naturalWidth));
    svg.setAttribute("height", String(naturalHeight));
    var available = document.documentElement.clientWidth || window.innerWidth;   /* scrollbar excluded */
    if (available > 0 && available < naturalWidth) {
      svg.setAttribute("width", String(available));
      svg.setAttribute("height", (naturalHeight * available / naturalWidth).toFixed(1));
    }
  }

  function init() {
    svg = document.documentElement;
    total = Number(svg.getAttribute("data-total")) || 0;
    countName = svg.getAttribute("data-countname") || "samples";
    xpad = Number(svg.getAttribute("data-xpad")) || 10;
    chartWidth = Number(svg.getAttribute("data-chart")) || 1180;
    charWidth = Number(svg.getAttribute("data-charw")) || 7.08;
    textDy = Number(svg.getAttribute("data-textdy")) || 4.2;
    framesGroup = document.getElementById("frames");
    details = document.getElementById("details");
    matchedText = document.getElementById("matched");
    unzoomButton = document.getElementById("unzoom");
    searchButton = document.getElementById("search");
    icButton = document.getElementById("ignorecase");
    if (!framesGroup) return;
    if (svg.getAttribute("viewBox")) {
      naturalWidth = Number(svg.getAttribute("width")) || 0;
      naturalHeight = Number(svg.getAttribute("height")) || 0;
      fitToWindow();
      window.addEventListener("resize", fitToWindow);
    }

    var groups = framesGroup.children;
    for (var i = 0; i < groups.length; i++) {
      var g = groups[i];
      var title = g.firstElementChild;
      var rect = title.nextElementSibling;
      var text = rect.nextElementSibling;
      var f = {
        g: g, title: title, rect: rect, text: text,
        sText: g.getAttribute("data-s"), nText: g.getAttribute("data-n"),
        s: Number(g.getAttribute("data-s")), n: Number(g.getAttribute("data-n")),
        d: Number(g.getAttribute("data-d")),
        name: null, label: text ? text.textContent : "", fill: rect.getAttribute("fill"),
        x: Number(rect.getAttribute("x")), width: Number(rect.getAttribute("width")),
        hidden: false, dim: false, highlighted: false
      };
      g.taskspyFrame = i;
      if (f.d === 0) rootIndex = i;
      frames.push(f);
    }

    framesGroup.addEventListener("click", function (e) {
      var i = frameIndexOf(e.target);
      if (i < 0) return;
      zoomTo(i);
      updateHash();
    });
    framesGroup.addEventListener("mouseover", function (e) {
      var i = frameIndexOf(e.target);
      if (i >= 0) details.textContent = "Function: " + frames[i].title.textContent;
    });
    framesGroup.addEventListener("mouseout", function () {
      details.textContent = " ";
    });
    unzoomButton.addEventListener("click", function () {
      zoomTo(rootIndex);
      updateHash();
    });
    searchButton.addEventListener("click", function () {
      if (searchTerm) {
        clearSearch();
        updateHash();
      } else {
        promptSearch();
      }
    });
    icButton.addEventListener("click", function () {
      setIgnoreCase(!ignoreCase);
      if (searchTerm) search(searchTerm);
      updateHash();
    });
    window.addEventListener("keydown", function (e) {
      var key = e.key ? e.key.toLowerCase() : "";
      if (((e.ctrlKey || e.metaKey) && key === "f") || key === "f3") {
        e.preventDefault();
        promptSearch();
      } else if ((e.ctrlKey || e.metaKey) && key === "i") {
        e.preventDefault();
        setIgnoreCase(!ignoreCase);
        if (searchTerm) search(searchTerm);
        updateHash();
      } else if (key === "escape" && searchTerm) {
        clearSearch();
        updateHash();
      }
    });
    window.addEventListener("hashchange", applyHash);
    applyHash();
  }

  if (document.readyState === "complete") init(); else window.addEventListener("load", init);
})();
