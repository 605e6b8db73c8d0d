// The calculator page ("Size your deployment"): runs the site's own engine (snippets/engine/*.py, unchanged)
// in Pyodide, vendored under assets/pyodide/, in a Web Worker (calculator-worker.js) started as the page loads;
// until it answers, the answer the build computed stands. This script only reads the form, sends it to the
// worker and writes the strings the engine returns into the page: it computes no figure. Nothing is fetched
// from anywhere but this site. When the engine refuses an input, the error shows beside the inputs and the last
// answer stays, greyed and marked stale.
const root = document.getElementById("sa-calc");
if (root) {
  const form = root.querySelector("#sa-calc-form");
  const status = root.querySelector("#sa-calc-status");
  const error = root.querySelector("#sa-calc-error");
  const custom = root.querySelector("#sa-calc-custom");
  const staleNote = root.querySelector("#sa-calc-stale-note");
  const frontier = root.querySelector("#sa-calc-frontier");
  const assets = new URL(root.dataset.assets, location.href);
  const t0 = performance.now();
  let ready = false;
  let asked = 0;      // id of the latest question sent
  let busy = false;   // a question is with the worker
  let again = false;  // the form changed while it was
  let lastAsked = null;  // the question last sent: the same form is not asked twice in a row

  const fields = () => {
    const q = {};
    for (const [k, v] of new FormData(form)) q[k] = String(v);
    if (q.model !== "custom") delete q.config;
    return q;
  };
  const showCustom = () => { if (form.elements.model.value === "custom") custom.open = true; };

  // the address's parameters: restored into the form, and sent as they are with the first question, so a
  // parameter the form does not have, or a value it has no option for, is refused by name, never replaced
  const params = new URLSearchParams(location.search);
  let address = null;
  if ([...params.keys()].length) {
    address = {};
    for (const [k, v] of params) {
      address[k] = v;
      const el = form.elements.namedItem(k);
      if (el && "value" in el) el.value = v;
    }
  }
  showCustom();

  const writeOutputs = (outputs) => {
    for (const [name, out] of Object.entries(outputs)) {
      for (const el of root.querySelectorAll(`[data-name="${name}"]`)) {
        el.textContent = out.text;
        el.dataset.value = out.value === null ? "" : out.value;
      }
    }
  };
  const write = (res) => {
    if (!res.ok) {  // the error beside the inputs; the last answer stays, greyed and marked stale
      error.textContent = res.error;
      error.hidden = false;
      root.dataset.error = res.error;
      if (Number(root.dataset.answers) > 0 || ready) {
        root.dataset.stale = "true";
        staleNote.hidden = false;
      }
      return;
    }
    error.hidden = true;
    error.textContent = "";
    delete root.dataset.error;
    delete root.dataset.stale;
    staleNote.hidden = true;
    writeOutputs(res.outputs);
    for (const part of res.bar) {
      const seg = root.querySelector(`.sa-calc-bar [data-part="${part.part}"]`);
      if (seg) seg.style.width = `${part.percent}%`;
      const el = root.querySelector(`[data-name="mem_${part.part}"]`);
      if (el) { el.textContent = part.text; el.dataset.value = part.gib; }
    }
    root.querySelector(".sa-calc-bar").setAttribute("aria-label", res.bar_label);
    const t = res.target;
    for (const el of root.querySelectorAll('.sa-calc-target [data-name^="t_"]')) {
      if (el.dataset.name === "t_text") continue;
      const out = t.outputs[el.dataset.name];
      el.textContent = out ? out.text : "none";
      el.dataset.value = out && out.value !== null ? out.value : "";
    }
    const text = root.querySelector('[data-name="t_text"]');
    text.textContent = t.text;
    frontier.innerHTML = t.svg;  // built by the engine (snippets.engine.calc.frontier_svg), its text escaped there
    const url = new URL(location.href);
    url.search = new URLSearchParams(res.inputs).toString();
    history.replaceState(null, "", url);
  };

  // the worker the page started as its parser reached the calculator (snippets/pages/calculator.py START_SCRIPT),
  // with what it posted before this script ran; a worker of its own where that did not run
  const started = root.saEngine;
  const worker = started ? started.worker : new Worker(new URL("calculator-worker.js", import.meta.url), { type: "module" });
  const ask = () => {
    if (!ready) return;
    if (busy) { again = true; return; }
    again = false;
    const q = address ?? fields();
    const text = JSON.stringify(q);
    if (text === lastAsked) return;
    busy = true;
    lastAsked = text;
    asked += 1;
    root.dataset.state = "computing";
    root.dataset.pending = text;
    worker.postMessage({ type: "answer", id: asked, form: q });
  };
  worker.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === "ready") {
      ready = true;
      root.dataset.startMs = String(msg.ms);
      root.dataset.startParts = JSON.stringify(msg.parts || {});  // where the start's time went (scripts/bench.py)
      status.textContent = "Running in your browser: the answer follows the form.";
      ask();
    } else if (msg.type === "failed") {
      root.dataset.state = "failed";
      status.textContent = `The engine could not start in this browser: ${msg.error}. The answer shown is the build's.`;
    } else if (msg.type === "answer") {
      busy = false;
      const res = JSON.parse(msg.result);
      write(res);
      if (Number(root.dataset.answers) === 0) {  // from the navigation's start (performance's time origin)
        root.dataset.firstAnswerMs = String(performance.now());
        root.dataset.scriptToAnswerMs = String(performance.now() - t0);
        root.dataset.scriptStartMs = String(t0);  // from the navigation's start to this script's
      }
      root.dataset.lastMs = String(msg.ms);  // for scripts/bench.py
      root.dataset.query = root.dataset.pending;  // what this answer was asked (tests wait for it)
      root.dataset.answers = String(Number(root.dataset.answers) + 1);
      root.dataset.state = res.ok ? "answered" : "refused";
      if (again) ask();
    }
  };
  worker.onerror = (event) => {
    root.dataset.state = "failed";
    status.textContent = `The engine could not start in this browser: ${event.message}. The answer shown is the build's.`;
  };
  const changed = () => {
    showCustom();
    address = null;  // the reader's own inputs from now on
    ask();
  };
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.addEventListener("submit", (event) => { event.preventDefault(); changed(); });
  custom.addEventListener("toggle", () => {
    if (custom.open && form.elements.config.value.trim() && form.elements.model.value !== "custom") {
      form.elements.model.value = "custom";
      changed();
    }
  });
  root.dataset.state = "loading";
  status.textContent = "Showing the answer computed when the site was built while the engine starts in your "
    + "browser (Python, from this site)…";
  if (started) {
    root.dataset.workerStartMs = String(started.at);  // from the navigation's start (scripts/bench.py)
    for (const event of started.early.splice(0)) (event.type === "error" ? worker.onerror : worker.onmessage)(event);
  } else {
    root.dataset.workerStartMs = String(t0);
    worker.postMessage({ type: "start", assets: assets.href, catalog: new URL(root.dataset.catalog, location.href).href,
                         modules: (root.dataset.modules || "").split(" ").filter(Boolean) });
  }
}
