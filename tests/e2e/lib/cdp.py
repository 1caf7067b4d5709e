#!/usr/bin/python3
"""Load report.html pages in headless Chromium and report what a reader's browser sees.

Talks to Debian's chromium over its DevTools protocol on a pipe (--remote-debugging-pipe:
commands on fd 3, replies on fd 4, NUL-separated JSON), with the standard library only.
For each page: console messages and uncaught exceptions, every network request that is
not the file itself, and facts read from the DOM (verdict, configuration rows, figures,
header colour, any <script> or <img>); a full-page PNG screenshot is saved.

usage: cdp.py OUTDIR PAGE.html...   writes OUTDIR/<name>.png per page (<name>: the page's
directory), prints one JSON object per page on stdout. OQ_SHOT_HEIGHT limits the screenshot
to the top of the page (pixels; default 6000). Exit 2 when chromium cannot be started or a
page not loaded.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe", "about:blank"]

FACTS = r"""(() => {
  const h = document.getElementById('verdict');
  return {
    title: document.title,
    verdict: h ? h.dataset.verdict : null,
    headline: h ? h.querySelector('h1').textContent : null,
    header_background: h ? getComputedStyle(h).backgroundColor : null,
    configs: [...document.querySelectorAll('[data-config]')].map(e => e.dataset.config),
    failed_rows: document.querySelectorAll('tr.failed[data-config]').length,
    error_rows: document.querySelectorAll('tr.error[data-config]').length,
    reason: (document.getElementById('verdict-reason') || {}).textContent || null,
    counts: (document.getElementById('verdict-counts') || {}).textContent || null,
    statuses: Object.fromEntries([...document.querySelectorAll('tr[data-config]')].map(r =>
        [r.dataset.config, (r.querySelector('td.status') || {}).textContent || null])),
    refusals: [...document.querySelectorAll('.refusal')].map(e => ({pattern: e.dataset.pattern,
        text: e.innerText, raw: (e.querySelector('details.raw pre') || {}).textContent || null,
        raw_open: !!(e.querySelector('details.raw') || {}).open})),
    padding_notes: [...document.querySelectorAll('.padding-note')].map(e => e.textContent),
    no_figures: !!document.getElementById('no-figures'),
    mask_input: (document.querySelector('tr.mask-input code') || {}).textContent || null,
    expected_files: [...document.querySelectorAll('.expected-files li code')].map(e => e.textContent),
    figures: document.querySelectorAll('figure svg').length,
    series: Object.fromEntries([...document.querySelectorAll('figure')].map(f => [f.id,
        [...f.querySelectorAll('g.series')].map(g => [g.dataset.label, g.querySelectorAll('.pt').length])])),
    scripts: document.querySelectorAll('script').length,
    images: document.querySelectorAll('img').length,
    pwned: window.__pwned === undefined ? null : window.__pwned,
    command: (document.getElementById('command-line') || {}).textContent || null,
    text: document.body.innerText.length,
  };
})()"""


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="oq-chromium-")
        to_child, self.cmd_w = os.pipe()
        self.resp_r, from_child = os.pipe()

        def wire():  # the child reads commands on fd 3 and writes replies on fd 4
            r, w = os.dup(to_child), os.dup(from_child)  # out of the way of 3 and 4 first
            os.dup2(r, 3)
            os.dup2(w, 4)

        exe = shutil.which("chromium") or "/usr/bin/chromium"
        # pass_fds: what survives the close-fds step, which runs after preexec_fn
        self.proc = subprocess.Popen([exe, "--user-data-dir=" + self.profile] + FLAGS,
                                     pass_fds=(3, 4), preexec_fn=wire,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def read(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.resp_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_event(self, method, session, timeout=30):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            m = self.read(deadline)
            if m.get("method") == method and m.get("sessionId") == session:
                return m
            self.events.append(m)

    def close(self):
        try:
            if self.proc.poll() is None:
                self.send("Browser.close", timeout=10)
        except Exception:
            self.proc.kill()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


def problems_of(events, session, page_url):
    out = []
    for e in events:
        if e.get("sessionId") != session:
            continue
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            out.append("console " + p["type"] + ": " + " ".join(str(a.get("value", a.get("description")))
                                                               for a in p.get("args", [])))
        elif m == "Runtime.exceptionThrown":
            out.append("exception: " + p["exceptionDetails"].get("text", ""))
        elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            out.append("log " + p["entry"]["level"] + ": " + p["entry"]["text"])
        elif m == "Network.requestWillBeSent" and p["request"]["url"] != page_url:
            out.append("request: " + p["request"]["url"])
    return out


def visit(b, path, shot):
    url = "file://" + os.path.abspath(path)
    target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    s = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        b.send(domain + ".enable", session=s)
    b.send("Emulation.setDeviceMetricsOverride",
           {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
    b.send("Page.navigate", {"url": url}, session=s)
    b.wait_event("Page.loadEventFired", s)
    facts = b.send("Runtime.evaluate", {"expression": FACTS, "returnByValue": True}, session=s)
    facts = facts["result"]["value"]
    size = b.send("Page.getLayoutMetrics", session=s)["cssContentSize"]
    height = min(int(size["height"]), int(os.environ.get("OQ_SHOT_HEIGHT", "6000")))
    png = b.send("Page.captureScreenshot",
                 {"format": "png", "captureBeyondViewport": True,
                  "clip": {"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}}, session=s)
    with open(shot, "wb") as f:
        import base64
        f.write(base64.b64decode(png["data"]))
    time.sleep(0.2)  # late console messages, if any
    b.send("Runtime.evaluate", {"expression": "1"}, session=s)
    facts["problems"] = problems_of(b.events, s, url)
    facts["page"] = path
    facts["screenshot"] = shot
    facts["screenshot_height"] = height
    b.send("Target.closeTarget", {"targetId": target})
    return facts


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    outdir, pages = sys.argv[1], sys.argv[2:]
    os.makedirs(outdir, exist_ok=True)
    b = None
    try:
        b = Browser()
        b.send("Browser.getVersion", timeout=60)
    except Exception as e:
        print(f"cdp.py: cannot start chromium: {e}", file=sys.stderr)
        if b:
            b.close()
        return 2
    try:
        for page in pages:
            name = os.path.basename(os.path.dirname(os.path.abspath(page))) or "page"
            print(json.dumps(visit(b, page, os.path.join(outdir, name + ".png"))), flush=True)
    except Exception as e:
        print(f"cdp.py: {e}", file=sys.stderr)
        return 2
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
