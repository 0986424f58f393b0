#!/usr/bin/env bash
# Runs a notebook of this repository headlessly with the GoNB kernel and
# writes the executed copy (with its outputs) to notebooks/out/, and the
# kernel's own log beside it (notebooks/out/NAME.kernel.log). The terminal
# gets one line per cell: number, heading, seconds, ok or ERROR.
#
#   bash notebooks/run.sh [NOTEBOOK.ipynb ...]     (default: notebooks/train_grpo.ipynb)
#   bash notebooks/run.sh --setup                  (install and register the kernel only)
#
# On a fresh Debian/Ubuntu machine it installs what is missing: Jupyter's
# nbconvert from the system packages (as root), GoNB and goimports at the
# versions pinned by go.mod's tool directives (into .bin/), and registers the
# kernel against this checkout (in .jupyter/). It exits non-zero if any cell
# fails. Settings reach the notebooks as GOSQLENV_<FIELD> environment
# variables; GOMLX_BACKEND selects the GPU (see README).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
caller="$(pwd)"
# Exactly go.mod's toolchain, for this script and for the kernel's cells:
# with plain "auto", GoNB's generated go.work (go 1.27, no toolchain line)
# builds the cells with go1.27.0, recompiling the standard library and cgo's
# SQLite for a second toolchain. "+auto" still lets a newer requirement win.
toolchain="$(sed -n 's/^toolchain //p' "$repo/go.mod")"
export GOTOOLCHAIN="${toolchain:+$toolchain+}auto"
export GOEXPERIMENT=simd         # ~14x faster pure-Go backend
export CGO_ENABLED=1

setup_only=false
notebooks=()
for a in "$@"; do
  case "$a" in
    --setup) setup_only=true ;;
    /*) notebooks+=("$a") ;;
    *) notebooks+=("$caller/$a") ;;  # relative to where run.sh was called from
  esac
done
cd "$repo"
[ ${#notebooks[@]} -gt 0 ] || notebooks=("$repo/notebooks/train_grpo.ipynb")
for nb in "${notebooks[@]}"; do
  [ -f "$nb" ] || { echo "no notebook $nb" >&2; exit 1; }
done

# Jupyter: Debian's packages (the tools live in /usr/bin; a pyenv python on
# PATH cannot import them). execute.py drives the kernel with nbclient, which
# nbconvert brings.
python=/usr/bin/python3
if ! [ -x "$python" ] || ! "$python" -c 'import nbclient, nbformat, jupyter_client' 2>/dev/null; then
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import nbclient, nbformat, jupyter_client' 2>/dev/null; then
    python="$(command -v python3)"
  elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing jupyter-nbconvert (apt)…" >&2
    export DEBIAN_FRONTEND=noninteractive
    # Wait (up to 10 min) for another apt or dpkg holding the lock.
    apt-get -o DPkg::Lock::Timeout=600 update -qq &&
      apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends jupyter-nbconvert jupyter-client >/dev/null
  else
    echo "Jupyter's nbconvert/nbclient is missing: install it (Debian/Ubuntu: sudo apt-get install jupyter-nbconvert jupyter-client; elsewhere: pip install nbconvert jupyter_client)" >&2
    exit 1
  fi
fi
if ! command -v gcc >/dev/null 2>&1; then
  echo "a C compiler is needed for cgo (SQLite): apt-get install gcc" >&2
  exit 1
fi

# GoNB and goimports, pinned by go.mod; gopls below.
mkdir -p .bin
echo "installing GoNB and goimports into .bin (go install tool; the first time compiles them)…" >&2
GOBIN="$repo/.bin" go install tool
export PATH="$repo/.bin:$PATH"
# GoNB says a failed cell's "exit status N" twice: on the cell's stderr and as
# the cell's error. The kernel is rebuilt from the pinned module with that one
# line changed (the error stays, the stderr copy goes): from a copy of its
# sources in .bin/gonb-src (the Go command refuses overlays of the module
# cache), put in place of the module by a copy of go.mod with a replace line,
# so that every other module is at go.mod's version. Only the kernel binary
# changes: cells still import gonbui as it is.
gonb_mod="$(go list -m -f '{{.Dir}}' github.com/janpfeifer/gonb)"
gonb_src="$repo/.bin/gonb-src"
if ! [ -f "$gonb_src/.from" ] || [ "$(cat "$gonb_src/.from")" != "$gonb_mod" ]; then
  rm -rf "$gonb_src" && mkdir -p "$gonb_src"
  (cd "$gonb_mod" && tar cf - --exclude=./docs --exclude=./examples --exclude='*_test.go' .) | tar xf - -C "$gonb_src"
  chmod -R u+w "$gonb_src"
  jpyexec="$gonb_src/internal/jpyexec/jpyexec.go"
  sed -i 's/^\tif exec\.exitError != nil {$/\tif exec.exitError != nil \&\& !exec.useNamedPipes { \/\/ gosqlenv: said once, as the cell'"'"'s error/' "$jpyexec"
  if [ "$(grep -c 'gosqlenv: said once' "$jpyexec")" != 1 ]; then
    echo "GoNB at $gonb_mod: the exit-status line to change is not where run.sh expects it (a new GoNB version?): update run.sh" >&2
    exit 1
  fi
  echo "$gonb_mod" > "$gonb_src/.from"
fi
cp go.mod "$gonb_src/kernel.mod"
cp go.sum "$gonb_src/kernel.sum"
go mod edit -modfile="$gonb_src/kernel.mod" -replace "github.com/janpfeifer/gonb=$gonb_src"
GOBIN="$repo/.bin" go install -modfile="$gonb_src/kernel.mod" github.com/janpfeifer/gonb
# gopls gives GoNB its completion and inspection when a person edits cells
# (pinned here, not in go.mod: as a tool dependency it would upgrade modules
# the project's code uses); a headless run does not need it.
gopls_version=v0.23.0
if $setup_only && ! "$repo/.bin/gopls" version 2>/dev/null | grep -q " $gopls_version\$"; then
  echo "installing gopls $gopls_version…" >&2
  GOBIN="$repo/.bin" go install "golang.org/x/tools/gopls@$gopls_version"
fi

# The kernel, registered against this checkout (cells import the module's packages).
export JUPYTER_DATA_DIR="$repo/.jupyter"
gonb --install --force_deps --raw_error --go_work="$repo" >/dev/null 2>&1

# Compile what the notebooks import now, with the toolchain and flags the
# kernel's cells use, so that the first cell only links (the first time on a
# machine this compiles GoMLX and SQLite: a few minutes).
echo "compiling the packages the notebooks import ($(go env GOVERSION), GOEXPERIMENT=$GOEXPERIMENT)…" >&2
build_start=$SECONDS
go build ./notebooks/nb ./training/plots ./training/report
echo "compiled in $(( SECONDS - build_start )) s" >&2
if $setup_only; then
  # The command printed below runs the classic Notebook: install it as root
  # (Debian's package), else say how.
  if ! jupyter notebook --version >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing jupyter-notebook (apt)…" >&2
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends jupyter-notebook >/dev/null ||
        { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
          DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends jupyter-notebook >/dev/null; }
    fi
    if ! jupyter notebook --version >/dev/null 2>&1; then
      echo "GoNB kernel registered in $JUPYTER_DATA_DIR, but Jupyter Notebook is missing: install it (Debian/Ubuntu: sudo apt-get install jupyter-notebook; elsewhere: pip install notebook), then start it with:" >&2
      root_flag=""
      [ "$(id -u)" = 0 ] && root_flag=" --allow-root"
      echo "  JUPYTER_DATA_DIR=$JUPYTER_DATA_DIR PATH=$repo/.bin:\$PATH GOTOOLCHAIN=$GOTOOLCHAIN GOEXPERIMENT=simd jupyter notebook$root_flag $repo/notebooks" >&2
      echo "(any Jupyter front end — JupyterLab, VS Code — works with the same JUPYTER_DATA_DIR and PATH)" >&2
      exit 0
    fi
  fi
  echo "GoNB kernel registered in $JUPYTER_DATA_DIR; start Jupyter with:" >&2
  root_flag=""
  [ "$(id -u)" = 0 ] && root_flag=" --allow-root"  # Jupyter refuses root without it
  echo "  JUPYTER_DATA_DIR=$JUPYTER_DATA_DIR PATH=$repo/.bin:\$PATH GOTOOLCHAIN=$GOTOOLCHAIN GOEXPERIMENT=simd jupyter notebook$root_flag $repo/notebooks" >&2
  exit 0
fi

mkdir -p notebooks/out
status=0
for nb in "${notebooks[@]}"; do
  name="$(basename "$nb")"
  log="notebooks/out/${name%.ipynb}.kernel.log"
  echo "$nb → notebooks/out/$name (kernel log: $log)"
  start=$(date +%s)
  if ! "$python" notebooks/execute.py "$nb" "notebooks/out/$name" "$log"; then
    echo "FAILED: $nb ($(( $(date +%s) - start )) s)"
    status=1
  else
    echo "done: $nb ($(( $(date +%s) - start )) s)"
  fi
done
echo "run.sh: ${SECONDS} s in all (setup and Go builds included)"
exit $status
