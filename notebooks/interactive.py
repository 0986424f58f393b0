"""Drives a notebook's cells through a real GoNB kernel the way a person does:
one cell at a time, in an order given on the command line, with re-runs and
kernel restarts (used by notebooks_test.go).

    python3 interactive.py NOTEBOOK.ipynb STEP...

Each STEP is a code cell's number (1 = the notebook's first code cell),
"stop:N:TEXT" (run cell N and press the stop button — interrupt the kernel —
as soon as one of its outputs contains TEXT), "restart", or "complete:CODE"
(ask the kernel to complete CODE at its end, as Tab does; prints
{"complete": CODE, "matches": [...]}). Prints one JSON object per executed cell on stdout:
{"cell": n, "status": "ok" | "error", "seconds": s, "texts": [...],
"error": "..."}, where seconds is the wall time from request to idle and
texts are the cell's outputs as text (HTML with its tags removed), in order.
The kernel must be registered (run.sh --setup) and JUPYTER_DATA_DIR set.
"""

import html
import json
import os
import queue
import re
import sys
import time

import nbformat
from jupyter_client.manager import start_new_kernel

TIMEOUT = 600  # seconds for one cell (the first compiles the notebook's packages)
LATE_OUTPUT = 0.5  # seconds to wait for outputs after the kernel went idle


def as_text(content):
    data = content.get("data", {})
    if "text/html" in data:
        text = html.unescape(re.sub(r"<[^>]*>", " ", data["text/html"]))
    elif "text/markdown" in data:
        text = data["text/markdown"]
    elif "text/plain" in data:
        text = data["text/plain"]
    else:
        text = content.get("text", "")
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())


def run_cell(client, source, stop_at=None, interrupt=None):
    """Runs source; with stop_at, calls interrupt() once an output holds it."""
    msg_id = client.execute(source, store_history=True)
    texts, status, error = [], "ok", ""
    while True:
        msg = client.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind in ("display_data", "update_display_data", "execute_result", "stream"):
            t = as_text(content)
            if t:
                texts.append(t)
                if stop_at and stop_at in t:
                    interrupt()
                    stop_at = None
        elif kind == "error":
            status = "error"
            error = as_text({"text": content.get("ename", "") + ": " + content.get("evalue", "")})
        elif kind == "status" and content.get("execution_state") == "idle":
            break
    # GoNB forwards a cell program's displays from a pipe, so one can come
    # just after the kernel has gone idle: collect what arrives shortly after.
    while True:
        try:
            msg = client.get_iopub_msg(timeout=LATE_OUTPUT)
        except queue.Empty:
            break
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("display_data", "update_display_data", "execute_result", "stream"):
            t = as_text(msg["content"])
            if t:
                texts.append(t)
    reply = client.get_shell_msg(timeout=TIMEOUT)
    if reply["content"].get("status") != "ok":
        status = "error"
        error = error or as_text({"text": reply["content"].get("evalue", "")})
    return status, texts, error


def wait_for_iopub(client):
    """Waits until the client's IOPub subscription receives messages: a new
    client's subscription joins late (ZeroMQ's slow joiner), and a cell run
    before that loses its outputs (CI saw a cell after a restart answer ok
    with none). The kernel answers kernel_info with a busy/idle pair on IOPub."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        msg_id = client.kernel_info()
        client.get_shell_msg(timeout=TIMEOUT)
        try:
            while True:
                msg = client.get_iopub_msg(timeout=1)
                if msg["parent_header"].get("msg_id") == msg_id:
                    return
        except queue.Empty:
            continue
    raise RuntimeError("the kernel's IOPub channel sends nothing")


def main(path, steps):
    nb = nbformat.read(path, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    cwd = os.path.dirname(os.path.abspath(path))
    km, client = start_new_kernel(kernel_name="gonb", cwd=cwd)
    wait_for_iopub(client)
    try:
        for step in steps:
            if step == "restart":
                km.restart_kernel(now=True)
                client.stop_channels()
                client = km.client()
                client.start_channels()
                client.wait_for_ready(timeout=TIMEOUT)
                wait_for_iopub(client)
                print(json.dumps({"restart": True}), flush=True)
                continue
            if step.startswith("complete:"):
                text = step[len("complete:"):]
                # Like a person pressing Tab again while gopls starts (after a
                # restart or a change its first answers can be empty): up to 30 tries.
                for _ in range(30):
                    client.complete(text, len(text))
                    matches = client.get_shell_msg(timeout=TIMEOUT)["content"].get("matches", [])
                    if matches:
                        break
                    time.sleep(1)
                print(json.dumps({"complete": text, "matches": matches}), flush=True)
                continue
            stop_at = None
            if step.startswith("stop:"):
                _, n, stop_at = step.split(":", 2)
                step = n
            n = int(step)
            start = time.monotonic()
            status, texts, error = run_cell(client, code[n - 1], stop_at, km.interrupt_kernel)
            seconds = round(time.monotonic() - start, 2)
            print(json.dumps({"cell": n, "status": status, "seconds": seconds, "texts": texts, "error": error}), flush=True)
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
