from __future__ import annotations

from rocmlint.model import Applicability
from rocmlint.rule import Example, Rule


# Where the CUDA-only requirement goes instead, per kind of manifest (default: a `cuda` extra).
REMEDIES = {
    "requirements": "move it into a CUDA requirements file (requirements-cuda.txt)",
    "conda": "move it into a CUDA environment file (environment-cuda.yml)",
    "dockerfile": "install it only in the CUDA image",
}


class CudaOnlyDependency(Rule):
    """A required dependency that installs NVIDIA-only packages.

    ## What it does
    Reads `pyproject.toml` (`[project] dependencies`, Poetry dependencies and sources, uv
    indexes and `[tool.uv.sources]`), requirement and constraints files, `setup.cfg` and
    `setup.py` `install_requires` (read, never run), conda `environment.yml` files (their
    `pip:` lists read as requirement-file lines) and the `RUN pip install` lines of
    Dockerfiles, and reports required dependencies that only exist for NVIDIA GPUs: CUDA
    local versions (`torch==2.5.1+cu121`), CUDA wheel indexes
    (`https://download.pytorch.org/whl/cu121`), CUDA extras (`jax[cuda12]`,
    `tensorflow[and-cuda]`), CUDA wheels (`cupy-cuda12x`, `nvidia-cublas-cu12`,
    `onnxruntime-gpu`, a uv source URL of a `+cu124` wheel) and `flash-attn`.

    Requirement-file lines are read as pip reads them: options anywhere on a line
    (`torch==2.1.2+cu118 torchvision==0.16.2+cu118 --extra-index-url ...` is two CUDA builds
    and a CUDA index), several requirements on one line, and `-r`/`-c` includes, followed
    inside the project (a missing file, a cycle, a URL or a path outside the project is not
    followed; `rocmlint explain FILE:LINE` says which). An included file named for NVIDIA
    (`-r requirements-cuda.txt`) is silent on its own, so its CUDA-only lines are reported
    at the `-r` line of the file that pulls them in. An explicit uv index or Poetry source
    counts as required when a required dependency names it.

    Silent for optional dependencies (extras, dependency groups, explicit indexes), behind
    an environment marker that no ROCm machine matches (`sys_platform == 'win32'`), in
    files named for NVIDIA or another platform (`requirements-cuda.txt`, `requirements/xpu.txt`)
    or with a ROCm variant beside them (`requirements.txt` next to `requirements_amd.txt`),
    in Dockerfiles that do not build a ROCm image, and in lock files (pip-compile, uv,
    `pip freeze` output) unless they are named for ROCm. NVIDIA's runtime libraries
    (`nvidia-cublas-cu12`, ...) are reported once per file.

    ## Why is this bad?
    `pip install -e .` on a ROCm machine replaces its ROCm PyTorch with a CUDA build:
    `torch.version.hip` becomes `None` and every GPU call fails or falls back to the CPU.
    AMD's porting guides put this first, before any source change.

    ## Example
    ```toml
    [project]
    dependencies = ["torch==2.5.1+cu121", "numpy"]
    ```
    Use instead:
    ```toml
    [project]
    dependencies = ["torch>=2.5", "numpy"]

    [project.optional-dependencies]
    cuda = ["torch==2.5.1+cu121"]
    ```
    A `rocm` extra holds the ROCm counterparts (PyTorch from the ROCm wheel index,
    `cupy-rocm-*`, `jax[rocm]`, the ROCm flash-attention build), or none at all when the
    machine's own ROCm PyTorch should be used.

    ## Fix safety
    Unsafe: in `pyproject.toml` the requirement moves into the `cuda` extra, so NVIDIA
    users now ask for `pip install .[cuda]` to get what they had (with that extra the
    NVIDIA install is exactly the same). Elsewhere the finding is reported without a fix.

    ## References
    - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html
    - https://github.com/pytorch/pytorch/issues/187715
    """

    code = "ROC401"
    name = "cuda-only-dependency"
    message = "`{requirement}` installs NVIDIA-only bits ({reason}); {remedy}"
    language = "manifest"
    # An include matters when the file it names is named for NVIDIA (`-r requirements-cuda.txt`):
    # those names hold these words too, so plain `-r` lines need no word of their own.
    pattern = r"cu\d\d|cuda|CUDA|flash[-_]attn|nvidia|onnxruntime-gpu|tensorflow-gpu|tensorrt|trt|jetson"
    fix_applicability = Applicability.UNSAFE

    valid = (
        Example('[project]\nname = "x"\ndependencies = ["torch>=2.4", "numpy"]\n\n'
                '[project.optional-dependencies]\ncuda = ["cupy-cuda12x", "flash-attn>=2.6"]\n',
                filename="pyproject.toml"),
        Example("torch==2.5.1+cu121\ncupy-cuda12x\n", filename="requirements-cuda.txt"),
        Example("numpy\ncupy-cuda12x; sys_platform == 'win32'\n", filename="requirements.txt"),
        Example("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
                "RUN pip install torch --index-url https://download.pytorch.org/whl/cu124\n",
                filename="Dockerfile"),
        Example("FROM rocm/pytorch:latest\nRUN pip install --no-build-isolation flash-attn\n", filename="Dockerfile"),
    )
    invalid = (
        Example('[project]\nname = "x"\ndependencies = [\n    "torch==2.5.1+cu121",\n    "numpy",\n]\n',
                filename="pyproject.toml",
                expected='[project]\nname = "x"\ndependencies = [\n    "numpy",\n]\n\n'
                         '[project.optional-dependencies]\ncuda = ["torch==2.5.1+cu121"]\n',
                unsafe=True),
        Example("--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.5.1\n",
                filename="requirements.txt"),
        Example("name: train\ndependencies:\n  - python=3.11\n  - pip:\n    - jax[cuda12]\n",
                filename="environment.yml"),
        Example("FROM rocm/pytorch:latest\nRUN pip install --no-cache-dir cupy-cuda12x \\\n    numpy\n",
                filename="Dockerfile.rocm"),
        Example('from setuptools import setup\n\nsetup(name="x", install_requires=["flash-attn>=2.6", "numpy"])\n',
                filename="setup.py"),
        Example("numpy\ntorch==2.1.2+cu118 torchvision==0.16.2+cu118 --extra-index-url "
                "https://download.pytorch.org/whl/cu118\n", filename="requirements.txt"),
        Example('[tool.poetry.dependencies]\npython = "^3.10"\ntorch = { version = "^2.3", source = "cu121" }\n\n'
                '[[tool.poetry.source]]\nname = "cu121"\nurl = "https://download.pytorch.org/whl/cu121"\n'
                'priority = "explicit"\n', filename="pyproject.toml"),
    )

    def check(self, ctx) -> None:
        if ctx.kind in ("shell", "cmake"):
            return  # launchers and CMake files install nothing this rule reads
        # packaging costs ~60 ms to import: only for files the prefilter lets through.
        from rocmlint.manifest.fix import move_to_cuda_extra
        from rocmlint.manifest.kinds import named_for_rocm
        from rocmlint.manifest.nvidia import cuda_index, cuda_reason, is_nvidia_runtime_library
        from rocmlint.manifest.requirement import marker_reaches_rocm

        if ctx.for_nvidia_only:
            return
        manifest = ctx.manifest
        if manifest.lock and not named_for_rocm(ctx.path):
            return  # a lock records the environment it was resolved on; a ROCm lock must not hold CUDA
        for index in manifest.indexes:
            if not index.optional and cuda_index(index.url):
                ctx.report(index.span, f"package index `{index.url}` serves CUDA builds ({index.where}); "
                                       "keep it for the CUDA-specific requirements (a `cuda` extra or file)")
        found = [(d, reason) for d in manifest.dependencies
                 if not d.optional and marker_reaches_rocm(d.requirement.marker) and (reason := cuda_reason(d))]
        found += self._conda_torch(manifest, found)
        # NVIDIA's runtime libraries come as a set (a locked CUDA PyTorch): one finding for the set.
        libraries = [d for d, _ in found if is_nvidia_runtime_library(d)]
        for dependency, reason in found:
            if dependency in libraries[1:]:
                continue
            written = ctx.text(dependency.span)
            remedy = REMEDIES.get(ctx.kind, "make it optional (a `cuda` extra)")
            message = self.message.format(requirement=written, reason=reason, remedy=remedy)
            if dependency is (libraries[0] if libraries else None) and len(libraries) > 1:
                message += f"; {len(libraries) - 1} more NVIDIA runtime libraries follow"
            fix = move_to_cuda_extra(ctx, dependency) if ctx.kind == "pyproject" else None
            ctx.report(dependency.span, message, fix)
        self._included(ctx)

    @staticmethod
    def _conda_torch(manifest, found: list) -> list:
        """Conda's `pytorch` (torchvision, torchaudio) in an environment that installs a CUDA
        toolkit is that toolkit's build: no conda channel builds PyTorch for ROCm."""
        toolkit = next((d for d, _ in found if d.conda_spec is not None), None)
        if toolkit is None:
            return []
        return [(d, f"a CUDA build: this environment installs `{toolkit.conda_spec}`") for d in manifest.dependencies
                if d.conda_spec is not None and d.requirement.name.lower() in ("pytorch", "torchvision", "torchaudio")
                and all(d is not other for other, _ in found)]

    @staticmethod
    def _included(ctx) -> None:
        """`-r requirements-cuda.txt` in a file ROCm machines install: the included file is
        silent on its own (named for NVIDIA), but through this line its CUDA-only requirements
        are installed here too."""
        from rocmlint.manifest.kinds import named_for_another_platform
        from rocmlint.manifest.nvidia import cuda_index, cuda_reason
        from rocmlint.manifest.requirement import marker_reaches_rocm

        reported = set()
        for included in ctx.included:
            if included.manifest is None or included.line.constraints or included.line in reported \
                    or not all(named_for_another_platform(path) for path in included.chain[1:]):
                continue  # a file not named for a platform reports its own lines
            found = [f"package index `{i.url}` (line {included.line_of(i.span.start)})"
                     for i in included.manifest.indexes if not i.optional and cuda_index(i.url)]
            found += [f"`{d.requirement}` ({reason}, line {included.line_of(d.span.start)})"
                      for d in included.manifest.dependencies
                      if marker_reaches_rocm(d.requirement.marker) and (reason := cuda_reason(d))]
            if found:
                reported.add(included.line)
                more = f" and {len(found) - 2} more" if len(found) > 2 else ""
                ctx.report(included.line.span,
                           f"`-r {included.line.path}` installs NVIDIA-only requirements of {included.path} here: "
                           f"{'; '.join(found[:2])}{more}; include it only in the CUDA requirements")
