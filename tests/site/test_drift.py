"""Drift guards: each fault injected into a copy of the site is caught, naming the place."""

from __future__ import annotations

import filecmp

import os

import shutil

import subprocess

import sys

from pathlib import Path

import pytest

from snippets.build import computed

from snippets.build.drift import prose, typed_quantities

from ..conftest import ROOT, Build, run_build

def test_no_page_publishes_broken_output(built: Build) -> None:
    pages = sorted(built.site.rglob("*.html"))
    assert len(pages) >= 3
    for path in pages:
        html = path.read_text(encoding="utf-8")
        _, _, problems = computed.collect(html)
        assert problems == [], f"{path.relative_to(built.site)}: {problems}"
        assert "Traceback" not in html, path
