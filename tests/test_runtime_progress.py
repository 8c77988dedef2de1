"""The terminal progress bar (lego_build.runtime.progress)."""
import io

from lego_build.runtime.progress import Progress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_bar_on_a_terminal_counts_and_clears():
    out = Tty()
    bar = Progress("map", 4, stream=out, width=8)
    bar.step("conv1")
    bar.step("conv2")
    text = out.getvalue()
    assert "\rmap [##......] 1/4" in text and "\rmap [####....] 2/4" in text and "conv2" in text
    bar.close()
    assert out.getvalue().endswith("\r")


def test_no_output_when_not_a_terminal():
    out = io.StringIO()
    bar = Progress("map", 3, stream=out)
    for _ in range(3):
        bar.step("x")
    bar.close()
    assert out.getvalue() == "" and bar.done == 3
