"""The benchmark report's page in a real headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by Selenium), and what the browser measures of it: for each figure,
its data marks, the sentences shown instead of a chart, and every pair of text boxes that
overlap or text that sticks out of its figure."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"

#: For each <figure>: [id, has an <svg>, data marks with a box, sentences, overlapping text
#: pairs, text outside the svg, svg width, svg height]. Data marks are the elements whose id
#: report/plots.py gives them (<plot>-data-<n>); two boxes overlap when they share more than half a
#: pixel each way.
LAYOUT_JS = """
const out = [];
for (const fig of document.querySelectorAll('figure')) {
  const svg = fig.querySelector(':scope > svg');
  const notes = Array.from(fig.querySelectorAll('.no-data')).map(p => p.textContent.trim()).filter(t => t);
  let marks = 0, width = 0, height = 0;
  const overlaps = [], outside = [];
  if (svg) {
    const box = svg.getBoundingClientRect();
    width = box.width; height = box.height;
    marks = Array.from(svg.querySelectorAll('[id*="-data-"]')).filter(el => {
      const r = el.getBoundingClientRect(); return r.width > 0 || r.height > 0; }).length;
    const texts = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim())
      .map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
    for (let i = 0; i < texts.length; i++) {
      const [a, ra] = texts[i];
      if (ra.left < box.left - 1 || ra.right > box.right + 1 || ra.top < box.top - 1 || ra.bottom > box.bottom + 1)
        outside.push(a);
      for (let j = i + 1; j < texts.length; j++) {
        const [b, rb] = texts[j];
        const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
        const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
        if (w > 0.5 && h > 0.5) overlaps.push([a, b]);
      }
    }
  }
  out.push([fig.id, !!svg, marks, notes, overlaps, outside, width, height]);
}
return out;
"""


def browser(width: int = 1280, height: int = 1000) -> Any:
    """A headless Chromium through Selenium, logging the page's console."""
    missing = [p for p in (CHROMIUM, DRIVER) if shutil.which(p) is None]
    if missing:
        raise RuntimeError(f"{' and '.join(missing)} not found: apt-get install chromium chromium-driver "
                           "(.ci/run does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def layout(driver: Any) -> list[list[Any]]:
    """:data:`LAYOUT_JS` on the page ``driver`` shows."""
    result: list[list[Any]] = driver.execute_script(LAYOUT_JS)
    return result


def layout_problems(figures: list[list[Any]]) -> list[str]:
    """Every figure that is empty axes, neither chart nor sentence, or has overlapping or clipped text."""
    problems = []
    for ident, svg, marks, notes, overlaps, outside, _, _ in figures:
        if svg and not marks:
            problems.append(f"{ident}: a chart without data")
        if not svg and not notes:
            problems.append(f"{ident}: neither a chart nor a sentence")
        problems += [f"{ident}: {a!r} overlaps {b!r}" for a, b in overlaps]
        problems += [f"{ident}: {t!r} is outside the figure" for t in outside]
    return problems


def screenshot(driver: Any, path: Path, selector: str | None = None) -> None:
    """A PNG of the element at ``selector`` (else of the whole page), however tall: through the
    DevTools protocol, since Selenium's element screenshot is blank beyond the window."""
    import base64

    box = driver.execute_script(
        "const e = arguments[0] ? document.querySelector(arguments[0]) : document.documentElement;"
        "const r = e.getBoundingClientRect();"
        "return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];", selector)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": box[0], "y": box[1], "width": max(1, box[2]), "height": max(1, box[3]), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))


def ink(png: Path) -> float:
    """The share of a screenshot's pixels that are not (near) white: 0 for a blank shot."""
    from PIL import Image

    with Image.open(png) as image:
        grey = image.convert("L")
        histogram = grey.histogram()
    return sum(histogram[:230]) / max(1, sum(histogram))
