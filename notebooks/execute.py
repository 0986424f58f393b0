"""Executes a notebook headlessly with the GoNB kernel (used by run.sh).

    python3 execute.py NOTEBOOK.ipynb OUT.ipynb KERNEL.log

Prints one line per code cell — its number, its name (see titles), seconds,
ok or error — and the error of a failed cell. The
kernel's own output (its log, GoNB's messages) goes to KERNEL.log, next to
the executed copy OUT.ipynb, which is written even when a cell fails. Exits 1
if a cell failed.
"""

import html
import os
import re
import sys
import threading
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def titles(nb):
    """Names each code cell: the markdown just above it (its heading, else its
    first phrase), else the cell's first comment, else its first line of code."""
    names, above = {}, ""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            above = markdown_label(cell.source)
            continue
        if cell.cell_type != "code":
            continue
        comment = next((l.strip()[2:].strip() for l in cell.source.splitlines() if l.strip().startswith("//")), "")
        names[i], above = above or comment or first_code_line(cell.source), ""
    return names


def markdown_label(source):
    """A markdown cell's heading, else its first phrase (up to ':' or '.')."""
    lines = [l.strip() for l in source.splitlines() if l.strip()]
    if not lines:
        return ""
    heading = next((l for l in lines if l.startswith("#")), "")
    if heading:
        return heading.lstrip("#").strip()
    return re.split(r"[:.](\s|$)", lines[0], maxsplit=1)[0].strip("` ")


def first_code_line(source):
    """The first line of Go code, past GoNB's magics (%%, %noautoget, …) and
    import declarations."""
    code = re.sub(r"(?ms)^import\s*\(.*?^\)", "", source)
    for line in code.splitlines():
        s = line.strip()
        if s and not s.startswith(("%", "!", "import ")):
            return s
    return source.strip().splitlines()[0] if source.strip() else ""


HEARTBEAT_SECONDS = 30


def last_output_line(cell):
    """The last line of text a running cell has shown so far (a stream or plain
    text), or the text of its last HTML block on one line (e.g. a live
    progress display), or ""."""
    for out in reversed(cell.get("outputs", [])):
        text = out.get("text", "")
        data = out.get("data", {})
        if not text:
            text = data.get("text/plain", "")
        if not text and "text/html" in data:
            # A block of HTML (e.g. a progress display) reads as one line.
            text = html.unescape(re.sub(r"<[^>]*>", " ", data["text/html"]))
            text = " ".join(text.split())
        if isinstance(text, list):
            text = "".join(text)
        lines = [" ".join(l.split()) for l in re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()]
        lines = [l for l in lines if l]
        if lines:
            return lines[-1]
    return ""


def error_text(cell):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            text = out.get("ename", "") + ": " + out.get("evalue", "")
            return re.sub(r"\x1b\[[0-9;]*m", "", text).strip()
    return ""


def main(src, dst, log):
    nb = nbformat.read(src, as_version=4)
    names = titles(nb)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    width = len(str(len(code)))
    # The kernel inherits this process's stderr: its log goes to the file.
    sys.stdout.flush()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    started = {}
    running = {}  # the cell being executed: index → cell
    lock = threading.Lock()

    def label(cell_index):
        n = code.index(cell_index) + 1 if cell_index in code else cell_index
        return f"  cell {n:>{width}}/{len(code)}  {names.get(cell_index, '')[:60]:<60}"

    def start(cell, cell_index, **_):
        with lock:
            started[cell_index] = time.monotonic()
            running.clear()
            running[cell_index] = cell

    def heartbeat(stop):
        # A line at least every HEARTBEAT_SECONDS while a cell runs, with what
        # it shows, so that a long cell is never silent in the terminal.
        while not stop.wait(HEARTBEAT_SECONDS):
            with lock:
                items = list(running.items())
            for cell_index, cell in items:
                seconds = time.monotonic() - started[cell_index]
                try:
                    last = last_output_line(cell)[:100]
                except Exception:  # the client is changing the outputs
                    last = ""
                shown = f' — "{last}"' if last else ""
                print(f"{label(cell_index)} {seconds:7.0f} s  running{shown}", flush=True)

    def executed(cell, cell_index, execute_reply=None, **_):
        with lock:
            running.pop(cell_index, None)
        seconds = time.monotonic() - started.get(cell_index, time.monotonic())
        ok = (execute_reply or {}).get("content", {}).get("status", "ok") == "ok"
        print(f"{label(cell_index)} {seconds:7.1f} s  {'ok' if ok else 'ERROR'}", flush=True)

    client = NotebookClient(nb, kernel_name="gonb", timeout=3600,
                            resources={"metadata": {"path": os.path.dirname(os.path.abspath(src))}})
    client.on_cell_start = start
    client.on_cell_executed = executed
    failed = False
    stop = threading.Event()
    beat = threading.Thread(target=heartbeat, args=(stop,), daemon=True)
    beat.start()
    try:
        client.execute()
    except CellExecutionError:
        failed = True
    finally:
        stop.set()
        beat.join()
        nbformat.write(nb, dst)
    if failed:
        for n, i in enumerate(code, 1):
            text = error_text(nb.cells[i])
            if text:
                print(f"  cell {n} ({names.get(i, '')}) failed: {text[:2000]}", flush=True)
                break
        print(f"  the kernel's log: {log}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    try:
        sys.exit(main(*sys.argv[1:]))
    except Exception as e:  # stderr is the kernel's log by now
        print(f"  could not execute {sys.argv[1]}: {e!r} (the kernel's log: {sys.argv[3]})", flush=True)
        sys.exit(2)
