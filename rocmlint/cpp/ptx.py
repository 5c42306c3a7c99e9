"""Inline PTX: reading ``asm`` statements from the text and the idioms with a HIP
equivalent (ROC301).

The statement is read from the text, not the tree, so ROC301 needs no parse. Only PTX is
PTX: asm labels that name LLVM intrinsics (``__asm("llvm.amdgcn.raw.buffer.atomic.add.i32")``),
AMD GCN assembly (``s_waitcnt``, ``v_mov_b32``), host x86 assembly and the dotted
mnemonics of other ISAs (RISC-V ``mov.m.x m0, x0``) are not.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..lazy_re import lazy_compile
from ..model import Span

# PTX ISA opcodes (the part before the first '.'). PTX spells nearly every instruction with
# a type or state-space suffix (``mov.u32``, ``ld.global``), which sets it apart from x86
# (``movl``, ``mov``) and GCN (``v_mov_b32``) assembly.
PTX_OPCODES = frozenset("""
abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev
brx call clz cnot copysign cos cp createpolicy cvt cvta discard div dp2a dp4a elect ex2 fence
fma fns getctarank griddepcontrol isspacep istypeof ld ldmatrix ldu lg2 lop3 mad mad24 madc
mapa match max mbarrier membar min mma mov movmatrix mul mul24 multimem nanosleep neg not or
pmevent popc prefetch prefetchu prmt rcp red redux rem rsqrt sad selp set setmaxnreg setp shf
shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix sub subc suld suq sured sust
szext tanh tcgen05 tensormap testp tex tld4 txq vabsdiff vadd vmad vmax vmin vote vset vshl
vshr vsub wgmma wmma xor
""".split())
# What follows a PTX opcode's dots: types, state spaces and modifiers. Other ISAs
# spell dotted mnemonics too (RISC-V vector extensions: ``mov.m.x``, ``flw.ps``); their
# suffixes are not these.
PTX_SUFFIXES = frozenset("""
u8 u16 u32 u64 s8 s16 s32 s64 b8 b16 b32 b64 b128 f16 f16x2 bf16 bf16x2 f32 f64 tf32 e4m3 e5m2 pred
global shared local const param tex cluster cta gpu sys gl
sync aligned async bulk acquire release relaxed acq_rel volatile weak sc mmio proxy mbarrier_init
sp pack red f32x2 tensormap v2 v4 v8 u16x2 s16x2 e4m3x2 e5m2x2 e2m1x2 e2m1 ue8m0 ue8m0x2 s4 u4 b1
approx full rn rz rm rp rni rzi rmi rpi ftz sat wide hi lo cc uni
eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan and or xor
up down bfly idx any all ballot clamp wrap l r inc dec
to init arrive arrive_drop try_wait test_wait expect_tx complete_tx inval
fence mma_async commit_group wait_group wait_all wait_group_read ca cg cs cv lu nc L1 L2 level
finite infinite number notanumber normal subnormal mask fractional launch_dependents wait
reduce ld_reduce st alloc dealloc relinquish_alloc_permit shift cp ld commit replace
fp16 1d 2d 3d a1d a2d b p r g a width height depth texref samplerref surfref
""".split())
# State spaces and special registers only PTX has.
_PTX_DIRECTIVE = lazy_compile(r"^\.(?:reg|pred|shared|local|param|global|const)\b")
_SPECIAL_REGISTER = lazy_compile(
    r"%%?(?:laneid|warpid|nwarpid|smid|nsmid|gridid|lanemask_(?:eq|le|lt|ge|gt)|clock(?:64)?|"
    r"globaltimer(?:_lo|_hi)?|ntid|nctaid|ctaid|tid|clusterid|cluster_ctarank|dynamic_smem_size)\b"
)
_INSTRUCTION = lazy_compile(r"^(?:@!?%*\w+\s+)?([a-z][a-z0-9]*)((?:\.[\w:]+)+)")
_LABEL = lazy_compile(r"^\$?\w+:\s*")
# Escapes inside the template's string literals; line breaks become spaces.
_ESCAPES = {"n": " ", "t": " ", "r": " ", "\\": "\\", '"': '"', "'": "'", "\n": ""}
# Tokens that matter when walking an asm statement: literals and comments are skipped whole.
_TOKEN = lazy_compile(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/|[():,]', re.DOTALL)
# An asm statement longer than this is broken input: read no further.
_MAX_ASM_BYTES = 64 * 1024


@dataclass(frozen=True)
class AsmStatement:
    span: Span  # the ``asm`` keyword to its closing parenthesis (to the line end if unclosed)
    template: str  # the assembly text, literals joined, whitespace collapsed
    operand_pieces: tuple[bytes, ...]  # ``"=r"(x)`` texts of the outputs, then the inputs
    closed: bool

    @property
    def operands(self) -> list[str]:
        """Operand expressions in PTX numbering: outputs, then inputs."""
        return [expr for piece in self.operand_pieces if (expr := _operand_expression(piece)) is not None]


def read_asm(source: bytes, keyword: int) -> AsmStatement | None:
    """The ``asm``/``__asm__`` statement whose keyword starts at ``keyword``."""
    paren = source.find(b"(", keyword)
    if paren < 0:
        return None
    limit = min(len(source), paren + _MAX_ASM_BYTES)
    sections: list[list[bytes]] = [[]]  # per ':' section, its top-level pieces (comma split)
    pieces: list[bytes] = []
    piece_start = paren + 1
    depth = 0
    end = -1
    for match in _TOKEN.finditer(source, paren, limit):
        token = match.group()
        if token == b"(":
            depth += 1
        elif token == b")":
            depth -= 1
            if depth == 0:
                end = match.end()
                pieces.append(source[piece_start : match.start()])
                sections[-1].extend(pieces)
                break
        elif depth == 1 and token in (b":", b","):
            pieces.append(source[piece_start : match.start()])
            piece_start = match.end()
            if token == b":":
                sections[-1].extend(pieces)
                sections.append([])
                pieces = []
    if end < 0:
        line_end = source.find(b"\n", keyword)
        span = Span(keyword, line_end if line_end >= 0 else len(source))
        return AsmStatement(span, _literal_text(source[paren + 1 : span.end]), (), False)
    template = _literal_text(b" ".join(sections[0]))
    pieces_out = tuple(piece for section in sections[1:3] for piece in section)
    return AsmStatement(Span(keyword, end), template, pieces_out, True)


def _literal_text(chunk: bytes) -> str:
    """The contents of the string literals in ``chunk``, concatenated, whitespace collapsed."""
    text = chunk.decode("utf-8", "replace")
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', text, re.DOTALL)
    joined = "".join(parts)  # a literal never ends inside an escape: unescape once
    if "\\" in joined:
        joined = _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), joined)
    return " ".join(joined.split())


_ESCAPE = lazy_compile(r"\\(.)", re.DOTALL)


def _operand_expression(piece: bytes) -> str | None:
    """``[name] "=r"(expr)`` -> ``expr``."""
    text = piece.decode("utf-8", "replace").strip()
    start = text.find("(")
    if start < 0 or not text.endswith(")"):
        return None
    return " ".join(text[start + 1 : -1].split())


def is_ptx(template: str) -> bool:
    """Whether an assembly template is PTX (an instruction with a PTX opcode and suffix,
    a PTX state-space declaration, or a PTX special register)."""
    if _SPECIAL_REGISTER.search(template):
        return True
    for statement in re.split(r"[;{}\n]", template):
        statement = _LABEL.sub("", statement.strip())
        if _PTX_DIRECTIVE.match(statement):
            return True
        match = _INSTRUCTION.match(statement)
        if match and match.group(1) in PTX_OPCODES and \
                not PTX_SUFFIXES.isdisjoint(re.split(r"\.|::", match.group(2))):
            return True
    return False


# (template regex, HIP statement with {N} = operand N); operands number outputs first.
IDIOMS = (
    (re.compile(r"^mov\.u32 %0, ?%%laneid;?$"), "{0} = __lane_id();", "%laneid"),
    (re.compile(r"^ld\.global\.nc\.\w+ %0, ?\[%1\];?$"), "{0} = __ldg({1});", "ld.global.nc"),
    (re.compile(r"^prmt\.b32 %0, ?%1, ?%2, ?%3;?$"), "{0} = __byte_perm({1}, {2}, {3});", "prmt.b32"),
    (re.compile(r"^shfl\.sync\.bfly\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl_xor({1}, {2});", "shfl.sync.bfly"),
    (re.compile(r"^shfl\.sync\.down\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl_down({1}, {2});", "shfl.sync.down"),
    (re.compile(r"^shfl\.sync\.up\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl_up({1}, {2});", "shfl.sync.up"),
    (re.compile(r"^shfl\.sync\.idx\.b32 %0, ?%1, ?%2, ?%3, ?%4;?$"), "{0} = __shfl({1}, {2});", "shfl.sync.idx"),
    (re.compile(r"^membar\.gl;?$"), "__threadfence();", "membar.gl"),
    (re.compile(r"^bar\.sync 0;?$"), "__syncthreads();", "bar.sync 0"),
)


def hip_equivalent(asm: AsmStatement) -> tuple[str, str] | None:
    """(HIP statement, idiom name) for a known PTX idiom, else None."""
    for regex, replacement, idiom in IDIOMS:
        if regex.match(asm.template):
            try:
                return replacement.format(*asm.operands), idiom
            except IndexError:
                return None
    return None
