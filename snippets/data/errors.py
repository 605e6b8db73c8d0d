"""What the loader refuses, and where data/ is: `DataError`, the files it knows, the directory's variable."""

from __future__ import annotations

DATA_DIR_ENV = "SERVING_DATA_DIR"
"""Environment variable naming the data directory; the MkDocs hook sets it to `<site root>/data`."""
RESULTS_DIR_ENV = "SERVING_RESULTS_DIR"
"""Environment variable naming a build's cache directory, whose kept engine results (`snippets.data.results`) every
`load` in the process reads; the build sets it for its notebooks' kernels."""

FILES = ("accelerators", "interconnects", "models", "precisions", "assumptions", "prices", "policies", "scenarios",
         "deployments", "latencies", "efficiencies", "measurements", "predictors")


class DataError(ValueError):
    """Invalid data. The message names file, entry and field of every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid data:\n  " + "\n  ".join(problems))
