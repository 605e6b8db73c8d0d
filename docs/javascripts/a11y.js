// Accessibility fixes that Material's markup lacks; tests/browser/ checks them with axe-core.
// - A content region that scrolls sideways (a wide table in Material's wrapper, a notebook cell)
//   gets a tab stop and a name, so keyboard users can scroll it (WCAG 2.1.1; Chromium and Firefox
//   focus such scrollers by themselves, Safari does not).
// - The search dialog gets the name of its search field.
// - A region that scrolls sideways is marked data-sa-wide, which extra.css uses to keep a table's key
//   column in view and say that the table scrolls.
(function () {
  "use strict";

  var SCROLLERS = ".md-typeset__scrollwrap, .md-typeset pre, .highlight-ipynb, .jp-OutputArea-output";
  var FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]";

  function describe(el, n) {
    var head = el.querySelector("thead th, th");
    var kind = el.querySelector("table") ? "Table" : "Code";
    return kind + " " + n + (head ? " (" + head.textContent.trim().slice(0, 40) + ")" : "") + ", scrolls sideways";
  }

  function label(el, n) {
    var scrolls = el.scrollWidth > el.clientWidth + 1;
    // styling hook (extra.css): a table that scrolls sideways keeps its key column and says that it scrolls
    if (scrolls) { el.setAttribute("data-sa-wide", "1"); } else { el.removeAttribute("data-sa-wide"); }
    var own = el.getAttribute("data-sa-scroll") === "1";
    if (scrolls && !own && (el.hasAttribute("tabindex") || el.querySelector(FOCUSABLE))) { return; }
    if (scrolls) {
      el.setAttribute("tabindex", "0");
      el.setAttribute("role", "region");
      el.setAttribute("aria-label", describe(el, n));
      el.setAttribute("data-sa-scroll", "1");
    } else if (own) {
      ["tabindex", "role", "aria-label", "data-sa-scroll"].forEach(function (a) { el.removeAttribute(a); });
    }
  }

  function mount() {
    var search = document.querySelector(".md-search[role=dialog]");
    var field = document.querySelector(".md-search__input");
    if (search && field && !search.hasAttribute("aria-label")) {
      search.setAttribute("aria-label", field.getAttribute("aria-label") || "Search");
    }
    var regions = Array.prototype.slice.call(document.querySelectorAll(SCROLLERS));
    var number = function (el) { return regions.indexOf(el) + 1; };
    var observer = "ResizeObserver" in window
      ? new ResizeObserver(function (entries) { entries.forEach(function (e) { label(e.target, number(e.target)); }); })
      : null;
    regions.forEach(function (el) {
      label(el, number(el));
      if (observer) { observer.observe(el); }
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(mount);
  } else {
    document.addEventListener("DOMContentLoaded", mount);
  }
})();
