# syntax=docker/dockerfile:1
#
# gosqlenv on an NVIDIA GPU: JupyterLab with the GoNB kernel registered against this
# checkout, Go at the version go.mod's toolchain line asks for, the CUDA PJRT plugin
# and the CUDA libraries from JAX's pip packages, the bundled dataset generated and
# the Go build cache warm.
#
#   docker build -t gosqlenv .
#   docker run --gpus all -p 8888:8888 gosqlenv                  (JupyterLab; token in the log)
#   docker run --gpus all gosqlenv bash notebooks/run.sh         (headless run of train_grpo.ipynb)
#
# Needs an NVIDIA driver >= 580 (CUDA 13) on the host and the NVIDIA Container Toolkit.
# Without a GPU, add -e GOMLX_BACKEND=go to run the tiny CPU preset instead.
# linux/amd64 only (the pinned Go archive is the amd64 one).

# The CUDA base only brings the container runtime's settings (NVIDIA_VISIBLE_DEVICES,
# NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_CUDA=cuda>=13.0) and Ubuntu 24.04: the
# CUDA libraries XLA uses (cuBLAS, cuDNN, NCCL, ptxas, libdevice) come from the pip
# wheels below, so the larger cudnn-runtime and devel variants would only duplicate
# them. cgo needs gcc and the libc headers only (go-sqlite3 compiles SQLite; go-xla
# links libc/-ldl and opens the PJRT plugin at run time).
ARG CUDA_IMAGE=nvidia/cuda:13.0.2-base-ubuntu24.04

# ---------------------------------------------------------------------------------------
# Go, from the Go team's toolchain distribution: the module golang.org/toolchain on
# proxy.golang.org is what GOTOOLCHAIN=auto downloads (the release archive's files, as
# a zip). Its SHA-256 below was computed from the proxy's zip after `go mod download`
# had verified that zip against sum.golang.org
# (h1:8Tl0rBb7KdISSdPkZBjlpZxsUBb+004GI/SM2XbmSqI=).
FROM ${CUDA_IMAGE} AS go
ARG GO_VERSION=1.27.4
ARG GO_ZIP_SHA256=7ecd542f86ccbbb5017de33ac529872bc48c71f4edb658d63a18d2206f482b9b
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl unzip \
 && rm -rf /var/lib/apt/lists/*
RUN mod="golang.org/toolchain@v0.0.1-go${GO_VERSION}.linux-amd64" \
 && curl -fsSL -o /tmp/go.zip "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go${GO_VERSION}.linux-amd64.zip" \
 && echo "${GO_ZIP_SHA256}  /tmp/go.zip" | sha256sum -c - \
 && unzip -q /tmp/go.zip -d /tmp/go \
 && mv "/tmp/go/${mod}" /usr/local/go \
 && rm -rf /tmp/go /tmp/go.zip \
 && /usr/local/go/bin/go version | grep -F "go${GO_VERSION} linux/amd64"

# ---------------------------------------------------------------------------------------
FROM ${CUDA_IMAGE}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive

# gcc + libc6-dev for cgo; g++ for training/verify (it compiles model-written C++)
# and bubblewrap, which confines what it compiles and runs (as the image's
# non-root user it needs user namespaces: docker run --security-opt
# seccomp=unconfined --security-opt apparmor=unconfined --security-opt
# systempaths=unconfined; without them the verifier refuses, with an error
# that says so, and runs nothing; see README "Docker (GPU)");
# git for Go's VCS stamping when a checkout is mounted; tini reaps the processes GoNB
# starts for each cell.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      bubblewrap ca-certificates g++ gcc git libc6-dev python3 python3-venv tini \
 && rm -rf /var/lib/apt/lists/*

# JupyterLab, and the CUDA PJRT plugin with the NVIDIA libraries, in one venv.
# jax[cuda13] pins jaxlib, jax-cuda13-plugin and jax-cuda13-pjrt to JAX_VERSION and pulls
# the nvidia-* CUDA 13 wheels (cuBLAS, cuDNN, NCCL, nvJitLink, ptxas, libdevice, ...)
# at versions the plugin accepts; `pip freeze` records what was resolved.
ARG JAX_VERSION=0.11.2
ARG JUPYTERLAB_VERSION=4.5.7
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir \
      "jax[cuda13]==${JAX_VERSION}" \
      "jax-cuda13-pjrt==${JAX_VERSION}" \
      "jax-cuda13-plugin==${JAX_VERSION}" \
      "jupyterlab==${JUPYTERLAB_VERSION}" \
 && /opt/venv/bin/pip freeze > /opt/venv/pip-freeze.txt

# Ubuntu 24.04's python3 is 3.12, hence this path (checked below).
ENV PY_SITE=/opt/venv/lib/python3.12/site-packages
# What README "GPU" exports, fixed for this image: the notebooks pick the
# real setup (Qwen/Qwen3-1.7B) when GOMLX_BACKEND names an XLA plugin. XLA finds ptxas
# and libdevice under --xla_gpu_cuda_data_dir. GOPJRT_CUDA_CHECKS=0 silences go-xla's
# warning that no nvidia/ folder sits next to the plugin (it only looks there to set
# the XLA_FLAGS given here).
ENV GOMLX_BACKEND=xla:${PY_SITE}/jax_plugins/xla_cuda13/xla_cuda_plugin.so \
    GOMLX_NO_AUTO_INSTALL=1 \
    GOPJRT_CUDA_CHECKS=0 \
    XLA_FLAGS=--xla_gpu_cuda_data_dir=${PY_SITE}/nvidia/cu13 \
    LD_LIBRARY_PATH=${PY_SITE}/nvidia/cu13/lib:${PY_SITE}/nvidia/cudnn/lib:${PY_SITE}/nvidia/nccl/lib:${PY_SITE}/nvidia/nvshmem/lib${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}
# Fail the build if the plugin is not where GOMLX_BACKEND points; list every
# nvidia/*/lib folder for the dynamic linker too (in case a wheel adds one that
# LD_LIBRARY_PATH above does not name); warn if XLA's tools are not in the data dir.
RUN if ! test -d "${PY_SITE}"; then echo "no ${PY_SITE}: python3 is not 3.12, fix PY_SITE" >&2; exit 1; fi \
 && plugin="${GOMLX_BACKEND#xla:}" \
 && if ! test -f "${plugin}"; then echo "no CUDA PJRT plugin at ${plugin}" >&2; exit 1; fi \
 && ls -d "${PY_SITE}"/nvidia/*/lib | tee /etc/ld.so.conf.d/000-nvidia-pip.conf \
 && ldconfig \
 && if ! test -x "${PY_SITE}/nvidia/cu13/bin/ptxas"; then echo "WARNING: no ptxas in ${PY_SITE}/nvidia/cu13/bin" >&2; fi \
 && if ! compgen -G "${PY_SITE}/nvidia/cu13/nvvm/libdevice/libdevice*.bc" >/dev/null; then \
      echo "WARNING: no libdevice under ${PY_SITE}/nvidia/cu13/nvvm" >&2; fi

COPY --from=go /usr/local/go /usr/local/go

# A non-root user. Ubuntu 24.04 images ship a user "ubuntu" with uid 1000: it gives way,
# so that files written to mounted host folders belong to the usual first host user.
# Build with --build-arg USER_UID=$(id -u) to match yours.
ARG USER_UID=1000
RUN if id -u ubuntu >/dev/null 2>&1; then userdel ubuntu && rm -rf /home/ubuntu; fi \
 && useradd --create-home --uid "${USER_UID}" --shell /bin/bash gosqlenv \
 && install -d -o gosqlenv -g gosqlenv /home/gosqlenv/gosqlenv
USER gosqlenv
ENV HOME=/home/gosqlenv
WORKDIR /home/gosqlenv/gosqlenv

# What notebooks/run.sh exports, plus the paths it sets up: GoNB and goimports in .bin/,
# the kernel registered in .jupyter/ (Jupyter reads it from JUPYTER_DATA_DIR).
ENV GOTOOLCHAIN=auto \
    GOEXPERIMENT=simd \
    CGO_ENABLED=1 \
    JUPYTER_DATA_DIR=/home/gosqlenv/gosqlenv/.jupyter \
    PATH=/home/gosqlenv/gosqlenv/.bin:/home/gosqlenv/go/bin:/usr/local/go/bin:/opt/venv/bin:${PATH}

# Modules and tools first (a layer that survives source edits).
COPY --chown=gosqlenv:gosqlenv go.mod go.sum ./
RUN go mod download \
 && GOBIN=/home/gosqlenv/gosqlenv/.bin go install tool

COPY --chown=gosqlenv:gosqlenv . .
# Register the kernel exactly as run.sh does, generate the bundled dataset into
# ~/.cache/gosqlenv/bundled-v<N>, and build every package so that the first notebook
# cell only compiles itself.
RUN bash notebooks/run.sh --setup \
 && go run ./sqlenv/cmd/sqlenv generate \
 && go build ./... \
 && test -f .jupyter/kernels/gonb/kernel.json

EXPOSE 8888
ENTRYPOINT ["/usr/bin/tini", "--"]
# The token: set one with -e JUPYTER_TOKEN=...; otherwise Jupyter makes one and prints
# the URL with it in the container's log (docker logs <container>).
CMD ["jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser", \
     "--ServerApp.root_dir=/home/gosqlenv/gosqlenv/notebooks"]
