// The calculator's engine, off the page's thread: Pyodide (vendored under assets/pyodide/) running the site's
// own engine modules (snippets/engine/*.py, byte for byte) in this Web Worker. It computes nothing itself: it
// passes the form's JSON to snippets.engine.calc.Calculator.answer_json and posts back the JSON it returns.
// Messages in: {type: "start", assets, catalog, modules} once, then {type: "answer", id, form}. Out: {type: "ready", ms,
// parts}, {type: "failed", error}, {type: "answer", id, result, ms}. `parts` is where the start's time went, in ms from
// the start message: Pyodide loaded, the engine's files fetched and written, the engine imported, the catalog read.
let calculator = null;
let starting = null;

const parts = {};
const start = async (assets, catalogUrl, modules) => {
  const t0 = performance.now();
  const mark = (name) => { parts[name] = performance.now() - t0; };
  const base = new URL(assets);
  const { loadPyodide } = await import(new URL("pyodide/pyodide.mjs", base).href);
  mark("pyodide_module");
  const wanted = new Set(modules);  // only what snippets.engine.calc imports (the page lists them)
  const engineFiles = fetch(new URL("calculator/py/manifest.json", base)).then((r) => r.json()).then((manifest) => {
    const files = modules.length ? manifest.files.filter((f) => wanted.has(f.path)) : manifest.files;
    return Promise.all(files.map((f) => fetch(new URL(`calculator/py/${f.path}`, base)).then((r) => r.text())))
      .then((sources) => [files, sources]);
  });
  // the engine's files and the catalog are fetched while Pyodide loads
  const [pyodide, [files, sources], catalog] = await Promise.all([
    // the standard library compiled to bytecode by Pyodide's own interpreter (scripts/pyodide_stdlib.py): the npm
    // package's holds source only, which Pyodide would compile here, as WebAssembly, on every start
    loadPyodide({ indexURL: new URL("pyodide/", base).href, packages: [],
                  stdLibURL: new URL("pyodide-stdlib/python_stdlib.zip", base).href })
      .then((p) => { mark("pyodide"); return p; }),
    engineFiles,
    fetch(catalogUrl).then((r) => r.text()),
  ]);
  const home = "/home/pyodide/site";
  files.forEach((f, i) => {
    const path = `${home}/${f.path}`;
    pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    pyodide.FS.writeFile(path, sources[i]);
  });
  pyodide.FS.writeFile(`${home}/engine-catalog.json`, catalog);
  mark("files");
  pyodide.runPython(`import sys\nsys.path.insert(0, "${home}")\nfrom snippets.engine.calc import Calculator`);
  mark("import");
  calculator = pyodide.runPython(`Calculator.from_file("${home}/engine-catalog.json")`);
  mark("catalog");
  return performance.now() - t0;
};

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "start") {
    if (!starting) starting = start(msg.assets, msg.catalog, msg.modules || []);
    try {
      self.postMessage({ type: "ready", ms: await starting, parts });
    } catch (exc) {
      self.postMessage({ type: "failed", error: String(exc) });
    }
    return;
  }
  if (msg.type === "answer") {
    const t0 = performance.now();
    let result;
    try {
      await starting;
      result = calculator.answer_json(JSON.stringify(msg.form));
    } catch (exc) {  // the engine's answer_json never raises; Pyodide itself may (out of memory, a stack overflow)
      result = JSON.stringify({ ok: false, error: `the engine failed in this browser: ${String(exc).split("\n")[0]}` });
    }
    self.postMessage({ type: "answer", id: msg.id, result, ms: performance.now() - t0 });
  }
};
