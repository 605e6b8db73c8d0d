// The calculator page ("Size your deployment"): runs the site's own engine (snippets/engine/*.py, unchanged)
// in Pyodide, vendored under assets/pyodide/. This script only reads the form, calls Python
// (snippets.engine.calc.Calculator.answer_json) and writes the strings it returns into the page: it
// computes no figure. Pyodide is fetched only when the reader presses Start, and only from this site.
const root = document.getElementById("sa-calc");
if (root) {
  const form = root.querySelector("#sa-calc-form");
  const start = root.querySelector("#sa-calc-start");
  const status = root.querySelector("#sa-calc-status");
  const error = root.querySelector("#sa-calc-error");
  const custom = root.querySelector("#sa-calc-custom");
  const assets = new URL(root.dataset.assets, location.href);
  let calculator = null;
  let pending = null;

  const fields = () => {
    const q = {};
    for (const [k, v] of new FormData(form)) q[k] = String(v);
    if (q.model !== "custom") delete q.config;
    return q;
  };
  const showCustom = () => { custom.hidden = form.elements.model.value !== "custom"; };

  // the state the URL carries, restored into the form
  const params = new URLSearchParams(location.search);
  for (const [k, v] of params) {
    const el = form.elements.namedItem(k);
    if (el && "value" in el) el.value = v;
  }
  showCustom();

  const write = (res) => {
    if (!res.ok) {  // keep the last good answer; say what is wrong with this one
      error.textContent = res.error;
      error.hidden = false;
      root.dataset.error = res.error;
      return;
    }
    error.hidden = true;
    error.textContent = "";
    delete root.dataset.error;
    for (const [name, out] of Object.entries(res.outputs)) {
      for (const el of root.querySelectorAll(`[data-name="${name}"]`)) {
        el.textContent = out.text;
        el.dataset.value = out.value === null ? "" : out.value;
      }
    }
    for (const part of res.bar) {
      const seg = root.querySelector(`.sa-calc-bar [data-part="${part.part}"]`);
      if (seg) seg.style.width = `${part.percent}%`;
      const el = root.querySelector(`[data-name="mem_${part.part}"]`);
      if (el) { el.textContent = part.text; el.dataset.value = part.gib; }
    }
    root.querySelector(".sa-calc-bar").setAttribute("aria-label", res.bar_label);
    const url = new URL(location.href);
    url.search = new URLSearchParams(res.inputs).toString();
    history.replaceState(null, "", url);
  };

  const recompute = () => {
    pending = null;
    const t0 = performance.now();
    const asked = JSON.stringify(fields());
    const res = JSON.parse(calculator.answer_json(asked));
    write(res);
    root.dataset.lastMs = String(performance.now() - t0);  // for scripts/bench.py
    root.dataset.query = asked;  // what this answer was asked (tests wait for it)
    root.dataset.answers = String(Number(root.dataset.answers) + 1);
    root.dataset.state = res.ok ? "answered" : "refused";
  };
  const schedule = () => {
    showCustom();
    if (!calculator) return;
    if (pending !== null) clearTimeout(pending);
    pending = setTimeout(recompute, 0);  // one answer per burst of input events
  };
  form.addEventListener("input", schedule);
  form.addEventListener("change", schedule);

  start.addEventListener("click", async () => {
    if (calculator) { recompute(); return; }
    start.disabled = true;
    root.dataset.state = "loading";
    status.textContent = "Loading Python (Pyodide) from this site…";
    try {
      const { loadPyodide } = await import(new URL("pyodide/pyodide.mjs", assets).href);
      const [pyodide, manifest, catalog] = await Promise.all([
        loadPyodide({ indexURL: new URL("pyodide/", assets).href, packages: [] }),
        fetch(new URL("calculator/py/manifest.json", assets)).then((r) => r.json()),
        fetch(new URL(root.dataset.catalog, location.href)).then((r) => r.text()),
      ]);
      status.textContent = "Loading the engine…";
      const sources = await Promise.all(manifest.files.map(
        (f) => fetch(new URL(`calculator/py/${f.path}`, assets)).then((r) => r.text())));
      const home = "/home/pyodide/site";
      manifest.files.forEach((f, i) => {
        const path = `${home}/${f.path}`;
        pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
        pyodide.FS.writeFile(path, sources[i]);
      });
      pyodide.FS.writeFile(`${home}/engine-catalog.json`, catalog);
      calculator = pyodide.runPython(
        `import sys\nsys.path.insert(0, "${home}")\nfrom snippets.engine.calc import Calculator\n` +
        `Calculator.from_file("${home}/engine-catalog.json")`);
      status.textContent = "Running in your browser: the answer follows the form.";
      start.textContent = "Recompute";
      start.disabled = false;
      recompute();
    } catch (exc) {
      root.dataset.state = "failed";
      status.textContent = `The engine could not start in this browser: ${exc}`;
      start.disabled = false;
    }
  });
}
