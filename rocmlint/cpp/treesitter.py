"""tree-sitter parsers, created once per process and only when a file needs parsing."""
from __future__ import annotations

from functools import lru_cache

# CUDA's grammar parses ``k<<<g, b>>>(x)``, which tree-sitter-cpp silently misreads; .cu,
# .cuh and .hip files launch kernels the same way.


@lru_cache(maxsize=None)
def _parser(grammar: str):
    import tree_sitter

    if grammar == "cuda":
        import tree_sitter_cuda

        language = tree_sitter_cuda.language()
    else:
        import tree_sitter_cpp

        language = tree_sitter_cpp.language()
    return tree_sitter.Parser(tree_sitter.Language(language))


# C and C++ files by name; anything else read as C-family (an included ``.inc``, a file the
# configuration's ``extension`` maps) gets CUDA's grammar, a superset of C++'s.
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".c", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tcc", ".tpp")


def grammar_for(path: str) -> str:
    return "cpp" if path.lower().endswith(CPP_SUFFIXES) else "cuda"


def parse(source: bytes, path: str):
    """The tree of ``source``; the last one is kept, since --fix parses the buffer it
    has just analysed again to count its syntax errors."""
    return _parse(source, grammar_for(path))


@lru_cache(maxsize=1)
def _parse(source: bytes, grammar: str):
    return _parser(grammar).parse(source)


def count_errors(node) -> int:
    """ERROR and MISSING nodes below ``node``."""
    if not node.has_error:
        return 0
    count = 0
    cursor = node.walk()
    stack_done = False
    while not stack_done:
        current = cursor.node
        if current.is_error or current.is_missing:
            count += 1
        descend = current.has_error and not current.is_missing
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                stack_done = True
                break
    return count
