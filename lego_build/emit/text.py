"""Verilog text of a Veriloggen module, byte for byte what ``Module.to_verilog()`` prints, faster.

Veriloggen prints through Pyverilog's ``ASTCodeGenerator``, which renders one Jinja template per
AST node: about 44,000 renders for the default design, 60 % of the emit stage's time. Most of
those templates are plain text with ``{{ name }}`` fields (an identifier, a constant, an operator,
a bit select, an assignment): :class:`FastCodeGenerator` renders those by string concatenation,
and the four most frequent templates with conditions (``wire``, ``reg``, a non-blocking
assignment, a port argument) by code that follows each template's text; every other node
still goes through its Jinja template. ``tests/test_emit_text.py`` prints every module of real
designs both ways and compares the bytes.
"""
from __future__ import annotations

import re

import pyverilog.vparser.ast as vast
from pyverilog.ast_code_generator.codegen import ASTCodeGenerator, del_paren, escape, indent_multiline_assign

#: a template of literal text and ``{{ name }}`` fields only
_PLAIN = re.compile(r"(?:[^{}]|\{\{ \w+ \}\})*")
_FIELD = re.compile(r"\{\{ (\w+) \}\}")


class _Plain:
    """A field-only template: ``render(d)`` joins the literals with ``str`` of each field, as
    Jinja does (no autoescape, no finalize; the one trailing newline of the source dropped)."""

    def __init__(self, source: str):
        if source.endswith("\n"):
            source = source[:-1]
        parts = _FIELD.split(source)
        self.literals, self.fields = parts[0::2], parts[1::2]

    def render(self, values: dict) -> str:
        out = [self.literals[0]]
        for name, lit in zip(self.fields, self.literals[1:]):
            out.append(str(values[name]))
            out.append(lit)
        return "".join(out)


class FastCodeGenerator(ASTCodeGenerator):
    """``ASTCodeGenerator`` with its field-only templates rendered by :class:`_Plain`."""

    def get_template(self, filename):
        if filename not in self.template_cache:
            source, _, _ = self.env.loader.get_source(self.env, filename)
            self.template_cache[filename] = _Plain(source) if _PLAIN.fullmatch(source) \
                else self.env.get_template(filename)
        return self.template_cache[filename]

    def _net(self, kind: str, node) -> str:
        # wire.txt / reg.txt: {kind} {signed }{width }{name}{ dimensions};
        out = [kind, " "]
        if node.signed:
            out.append("signed ")
        if node.width is not None:
            width = self.visit(node.width)
            if width != "":
                out += [width, " "]
        out.append(escape(node.name))
        if node.dimensions is not None:
            dims = self.visit(node.dimensions)
            if dims != "":
                out += [" ", dims]
        out.append(";")
        return "".join(out)

    def visit_Wire(self, node):
        return self._net("wire", node)

    def visit_Reg(self, node):
        return self._net("reg", node)

    def visit_NonblockingSubstitution(self, node):
        # {ldelay }{left} <= {rdelay }{right};
        left, right = self.visit(node.left), self.visit(node.right)
        ldelay = "" if node.ldelay is None else self.visit(node.ldelay)
        rdelay = "" if node.rdelay is None else self.visit(node.rdelay)
        text = "".join([f"{ldelay} " if ldelay != "" else "", left, " <= ", f"{rdelay} " if rdelay != "" else "",
                        right, ";"])
        return indent_multiline_assign(text)

    def visit_PortArg(self, node):
        # .{portname}({argname}), or {argname} without a port name
        portname = "" if node.portname is None else escape(node.portname)
        argname = "" if node.argname is None else del_paren(self.visit(node.argname))
        return f".{portname}({argname})" if portname != "" else argname


def verilog_text(module) -> str:
    """What ``module.to_verilog()`` returns (Veriloggen's ``write_verilog`` with
    :class:`FastCodeGenerator`; submodules instantiated as stubs print their stub code)."""
    from veriloggen.core.module import StubModule
    from veriloggen.verilog.to_verilog import VerilogModuleVisitor

    obj = module.to_hook_resolved_obj()
    visitor = VerilogModuleVisitor(False)
    modules = tuple(obj.get_modules().values())
    asts = [visitor.visit(m) for m in modules if not isinstance(m, StubModule)]
    main = FastCodeGenerator().visit(vast.Source(None, vast.Description(asts)))
    return "".join([main] + [m.get_code() for m in modules if isinstance(m, StubModule)])
