"""The <<<...>>> rewrite of verify --run: launches become calls, lines stay where they were."""
from __future__ import annotations

import pytest

from rocmlint.verify.launch_syntax import LaunchSyntaxError, code_mask, rewrite_launches

PREFIX = "::rocmlint_exec::launch("


def test_plain_launch_keeps_its_arguments_in_place():
    text, count = rewrite_launches("  scale<<<grid, block>>>(d_x, 2.0f);\n")
    assert count == 1
    assert text == (f'  {PREFIX}"scale", ::rocmlint_exec::Site::here(), [&](auto&&... rocmlint_args) '
                    "{ scale(rocmlint_args...); }, grid, block)(d_x, 2.0f);\n")


def test_template_and_qualified_kernels_keep_their_names_and_arguments():
    text, count = rewrite_launches("ns::reduce<float, 4><<<dim3(n / 256), 256, 0, stream>>>(in, out);")
    assert count == 1
    assert '"ns::reduce<float, 4>"' in text
    assert "{ ns::reduce<float, 4>(rocmlint_args...); }, dim3(n / 256), 256, 0, stream)(in, out);" in text
    assert rewrite_launches("::k<<<1, 1>>>();")[0].startswith(f'{PREFIX}"::k"')


def test_lines_are_kept_for_multi_line_launches():
    source = "void f() {\n  compact\n      <<<blocks,\n         threads>>>(in,\n                    out);\n}\n// end\n"
    text, count = rewrite_launches(source)
    assert count == 1
    assert text.count("\n") == source.count("\n")
    assert text.splitlines()[-1] == "// end"
    assert "threads)(in," in text


def test_launches_in_comments_and_strings_are_left_alone():
    source = ('// k<<<1, 1>>>() in a comment\nconst char* s = "k<<<1, 1>>>()";\n/* k<<<2, 2>>>() */\n'
              "char c = '<'; k<<<3, 3>>>(c);\n")
    text, count = rewrite_launches(source)
    assert count == 1
    assert text.count("<<<") == 3 and "3, 3)(c);" in text


def test_nested_templates_are_not_launch_ends():
    source = "std::vector<std::pair<int, std::vector<int>>> v;\nk<<<f(std::max<int>(1, n)), 64>>>(v.data());\n"
    text, count = rewrite_launches(source)
    assert count == 1
    assert text.startswith("std::vector<std::pair<int, std::vector<int>>> v;\n")
    assert "f(std::max<int>(1, n)), 64)(v.data());" in text


def test_code_mask_skips_raw_strings_and_digit_separators():
    source = 'auto s = R"x(k<<<1,1>>>())x"; int n = 1\'000; k<<<1, 1>>>();'
    mask = code_mask(source)
    assert not mask[source.index("k<<<1,1")]
    assert mask[source.rindex("k<<<")]
    assert rewrite_launches(source)[1] == 1


@pytest.mark.parametrize("source, message", [
    ("k<<<1, 1;\n", "no '>>>' closes this '<<<'"),
    ("x = 1 + <<<1, 1>>>();\n", "cannot read the kernel"),
])
def test_unreadable_launches_name_their_line(source, message):
    with pytest.raises(LaunchSyntaxError) as caught:
        rewrite_launches("int a;\n" + source)
    assert caught.value.line == 2 and message in str(caught.value)


def test_text_without_launches_is_returned_unchanged():
    source = "int x = a << b; // <<\n"
    assert rewrite_launches(source) == (source, 0)
