"""Run checks or fixes over many files: cache, process pool, atomic writes."""
from __future__ import annotations

import gc
import itertools
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

from .cache import Cache, content_hash
from .cache import default_dir as default_cache_dir
from .discovery import Target
from .engine import (FileResult, active_rules, analyse_buffer, engine_finding, internal_error, prepare_rules,
                     selected_languages)
from .languages import get_language, language_for
from .lazy_re import compile_waiting
from .model import Applicability
from .project import ModelDeferred, Project, activate
from .project.summaries import included_names
from .project import active as active_project
from .source import SourceError, atomic_write, read_source

# Joins a cache key and the project model's facts a file's results used.
MODEL_KEY = "|model:"
# Below this many files a pool costs more than it saves (pre-commit runs on a few).
PARALLEL_THRESHOLD = 24
# Jobs per pool task: each task is a round trip through the pool's queues and threads
# (~0.3 s of 2,300 one-file tasks on the torch package, more than the second core saved);
# small enough that a few huge files still spread over the workers (32: 3-5% faster than
# 16 on the torch package and CUTLASS; the files that wait for the model go 2 at a time).
BATCH_SIZE = 32
Item = TypeVar("Item")


@dataclass(frozen=True)
class Job:
    target: Target
    language: str
    rules: tuple  # the active Rule instances for this file (decided before dispatch)
    mode: str  # "check" | "fix" | "diff"
    unsafe: bool = False
    cache: bool = False  # hash the content for the result cache
    build_fixes: bool = True  # check mode: fix edits are shown (json, sarif, github), not only counted

    def __reduce__(self):
        # To a worker the rules travel as their codes and come back as that process's own
        # instances: one set per rule selection, not new objects with every job.
        codes = tuple(rule.code for rule in self.rules)
        if _registered(self.rules):
            return (_job_with_rules, (self.target, self.language, codes, self.mode, self.unsafe, self.cache,
                                      self.build_fixes))
        return (Job, (self.target, self.language, self.rules, self.mode, self.unsafe, self.cache, self.build_fixes))


def _registered(rules: tuple) -> bool:
    from .registry import all_rules

    known = all_rules()
    return all(known.get(rule.code) is type(rule) for rule in rules)


_RULE_SETS: dict[tuple[str, ...], tuple] = {}


def _job_with_rules(target: Target, language: str, codes: tuple[str, ...], *rest) -> Job:
    rules = _RULE_SETS.get(codes)
    if rules is None:
        from .registry import all_rules

        known = all_rules()
        rules = _RULE_SETS[codes] = tuple(known[code]() for code in codes)
    return Job(target, language, rules, *rest)


def run_job(job: Job) -> FileResult:
    """One file; a crash in a rule or fixer is reported for that file, the run goes on."""
    try:
        return _run_job(job)
    except Exception as exc:  # noqa: BLE001 - isolate one file's failure
        import traceback

        details = traceback.format_exc() if os.environ.get("ROCMLINT_DEBUG") else ""
        return crashed(job, f"{type(exc).__name__}: {exc}", details)


def crashed(job: Job, summary: str, details: str = "") -> FileResult:
    """The result of a file rocmlint crashed on: reported as not checked in every output
    format (ROC003), never as clean."""
    result = FileResult(path=job.target.path, display=job.target.display)
    result.findings = [internal_error(job.target.display, summary)]
    result.internal_error = summary + (f"\n{details}" if details else "")
    return result


def _run_job(job: Job) -> FileResult:
    project = active_project()
    if project is not None:
        project.begin_file()
    result = _read_and_analyse(job, project)
    if project is not None:
        result.parts_used = tuple(sorted(project.used))
        result.facts = tuple(project.facts)
        result.set_aside = project.set_aside
        result.unjudged_extents = tuple(project.unjudged_extents)
    return result


def _read_and_analyse(job: Job, project: Project | None) -> FileResult:
    target = job.target
    result = FileResult(path=target.path, display=target.display)
    try:
        source = read_source(target.path, job.language)
    except SourceError as exc:
        result.findings = [engine_finding("ROC002", target.display, str(exc))]
        return result
    if job.language == "cpp":  # what it #includes may be C-family whatever its name (discovery)
        result.includes = included_names(source.raw)
    if project is not None and project.deferring:  # first pass: summarise for the model too
        summaries = project.summarise(target.path, source.raw) or None
        result.summaries = summaries
        try:
            return _analyse_job(job, source, result)
        except ModelDeferred:
            return FileResult(path=target.path, display=target.display, deferred=True, summaries=summaries,
                              includes=result.includes)
    return _analyse_job(job, source, result)


def _analyse_job(job: Job, source, result: FileResult) -> FileResult:
    target = job.target
    language, rules, settings = job.language, job.rules, target.settings

    def analyse(buffer: bytes):
        return analyse_buffer(target.display, buffer, language, settings, rules, build_fixes=job.build_fixes)

    if job.mode == "check":
        result.findings = analyse(source.buffer)
        if job.cache:
            result.content_hash = content_hash(source.raw)
        return result

    from rocmlint.fixers.apply import FixRejected

    try:
        outcome = fix_buffer(source.buffer, source.newline, target.display, language, settings,
                             rules, unsafe=job.unsafe, build_fixes=job.build_fixes)
    except FixRejected as exc:
        result.fix_error = str(exc)
        result.findings = analyse(source.buffer)
        return result
    result.findings = outcome.findings
    result.fixed_count = outcome.fixed
    if outcome.buffer == source.buffer:
        return result
    new_raw = source.encode(outcome.buffer)
    if job.mode == "diff":
        result.diff = unified_diff(target.display, source.raw, new_raw)
        return result
    try:
        if target.path.read_bytes() != source.raw:
            result.fix_error = "file changed while rocmlint was fixing it; not written"
            result.findings = analyse(source.buffer)
            result.fixed_count = 0
            return result
        atomic_write(target.path, new_raw)
    except OSError as exc:
        result.fix_error = f"cannot write: {exc.strerror or exc}"
        result.fixed_count = 0
        return result
    result.new_raw = new_raw
    return result


def fix_buffer(buffer: bytes, newline: str, display: str, language: str, settings, rules, *,
               unsafe: bool, build_fixes: bool = True, only=None):
    """Fixed buffer and remaining findings; raises FixRejected when a check fails.
    ``build_fixes=False``: the remaining findings' fixes are only counted, so only the
    fixes this run applies are built. ``only``: apply just these findings of ``buffer``
    (an editor's quick fix), one round, with the same checks (no re-lint: no findings remain)."""
    from rocmlint.fixers.apply import fix_to_fixpoint

    lang = get_language(language)
    applied = frozenset({Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE})
    build: bool | frozenset[Applicability] = True if build_fixes else applied

    def analyse(b: bytes) -> list:
        if only is not None:
            return list(only) if b is buffer else []
        return analyse_buffer(display, b, language, settings, rules, build_fixes=build)

    return fix_to_fixpoint(
        buffer,
        analyse,
        unsafe=unsafe, newline=newline,
        syntax_errors=lambda b: lang.syntax_errors(b, display),
        nvidia_view=lambda b: lang.nvidia_view(b, display, settings),
        new_syntax_errors=(lambda a, b: lang.new_syntax_errors(a, b, display, settings))
        if hasattr(lang, "new_syntax_errors") else None,
    )


def unified_diff(display: str, before: bytes, after: bytes) -> str:
    import difflib

    a = before.decode("utf-8", errors="replace").splitlines(keepends=True)
    b = after.decode("utf-8", errors="replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=f"a/{display}", tofile=f"b/{display}"))


def run_batch(batch: tuple[Job, ...]) -> list[FileResult]:
    """One pool task: a few jobs, in order; Ctrl-C stops it after the file in hand."""
    return _run_collecting(batch)


def run_in_process(jobs: Iterable[Job]) -> list[FileResult]:
    """The jobs one after the other here, the collector run as a worker runs it (never full
    passes over a heap that grows with the results and the model: a third of a one-process
    run's time on CUTLASS)."""
    with collector_paused():
        return _run_collecting(jobs)


def _run_collecting(jobs: Iterable[Job]) -> list[FileResult]:
    """The jobs in order, with the collector's young generation swept after each file (its
    reference cycles: a context and its gate evaluator, its tree); the caller has paused the
    automatic passes. A worker's Ctrl-C stops it after the file in hand."""
    results = []
    for job in jobs:
        if _interrupted:
            raise KeyboardInterrupt
        results.append(run_job(job))
        gc.collect(0)
    return results


def batches(items: Iterable[Item], size: int) -> Iterator[tuple[Item, ...]]:
    """``items`` in consecutive groups of ``size`` (the last may be shorter)."""
    iterator = iter(items)
    while batch := tuple(itertools.islice(iterator, size)):
        yield batch


def run_parallel(todo: Iterable[Job], workers: int, batch_size: int = BATCH_SIZE,
                 while_waiting: Callable[[], None] | None = None) -> list[FileResult]:
    """Every job's result, from a pool of forked workers (BATCH_SIZE jobs per task).

    A worker that dies (a crash in a C extension, the OOM killer) breaks the pool and takes
    the queued jobs with it. They are run again: the first few batches, in flight when it
    broke (work is handed out in order), one job per process, so the file that kills its
    process is reported as an internal error; the rest in a fresh pool. ``while_waiting``
    runs in the parent once every job is handed out (the workers are forked by then).
    """
    with collector_paused():  # the parent only unpickles results: nothing cyclic to free
        return _run_pools(todo, workers, batch_size, while_waiting)


def _run_pools(todo: Iterable[Job], workers: int, batch_size: int,
               while_waiting: Callable[[], None] | None = None) -> list[FileResult]:
    # ~10 ms to import: only for big runs.
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    results: list[FileResult] = []
    remaining: Iterable[Job] = todo
    while True:
        lost: list[Job] = []
        submitted: list[tuple[tuple[Job, ...], Future[list[FileResult]]]] = []
        # Ctrl-C: workers stop after the file in hand; the parent drops the queue and exits.
        # The workers' collector skips what they inherit (forked, never freed by them).
        compile_waiting()  # once here, not once per worker
        gc.freeze()
        pool = ProcessPoolExecutor(workers, mp_context=get_context("fork"), initializer=_start_worker)
        try:
            for batch in batches(remaining, batch_size):
                try:
                    submitted.append((batch, pool.submit(run_batch, batch)))
                except BrokenProcessPool:
                    lost.extend(batch)  # the pool broke while discovery was still feeding it
            if while_waiting is not None:
                while_waiting()
                while_waiting = None
            names: dict[str, str] = {}
            for batch, future in submitted:
                try:
                    done = future.result()
                except BrokenProcessPool:
                    lost.extend(batch)
                    continue
                for job, result in zip(batch, done):
                    if result.path == job.target.path:
                        result.path = job.target.path  # one Path per file, not one more per result
                    if result.includes:  # one object per include name: a header is included by thousands
                        result.includes = tuple([names.setdefault(name, name) for name in result.includes])
                results.extend(done)
        except BaseException:  # Ctrl-C: cancel here, the pool's own cancelling can miss a freed pool
            for _job, future in submitted:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            gc.unfreeze()
        pool.shutdown()
        if not lost:
            return results
        lost_order = {id(job): n for n, job in enumerate(job for batch, _future in submitted for job in batch)}
        lost.sort(key=lambda job: lost_order.get(id(job), len(lost_order)))
        in_flight = (2 * workers + 1) * batch_size
        suspects, remaining = lost[:in_flight], lost[in_flight:]
        results.extend(run_alone(job) for job in suspects)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic-collector passes meanwhile: they walk the whole growing heap of results."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def run_deferred(todo: Iterable[Job], workers: int, project: Project) -> list[FileResult]:
    """A big run in two passes (see ``rocmlint/project``): every file is read once by the
    first pool, which finishes the files no rule needs the model for and summarises all for
    it; the model is built from those summaries, and a pool forked after it checks the rest."""
    jobs: dict[Path, Job] = {}

    def remembered() -> Iterator[Job]:
        for job in todo:
            jobs[job.target.path] = job
            yield job

    project.deferring = True
    try:
        first = run_parallel(remembered(), workers, while_waiting=project.warm_up)
    finally:
        project.deferring = False
    with collector_paused():  # the model: many allocations, nothing cyclic to free
        for result in first:
            if result.summaries:
                project.take_summaries(result.summaries, result.path)
                result.summaries = None
        project.before_fork()  # the model, from the workers' summaries
    done: list[FileResult] = []
    waiting: list[Job] = []
    for result in first:
        if result.deferred:
            waiting.append(jobs[result.path])
        else:
            done.append(result)
    if len(waiting) >= PARALLEL_THRESHOLD:
        # The files with anchors are few and uneven (one table of 1 MB): largest first, in
        # small batches, so no worker is left with a big file at the end.
        waiting.sort(key=_size, reverse=True)
        done.extend(run_parallel(waiting, workers, batch_size=2))
    else:
        done.extend(run_job(job) for job in waiting)
    return done


def _size(job: Job) -> int:
    try:
        return job.target.path.stat().st_size
    except OSError:
        return 0


def run_alone(job: Job) -> FileResult:
    """``run_job`` in a forked process of its own; a process that dies is an internal error."""
    import signal
    from multiprocessing import get_context

    context = get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_send_result, args=(job, send))
    process.start()
    send.close()
    try:
        result: FileResult | None = receive.recv()
    except EOFError:
        result = None
    process.join()
    if result is not None:
        return result
    code = process.exitcode or 0
    how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
    return crashed(job, f"the worker process died ({how}) while checking this file")


def _start_worker() -> None:
    """A worker does not die on Ctrl-C (no traceback of its own): it finishes the file in
    hand and its batch stops there (``run_batch``). Its cyclic collector runs once per file,
    not every 700 allocations: parsing allocates an AST node at a time (15% of the run)."""
    import signal

    signal.signal(signal.SIGINT, _note_interrupt)
    gc.disable()


_interrupted = False


def _note_interrupt(_signum, _frame) -> None:
    global _interrupted
    _interrupted = True


def _send_result(job: Job, connection) -> None:
    connection.send(run_job(job))
    connection.close()


def prepared_project(root: Path, settings, cache_dir: Path | None, compile_commands: str = "") -> Project:
    """The project model at ``root`` for the languages the selected rules need (each part is
    built on first use). Raises ConfigError for a compile database that cannot be used."""
    from .engine import selected_languages

    project = Project(root, settings, cache_dir=cache_dir, compile_commands=compile_commands)
    project.prepare(sorted(selected_languages(settings.select, settings.ignore)))  # also rules reading other halves
    return project


def usable_cpus() -> int:
    """CPUs this process may run on (a container's or taskset's limit, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def run(targets: Iterable[Target], mode: str = "check", *, unsafe: bool = False, use_cache: bool = True,
        jobs: int | None = None, cache_dir: Path | None = None, project: Project | None = None,
        build_fixes: bool = True) -> list[FileResult]:
    """Results for every target, sorted by path. ``targets`` may be a generator: discovery
    then overlaps with the workers. ``project`` (already prepared) is what rules see as
    ``ctx.project``; it is activated before the pool forks. ``build_fixes=False`` (a report
    that only counts fixes) spares building fix edits nothing applies or prints.

    ``targets`` may offer ``claim_included(pairs)`` (``discovery.Discovery``): the files
    the checked C-family files include that no language claimed by name are checked next,
    until no new one is included."""
    activate(project)
    cache = Cache(cache_dir or default_cache_dir()) if (use_cache and mode == "check") else None
    options = _RunOptions(mode, unsafe, build_fixes, jobs or usable_cpus(), cache, project)
    results = _run_targets(targets, options)
    claim = getattr(targets, "claim_included", None)
    latest = results
    while claim is not None:
        included = claim((r.path, r.includes) for r in latest if r.includes)  # read only when files wait
        if not included:
            break
        latest = _run_targets(included, options)
        results.extend(latest)
    if cache is not None:
        cache.save()
    results.sort(key=lambda r: r.display)
    return results


@dataclass(frozen=True)
class _RunOptions:
    mode: str
    unsafe: bool
    build_fixes: bool
    jobs: int
    cache: Cache | None
    project: Project | None


def _rule_sets(first: list[Job]) -> list[tuple[str, tuple]]:
    """The rule selections the jobs will use: the first jobs', and every language's for their
    settings (a tree's C++ files may all come after the first jobs)."""
    sets = [(job.language, job.rules) for job in first]
    for settings in {id(job.target.settings): job.target.settings for job in first}.values():
        sets += [(language, active_rules(settings, language))
                 for language in selected_languages(settings.select, settings.ignore)]
    return sets


def _run_targets(targets: Iterable[Target], options: _RunOptions) -> list[FileResult]:
    mode, unsafe, build_fixes, cache, project = (options.mode, options.unsafe, options.build_fixes,
                                                 options.cache, options.project)
    results: list[FileResult] = []
    base_keys: dict[Path, tuple[str, str]] = {}  # path -> (cache key without the model, language)
    file_facts: dict[tuple[str, str], str] = {}  # this run's stat of each file a stored result read

    def pending() -> Iterator[Job]:
        for target in targets:
            language = target.language or language_for(target.display) or language_for(target.path, sniff=True)
            if language is None:
                continue
            rules = active_rules(target.settings, language, target.path)
            if not rules:
                continue  # e.g. --select ROC1 and a C++ header: nothing to do
            if cache is not None:
                key = target.settings.fingerprint + ("" if build_fixes else "-unbuilt-fixes")
                if project is not None and not project.is_lazy(language):
                    key += project.fingerprint_for(target.path, language)  # e.g. a manifest's neighbours
                base_keys[target.path] = (key, language)
                cached = cache.lookup(target.path, key)  # a result no model fact went into
                if cached is None and project is not None and cache.stored_key(target.path).startswith(key + MODEL_KEY):
                    cached = cache.lookup(target.path, key + MODEL_KEY + project.fingerprint_for(target.path, language))
                if cached is not None and project is not None and not project.facts_hold(
                        target.path, cache.facts(target.path), file_facts):
                    cached = None  # another file's fact it read has changed
                if cached is not None:
                    results.append(FileResult(path=target.path, display=target.display, findings=cached,
                                              includes=cache.includes(target.path),
                                              set_aside=cache.set_aside(target.path),
                                              unjudged_extents=cache.unjudged_extents(target.path),
                                              cache_stamp=cache.stamp(target.path)))
                    continue
            yield Job(target, language, rules, mode, unsafe, cache is not None, build_fixes)

    todo = pending()
    first = list(itertools.islice(todo, PARALLEL_THRESHOLD))
    every_job = itertools.chain(first, todo)  # the whole queue, whichever path runs it
    jobs = options.jobs
    if jobs > 1 and len(first) == PARALLEL_THRESHOLD:
        prepare_rules(_rule_sets(first))  # once here, not in each worker
        # A warm cache holds results that used the model: it is built first (it is cached
        # too), and only the files that changed are checked, in one pass.
        if project is not None and (cache is None or not cache.holds(MODEL_KEY)) and project.can_defer():
            fresh = run_deferred(every_job, jobs, project)
        else:
            if project is not None:
                with collector_paused():
                    project.before_fork()  # lazy parts are built once here and shared by the workers
            fresh = run_parallel(every_job, jobs)
    else:
        fresh = run_in_process(every_job)
    if cache is not None:
        for result in fresh:
            if result.content_hash is not None:
                try:
                    st = result.path.stat()
                except OSError:
                    continue
                key, language = base_keys[result.path]
                if project is not None and language in result.parts_used and project.is_lazy(language):
                    key += MODEL_KEY + project.fingerprint_for(result.path, language)  # the facts it used
                cache.store(result.path, key, result.content_hash, st.st_mtime_ns, st.st_size, result.findings,
                            result.includes, result.facts, result.set_aside, result.unjudged_extents)
                result.cache_stamp = cache.stamp(result.path)
    results.extend(fresh)
    return results
